// The shape of list items: fields= (with field rules) and include= (embedded
// rows read with the caller's rights: another company's row, or one their grant
// conditions hide, is embedded as null). Nested lists take no path parameter
// from the query.
import t from 'tap';
import { build } from '../../helper.ts';
import { manifestsWith } from '../../support/manifests.ts';
import { catalogApi, expectProblem, expectStatus } from './catalog-api.ts';

const manifestsDir = manifestsWith(t, {
  'probe.json': {
    id: 'probe',
    name: 'Probe',
    version: '1.0.0',
    dependsOn: ['catalog'],
    permissions: [
      // every product's public fields; categories only while active, their description hidden
      {
        code: 'probe:shape:public',
        description: 'public fields, active categories',
        grants: [
          { action: 'read', subject: 'Product', fields: ['sku', 'name', 'price', 'categoryId'] },
          { action: 'read', subject: 'Category', fields: ['name', 'isActive'], conditions: { isActive: true } },
        ],
      },
      { code: 'probe:shape:products', description: 'products only', grants: [{ action: 'read', subject: 'Product' }] },
    ],
  },
});

const ctx = await build(t, { config: { manifestsDir } });
const tenant = await ctx.tenant();
const { api, product, category } = catalogApi(ctx, tenant.adminToken);
const active = await category({ name: 'Active tools', description: 'the good ones' });
const retired = await category({ name: 'Retired tools', isActive: false });
const hammer = await product({ sku: 'S-1', name: 'Hammer', price: '9.50', stock: 5, categoryId: active.id });
const saw = await product({ sku: 'S-2', name: 'Saw', price: '19.00', stock: 2, categoryId: retired.id });
const file = await product({ sku: 'S-3', name: 'File', price: '4.00' });
const list = async (query: string, token = tenant.adminToken, headers: Record<string, string> = {}) =>
  expectStatus(await ctx.as(token, { method: 'GET', url: `/api/products?search=S-&sort=sku&${query}`, headers }), 200, query);

t.test('fields= keeps the fields named, and id', async (t) => {
  const body = await list('fields=sku,price');
  t.same(body.items, [
    { id: hammer.id, sku: 'S-1', price: '9.50' },
    { id: saw.id, sku: 'S-2', price: '19.00' },
    { id: file.id, sku: 'S-3', price: '4.00' },
  ]);
  t.equal(body.total, 3);
  const withKernel = await list('fields=version,companyId,createdAt,name');
  t.same(Object.keys(withKernel.items[0]).sort(), ['companyId', 'createdAt', 'id', 'name', 'version']);
  const translated = await list('fields=sku&translations=true');
  t.same(Object.keys(translated.items[0]).sort(), ['id', 'sku', 'translations'], 'translations come when asked for');
});

t.test('fields= cannot reveal what field rules hide', async (t) => {
  const user = await ctx.user(tenant, { codes: ['probe:shape:public'] });
  const body = await list('fields=sku,stock', user.token);
  t.same(
    body.items.map((p: { stock: unknown }) => p.stock),
    [null, null, null],
    'stock stays hidden',
  );
});

t.test('filters and sorts cannot tell what field rules hide', async (t) => {
  const user = await ctx.user(tenant, { codes: ['probe:shape:public'] });
  const skus = async (query: string, token = user.token) => (await list(query, token)).items.map((p: { sku: string }) => p.sku);
  t.same(await skus('isActive=true', tenant.adminToken), ['S-1', 'S-2', 'S-3'], 'the administrator filters on isActive');
  t.same(await skus('isActive=true'), [], 'a hidden value matches no value');
  t.same(await skus('unit[in]=piece'), []);
  t.same(await skus('unit[isNull]=true'), ['S-1', 'S-2', 'S-3'], 'it reads as no value');
  t.same(await skus('price[gte]=9'), ['S-1', 'S-2'], 'a visible field filters as usual');
  const sorted = async (sort: string, token = user.token) =>
    expectStatus(await ctx.as(token, { method: 'GET', url: `/api/products?search=S-&sort=${sort}` }), 200, sort).items.map((p: { sku: string }) => p.sku);
  t.same(await sorted('-stock', tenant.adminToken), ['S-1', 'S-2', 'S-3']);
  t.same(await sorted('stock', tenant.adminToken), ['S-3', 'S-2', 'S-1']);
  const byId = [hammer, saw, file].sort((a, b) => (a.id < b.id ? -1 : 1)).map((p) => p.sku);
  t.same(await sorted('stock'), byId, 'sorting by a hidden field orders by id alone');
  t.same(await sorted('-stock'), byId);
});

