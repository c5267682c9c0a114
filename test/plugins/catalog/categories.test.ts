// /api/categories and /api/categories/:id: the same generated CRUD as products,
// plus what is special to categories: the parent reference and deleting a
// category that products or child categories still use.
import t from 'tap';
import { build } from '../../helper.ts';
import { catalogApi, expectProblem, expectStatus, UNKNOWN_ID } from './catalog-api.ts';

const ctx = await build(t);
const tenant = await ctx.tenant();
const { api, category, next } = catalogApi(ctx, tenant.adminToken);

t.test('create', async (t) => {
  t.test('201 with Location, ETag and defaults', async (t) => {
    const res = await api('POST', '/api/categories', { name: 'Tools' });
    t.equal(res.statusCode, 201, res.body);
    const body = res.json();
    t.equal(res.headers.location, `/api/categories/${body.id}`);
    t.equal(res.headers.etag, '"1"');
    t.same(Object.keys(body).sort(), ['companyId', 'createdAt', 'description', 'id', 'isActive', 'name', 'parentId', 'updatedAt', 'version']);
    t.match(body, { companyId: tenant.companyId, name: 'Tools', description: null, parentId: null, isActive: true, version: 1 });
  });

  t.test('with a parent of the same company', async (t) => {
    const parent = await category();
    const child = await category({ parentId: parent.id, description: 'below', isActive: false });
    t.match(child, { parentId: parent.id, description: 'below', isActive: false });
  });

  const invalid: [string, Record<string, unknown>, string][] = [
    ['no name', {}, '/name'],
    ['name null', { name: null }, '/name'],
    ['name of 121 characters', { name: 'n'.repeat(121) }, '/name'],
    ['description of 4001 characters', { name: 'x', description: 'd'.repeat(4001) }, '/description'],
    ['unknown field', { name: 'x', sku: 'A' }, '/sku'],
    ['isActive as a string', { name: 'x', isActive: 'false' }, '/isActive'],
    ['parentId not a uuid', { name: 'x', parentId: 'root' }, '/parentId'],
    ['parentId of no category', { name: 'x', parentId: UNKNOWN_ID }, '/parentId'],
    ['NUL in the name', { name: '\u0000' }, '/name'],
    ['a lone surrogate in the name', { name: '\ud800' }, '/name'],
    ['translations of an unknown field', { name: 'x', translations: { title: { en: 'x' } } }, '/translations/title'],
  ];
  for (const [what, body, path] of invalid) {
    t.test(`400 ${what}`, async (t) => {
      const res = await api('POST', '/api/categories', body);
      expectProblem(t, res, 400, 'VALIDATION_FAILED');
      t.ok(
        res.json().errors?.some((e: { path: string }) => e.path === path),
        `errors name ${path}: ${res.body}`,
      );
    });
  }

  t.test('names need not be unique', async (t) => {
    await category({ name: 'Same' });
    await category({ name: 'Same' });
    t.pass();
  });
});

