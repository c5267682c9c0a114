// Conditional grants against the database, on reads and writes alike, with one
// NULL semantics: a field without a value is distinct from every value, so
// `$ne: 'kg'` and `$nin: ['kg']` include a product with no unit, in lists,
// reads, updates and deletes alike (CASL in memory says the same).
import t from 'tap';
import { build } from '../../helper.ts';
import { manifestsWith } from '../../support/manifests.ts';

const grant = (code: string, conditions: object) => ({ code, description: code, grants: [{ action: ['read', 'update', 'delete'], subject: 'Product', conditions }] });
const manifestsDir = manifestsWith(t, {
  'probe.json': {
    id: 'probe',
    name: 'Probe',
    version: '1.0.0',
    dependsOn: ['catalog'],
    permissions: [grant('probe:products:ne', { unit: { $ne: 'kg' } }), grant('probe:products:nin', { unit: { $nin: ['kg', 'litre'] } })],
  },
});

const ctx = await build(t, { config: { manifestsDir } });
const tenant = await ctx.tenant();
let seq = 0;
const create = async (unit: string | null) => {
  const res = await ctx.as(tenant.adminToken, { method: 'POST', url: '/api/products', payload: { sku: `U-${++seq}`, name: `unit ${unit}`, price: '1.00', unit } });
  if (res.statusCode !== 201) throw new Error(res.body);
  return res.json().id as string;
};
const kg = await create('kg');
const piece = await create('piece');

for (const code of ['probe:products:ne', 'probe:products:nin']) {
  t.test(code, async (t) => {
    const none = await create(null);
    const user = await ctx.user(tenant, { codes: [code] });
    const as = (method: 'GET' | 'PATCH' | 'DELETE', url: string, payload?: object) => ctx.as(user.token, { method, url, payload });
    const listed = (await as('GET', '/api/products?size=1000')).json().items.map((p: { id: string }) => p.id);
    t.ok(listed.includes(piece) && listed.includes(none), 'lists a piece and a product with no unit');
    t.notOk(listed.includes(kg), 'not a kg product');
    t.equal((await as('GET', `/api/products/${none}`)).statusCode, 200, 'reads the product with no unit');
    t.equal((await as('GET', `/api/products/${kg}`)).statusCode, 404, 'a kg product does not exist for them');
    const patched = await as('PATCH', `/api/products/${none}`, { stock: 3 });
    t.equal(patched.statusCode, 200, `updates the product with no unit: ${patched.body}`);
    t.equal((await as('PATCH', `/api/products/${kg}`, { stock: 3 })).statusCode, 404, 'not a kg product');
    const moved = await as('PATCH', `/api/products/${none}`, { unit: 'kg' });
    t.equal(moved.statusCode, 403, 'nor moves a row out of their reach');
    t.equal(moved.json().code, 'FORBIDDEN');
    t.equal((await as('DELETE', `/api/products/${none}`)).statusCode, 204, 'deletes the product with no unit');
  });
}