t.test('bad fields= and include= are a 400 naming the parameter', async (t) => {
  for (const [query, path] of [
    ['fields=bogus', '/fields'],
    ['fields=sku,', '/fields'],
    ['fields=translations', '/fields'],
    ['fields=sku%20', '/fields'],
    [`fields=${'a,'.repeat(1000)}a`, '/fields'],
    ['include=sku', '/include'],
    ['include=category', '/include'],
    ['include=bogus', '/include'],
  ]) {
    const res = await api('GET', `/api/products?${query}`);
    expectProblem(t, res, 400, 'VALIDATION_FAILED', query);
    t.ok(
      res.json().errors?.some((e: { path: string }) => e.path === path),
      `${query} names ${path}`,
    );
  }
});

t.test('include= embeds the referenced row as a read of it shows it', async (t) => {
  const body = await list('include=categoryId');
  const [h, s, f] = body.items;
  const direct = expectStatus(await api('GET', `/api/categories/${active.id}`), 200, 'read category');
  t.same(h._embedded, { category: direct });
  t.equal(s._embedded.category.id, retired.id);
  t.same(f._embedded, { category: null }, 'no reference: null');
  const cut = await list('include=categoryId&fields=sku');
  t.same(cut.items[0], { id: hammer.id, sku: 'S-1', _embedded: { category: direct } }, 'with fields=');
  const german = await list('include=categoryId', tenant.adminToken, { 'accept-language': 'de' });
  t.equal(german.items[0]._embedded.category.name, 'Active tools', 'text in the best language held');
});

t.test('a row the caller cannot read is embedded as null', async (t) => {
  const user = await ctx.user(tenant, { codes: ['probe:shape:public'] });
  const body = await list('include=categoryId', user.token);
  t.match(body.items[0]._embedded.category, { id: active.id, name: 'Active tools', description: null }, 'field rules of the category hold');
  t.equal(body.items[1]._embedded.category, null, 'an inactive category is hidden by the grant condition');
  t.equal((await ctx.as(user.token, { method: 'GET', url: `/api/categories/${retired.id}` })).statusCode, 404, 'as a direct read is');
  const productsOnly = await ctx.user(tenant, { codes: ['probe:shape:products'] });
  const none = await list('include=categoryId', productsOnly.token);
  t.same(
    none.items.map((p: { _embedded: unknown }) => p._embedded),
    [{ category: null }, { category: null }, { category: null }],
    'no grant on categories: every one null',
  );
});

t.test('another company: its rows are neither listed nor embedded', async (t) => {
  const other = await ctx.company(tenant, 'OTHER');
  const both = await ctx.user(tenant, { codes: ['erp:catalog:manage'], companies: [tenant.companyId, other] });
  const there = { 'x-company-id': other };
  const foreign = expectStatus(await ctx.as(both.token, { method: 'POST', url: '/api/categories', payload: { name: 'Foreign' }, headers: there }), 201, 'category of the other company');
  // a reference no API write can make (it must point into the writer's company): set in the database
  const tt = ctx.kernel.tenants.cached(tenant.id)!;
  const conn = ctx.kernel.dbs.get(tt.connectionKey).em.getConnection();
  await conn.execute(`update "${tt.schema}"."${ctx.kernel.model('Product').table}" set category_id = ? where id = ?`, [foreign.id, file.id]);
  const body = await list('include=categoryId');
  t.equal(body.items[2].categoryId, foreign.id);
  t.equal(body.items[2]._embedded.category, null, "another company's category is not embedded");
  t.equal((await list('include=categoryId', both.token)).items[2]._embedded.category, null, 'not even for a member of both companies, from the first one');
  const inOther = await list('include=categoryId', both.token, there);
  t.equal(inOther.total, 0, "none of the first company's products");
  const stranger = await ctx.tenant();
  const elsewhere = expectStatus(await ctx.as(stranger.adminToken, { method: 'GET', url: '/api/products?search=S-&include=categoryId' }), 200, 'another tenant');
  t.equal(elsewhere.total, 0, 'another tenant sees none');
});

t.test('nested lists take their path parameters from the path only', async (t) => {
  const doc = (await ctx.app.inject({ method: 'GET', url: '/api-docs/json' })).json();
  const repeated: string[] = [];
  for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, { parameters?: { name: string; in: string }[] }>>)) {
    const op = item.get;
    if (!op) continue;
    const inPath = new Set((op.parameters ?? []).filter((p) => p.in === 'path').map((p) => p.name));
    for (const p of op.parameters ?? []) if (p.in === 'query' && inPath.has(p.name.replace(/\[.*$/, ''))) repeated.push(`${path} ?${p.name}`);
  }
  t.same(repeated, [], 'no query parameter repeats a path parameter');
  const quote = doc.paths['/api/crm/quotes/{quoteId}/lines']?.get;
  t.ok(quote, 'the quote lines list is documented');
  const group = (await api('POST', '/api/groups', { name: 'Shape group' })).json();
  const res = await api('GET', `/api/groups/${group.id}/members?groupId=${group.id}`);
  expectProblem(t, res, 400, 'VALIDATION_FAILED', 'groupId in the query of /groups/:groupId/members');
});