t.test('list', async (t) => {
  const root = await category({ name: 'Lroot', translations: { name: { de: 'Wurzel' } } });
  const a = await category({ name: 'Lbeta', parentId: root.id });
  const b = await category({ name: 'Lalpha', parentId: root.id, isActive: false });
  const names = async (query: string, headers: Record<string, string> = {}) =>
    expectStatus(await api('GET', `/api/categories?search=L&${query}`, undefined, headers), 200, query)
      .items.map((c: { name: string }) => c.name)
      .filter((n: string) => /^L|Wurzel/.test(n));

  t.test('envelope, sort and filters', async (t) => {
    const page = expectStatus(await api('GET', '/api/categories?size=2'), 200, 'list');
    t.match(page, { page: 1, size: 2 });
    t.equal(page.items.length, 2);
    t.ok(page.total > 2);
    t.same(await names('sort=name'), ['Lalpha', 'Lbeta', 'Lroot']);
    t.same(await names('sort=-name'), ['Lroot', 'Lbeta', 'Lalpha']);
    t.same(await names('sort=-createdAt'), ['Lalpha', 'Lbeta', 'Lroot']);
    t.same(await names(`parentId=${root.id}`), ['Lalpha', 'Lbeta']);
    t.same(await names(`parentId=${root.id}&isActive=true`), ['Lbeta']);
    t.same(await names('isActive=false'), ['Lalpha']);
    t.same(await names('', { 'accept-language': 'de' }), ['Lalpha', 'Lbeta', 'Wurzel'], 'German name, sorted as shown');
    t.same((await api('GET', `/api/categories/${a.id}`)).json().parentId, root.id);
    t.ok(b.id);
  });

  t.test('search covers only searchable fields, literally', async (t) => {
    await category({ name: 'Garden 50%', description: 'unmatched description' });
    const found = expectStatus(await api('GET', '/api/categories?search=50%25'), 200, 'search');
    t.same(
      found.items.map((c: { name: string }) => c.name),
      ['Garden 50%'],
    );
    const desc = expectStatus(await api('GET', '/api/categories?search=unmatched'), 200, 'search');
    t.equal(desc.total, 0, 'description is not searchable for categories');
    const wurzel = expectStatus(await api('GET', '/api/categories?search=WURZEL'), 200, 'search');
    t.same(
      wurzel.items.map((c: { id: string }) => c.id),
      [root.id],
      'every language of the name',
    );
  });

  for (const q of [
    'sort=description',
    'sort=parentId',
    'sort=isActive',
    'price=1',
    'categoryId=' + UNKNOWN_ID,
    'parentId=x',
    'isActive=1x',
    'size=1001',
    'size=0',
    'page=0',
    'search=a&search=b',
    'parentId=' + UNKNOWN_ID + '&parentId=' + UNKNOWN_ID,
  ]) {
    t.test(`400 on ${q}`, async (t) => expectProblem(t, await api('GET', `/api/categories?${q}`), 400, 'VALIDATION_FAILED'));
  }
});

t.test('read', async (t) => {
  const c = await category({ translations: { name: { de: 'Werkzeug' } } });
  const res = await api('GET', `/api/categories/${c.id}`, undefined, { 'accept-language': 'de' });
  t.equal(res.statusCode, 200);
  t.equal(res.headers.etag, '"1"');
  t.equal(res.json().name, 'Werkzeug');
  t.equal(res.headers['content-language'], 'de');
  t.same((await api('GET', `/api/categories/${c.id}?translations=true`)).json().translations, { name: { en: c.name, de: 'Werkzeug' }, description: {} });
  expectProblem(t, await api('GET', '/api/categories/not-an-id'), 400, 'VALIDATION_FAILED');
  expectProblem(t, await api('GET', `/api/categories/${UNKNOWN_ID}`), 404, 'NOT_FOUND');
});

t.test('PUT', async (t) => {
  const parent = await category();
  const c = await category({ description: 'old', parentId: parent.id });
  const full = { name: 'Renamed', description: null, parentId: null, isActive: false };
  for (const field of Object.keys(full)) {
    const body: Record<string, unknown> = { ...full };
    delete body[field];
    const res = await api('PUT', `/api/categories/${c.id}`, body);
    expectProblem(t, res, 400, 'VALIDATION_FAILED');
    t.ok(
      res.json().errors?.some((e: { path: string }) => e.path === `/${field}`),
      `errors name /${field}`,
    );
  }
  expectProblem(t, await api('PUT', `/api/categories/${c.id}`, { ...full, isActive: 'no' }), 400, 'VALIDATION_FAILED');
  expectProblem(t, await api('PUT', `/api/categories/${c.id}`, { ...full, parentId: UNKNOWN_ID }), 400, 'VALIDATION_FAILED');
  expectProblem(t, await api('PUT', `/api/categories/${c.id}`, full, { 'if-match': '"2"' }), 412, 'PRECONDITION_FAILED');
  const res = await api('PUT', `/api/categories/${c.id}`, full, { 'if-match': '"1"' });
  t.equal(res.statusCode, 200, res.body);
  t.equal(res.headers.etag, '"2"');
  t.match(res.json(), { ...full, version: 2 });
  expectProblem(t, await api('PUT', `/api/categories/${UNKNOWN_ID}`, full), 404, 'NOT_FOUND');
});

