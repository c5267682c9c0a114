// Field-level rules against the database: a grant's `fields` limits it to those
// fields. A hidden field reads as null in lists, reads and write responses (the
// SQL selects null or a case expression: the value never leaves the database);
// a write naming a field the caller may not change is refused with 403 naming it.
import t from 'tap';
import { build } from '../../helper.ts';
import { manifestsWith } from '../../support/manifests.ts';

const manifestsDir = manifestsWith(t, {
  'probe.json': {
    id: 'probe',
    name: 'Probe',
    version: '1.0.0',
    dependsOn: ['catalog'],
    permissions: [
      // every product's public fields; the whole row of kg products
      {
        code: 'probe:products:public',
        description: 'public fields',
        grants: [
          { action: 'read', subject: 'Product', fields: ['sku', 'name', 'price', 'currency', 'unit'] },
          { action: 'read', subject: 'Product', conditions: { unit: 'kg' } },
        ],
      },
      // stock anywhere, price only of kg products, on create only sku, name and price
      {
        code: 'probe:products:stock',
        description: 'stock clerk',
        grants: [
          { action: 'read', subject: 'Product' },
          { action: 'update', subject: 'Product', fields: ['stock'] },
          { action: 'update', subject: 'Product', fields: ['price'], conditions: { unit: 'kg' } },
          { action: 'create', subject: 'Product', fields: ['sku', 'name', 'price'] },
        ],
      },
    ],
  },
});

const ctx = await build(t, { config: { manifestsDir } });
const tenant = await ctx.tenant();
const create = async (payload: object) => {
  const res = await ctx.as(tenant.adminToken, { method: 'POST', url: '/api/products', payload });
  if (res.statusCode !== 201) throw new Error(res.body);
  return res.json().id as string;
};
const kg = await create({ sku: 'F-KG', name: 'Flour', price: '2.50', unit: 'kg', stock: 40, attributes: { mill: 'north' } });
const piece = await create({ sku: 'F-PC', name: 'Whisk', price: '7.00', unit: 'piece', stock: 12, attributes: { steel: true } });

t.test('reads: hidden fields are null, per row where a rule is conditional', async (t) => {
  const user = await ctx.user(tenant, { codes: ['probe:products:public'] });
  const get = (url: string) => ctx.as(user.token, { method: 'GET', url });
  const whisk = (await get(`/api/products/${piece}`)).json();
  t.match(whisk, { sku: 'F-PC', name: 'Whisk', price: '7.00', unit: 'piece' }, 'the fields the grant names');
  t.equal(whisk.stock, null, 'stock hidden');
  t.equal(whisk.attributes, null, 'attributes hidden');
  const flour = (await get(`/api/products/${kg}`)).json();
  t.equal(flour.stock, 40, 'a kg product shows every field');
  t.same(flour.attributes, { mill: 'north' });
  const res = await get('/api/products?sort=sku');
  t.equal(res.statusCode, 200, res.body);
  const listed = res.json().items;
  t.same(
    listed.map((p: { sku: string; stock: number | null }) => [p.sku, p.stock]),
    [
      ['F-KG', 40],
      ['F-PC', null],
    ],
    'lists alike',
  );
});

t.test('writes: a field the caller may not change is refused, naming it', async (t) => {
  const user = await ctx.user(tenant, { codes: ['probe:products:stock'] });
  const as = (method: 'POST' | 'PATCH', url: string, payload: object) => ctx.as(user.token, { method, url, payload });
  const stocked = await as('PATCH', `/api/products/${piece}`, { stock: 13 });
  t.equal(stocked.statusCode, 200, 'stock anywhere');
  t.equal(stocked.json().stock, 13);
  const priced = await as('PATCH', `/api/products/${piece}`, { price: '8.00' });
  t.equal(priced.statusCode, 403, 'not the price of a piece product');
  t.same(priced.json().errors, [{ path: '/price', message: 'is not a field you may change here' }]);
  t.equal((await as('PATCH', `/api/products/${kg}`, { price: '2.75' })).statusCode, 200, 'the price of a kg product');
  const named = await as('PATCH', `/api/products/${kg}`, { name: 'Rye flour' });
  t.equal(named.statusCode, 403, 'never the name');
  t.same(named.json().errors, [{ path: '/name', message: 'is not a field you may change' }]);
  const mixed = await as('PATCH', `/api/products/${kg}`, { stock: 1, isActive: false });
  t.equal(mixed.statusCode, 403, 'one forbidden field refuses the whole write');
  t.equal((await ctx.as(tenant.adminToken, { method: 'GET', url: `/api/products/${kg}` })).json().stock, 40, 'and changes nothing');

  t.equal((await as('POST', '/api/products', { sku: 'N-1', name: 'New', price: '1.00' })).statusCode, 201, 'creates with the fields the grant names');
  const stockOnCreate = await as('POST', '/api/products', { sku: 'N-2', name: 'New', price: '1.00', stock: 5 });
  t.equal(stockOnCreate.statusCode, 403, 'but not with others');
  t.same(stockOnCreate.json().errors, [{ path: '/stock', message: 'is not a field you may change' }]);
});

t.test('a grant naming a field its subject lacks stops the start', async (t) => {
  const dir = manifestsWith(t, {
    'probe.json': {
      id: 'probe',
      name: 'Probe',
      version: '1.0.0',
      dependsOn: ['catalog'],
      permissions: [{ code: 'probe:products:bad', description: 'bad', grants: [{ action: 'read', subject: 'Product', fields: ['sku', 'cost'] }] }],
    },
  });
  const { loadManifests } = await import('../../../core/manifest/loader.ts');
  await t.rejects(loadManifests(dir), /probe\.json.*\/permissions\/0\/grants\/0\/fields\/1.*no field "cost" on Product/s);
});