t.test('PATCH', async (t) => {
  const parent = await category();
  const c = await category({ description: 'kept' });
  const res = await api('PATCH', `/api/categories/${c.id}`, { parentId: parent.id }, { 'if-match': '*' });
  t.equal(res.statusCode, 200, res.body);
  t.match(res.json(), { parentId: parent.id, description: 'kept', name: c.name, version: 2 });
  const cleared = await api('PATCH', `/api/categories/${c.id}`, { parentId: null }, { 'if-match': '"2"' });
  t.match(cleared.json(), { parentId: null, version: 3 });
  expectProblem(t, await api('PATCH', `/api/categories/${c.id}`, {}), 400, 'VALIDATION_FAILED');
  expectProblem(t, await api('PATCH', `/api/categories/${c.id}`, { name: null }), 400, 'VALIDATION_FAILED');
  expectProblem(t, await api('PATCH', `/api/categories/${c.id}`, { isActive: false }, { 'if-match': '"2"' }), 412, 'PRECONDITION_FAILED');
  expectProblem(t, await api('PATCH', `/api/categories/${UNKNOWN_ID}`, { isActive: false }), 404, 'NOT_FOUND');
});

t.test('DELETE', async (t) => {
  t.test('204, then 404; If-Match', async (t) => {
    const c = await category();
    expectProblem(t, await api('DELETE', `/api/categories/${c.id}`, undefined, { 'if-match': '"9"' }), 412, 'PRECONDITION_FAILED');
    const res = await api('DELETE', `/api/categories/${c.id}`, undefined, { 'if-match': '"1"' });
    t.equal(res.statusCode, 204);
    expectProblem(t, await api('GET', `/api/categories/${c.id}`), 404, 'NOT_FOUND');
    expectProblem(t, await api('DELETE', `/api/categories/${c.id}`), 404, 'NOT_FOUND');
  });

  t.test('409 while a product uses it, 204 once it does not', async (t) => {
    const c = await category();
    const p = expectStatus(await api('POST', '/api/products', { sku: `DEL-${next()}`, name: 'uses it', price: '1.00', categoryId: c.id }), 201, 'product');
    expectProblem(t, await api('DELETE', `/api/categories/${c.id}`), 409, 'CONFLICT');
    t.equal((await api('GET', `/api/categories/${c.id}`)).statusCode, 200, 'still there');
    expectStatus(await api('PATCH', `/api/products/${p.id}`, { categoryId: null }), 200, 'detach');
    t.equal((await api('DELETE', `/api/categories/${c.id}`)).statusCode, 204);
  });

  t.test('409 while a child category uses it', async (t) => {
    const parent = await category();
    const child = await category({ parentId: parent.id });
    expectProblem(t, await api('DELETE', `/api/categories/${parent.id}`), 409, 'CONFLICT');
    t.equal((await api('DELETE', `/api/categories/${child.id}`)).statusCode, 204);
    t.equal((await api('DELETE', `/api/categories/${parent.id}`)).statusCode, 204);
  });

  t.test('a category that is its own parent can be deleted', async (t) => {
    const c = await category();
    expectStatus(await api('PATCH', `/api/categories/${c.id}`, { parentId: c.id }), 200, 'self parent');
    t.equal((await api('DELETE', `/api/categories/${c.id}`)).statusCode, 204);
  });

  t.test('a product cannot be put into a deleted category', async (t) => {
    const c = await category();
    t.equal((await api('DELETE', `/api/categories/${c.id}`)).statusCode, 204);
    expectProblem(t, await api('POST', '/api/products', { sku: `DEL-X${next()}`, name: 'x', price: '1.00', categoryId: c.id }), 400, 'VALIDATION_FAILED');
  });
});

t.test('405 with Allow for methods a path lacks', async (t) => {
  const c = await category();
  for (const [method, url, allow] of [
    ['PUT', '/api/categories', 'GET, POST'],
    ['PATCH', '/api/categories', 'GET, POST'],
    ['DELETE', '/api/categories', 'GET, POST'],
    ['POST', `/api/categories/${c.id}`, 'GET, PUT, PATCH, DELETE'],
  ] as const) {
    const res = await api(method, url, method === 'DELETE' ? undefined : { name: 'x' });
    expectProblem(t, res, 405, 'METHOD_NOT_ALLOWED');
    t.equal(res.headers.allow, allow, `${method} ${url}`);
  }
});
