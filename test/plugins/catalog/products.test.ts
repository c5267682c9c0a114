// /api/products and /api/products/:id: create, read, PUT, PATCH, DELETE, ETags
// and bad input (lists: products-list.test.ts; languages: translations.test.ts).
import t from 'tap';
import { build } from '../../helper.ts';
import { catalogApi, UNKNOWN_ID, type Method } from './catalog-api.ts';

const ctx = await build(t);
const tenant = await ctx.tenant();
const { api, product, category } = catalogApi(ctx, tenant.adminToken);

t.test('create', async (t) => {
  t.test('201 with Location, ETag and defaults applied', async (t) => {
    const res = await api('POST', '/api/products', { sku: 'C-1', name: 'Hammer', price: '12.50' });
    t.equal(res.statusCode, 201, res.body);
    const body = res.json();
    t.equal(res.headers.location, `/api/products/${body.id}`);
    t.equal(res.headers.etag, '"1"');
    t.match(body.id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/, 'UUIDv7');
    t.match(body, {
      companyId: tenant.companyId,
      sku: 'C-1',
      name: 'Hammer',
      description: null,
      price: '12.50',
      currency: 'EUR',
      unit: 'piece',
      stock: 0,
      isActive: true,
      categoryId: null,
      availableFrom: null,
      discontinuedAt: null,
      attributes: null,
      version: 1,
    });
    t.match(body.createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    t.equal(res.headers['content-language'], 'en');
    t.notOk('translations' in body);
  });

  t.test('every field round-trips', async (t) => {
    const cat = (await category({ name: 'Tools' })).id;
    const body = {
      sku: 'C-2',
      name: 'Drill',
      description: 'Cordless',
      price: '0.99',
      currency: 'USD',
      unit: 'kg',
      stock: 7,
      categoryId: cat,
      isActive: false,
      availableFrom: '2024-02-29',
      discontinuedAt: '2025-01-02T03:04:05.000Z',
      attributes: { colour: 'red', sizes: [1, 2], nested: { ok: true } },
    };
    const res = await api('POST', '/api/products', body);
    t.equal(res.statusCode, 201, res.body);
    t.match(res.json(), body);
    const read = await api('GET', res.headers.location as string);
    t.same({ ...read.json(), translations: undefined }, { ...res.json(), translations: undefined });
  });

  t.test('the largest price and stock fit', async (t) => {
    const p = await product({ price: '9999999999.99', stock: 2 ** 31 - 1 });
    t.equal(p.price, '9999999999.99');
    t.equal(p.stock, 2147483647);
  });

  t.test('values are normalised as stored', async (t) => {
    const p = await product({ price: '7', discontinuedAt: '2025-01-02T03:04:05+02:00', name: 'Naïve 🔨 名前' });
    t.equal(p.price, '7.00', 'decimals keep their scale');
    t.equal((await api('PATCH', `/api/products/${p.id}`, { price: '7.5' })).json().price, '7.50');
    const same = await api('PATCH', `/api/products/${p.id}`, { price: '7.50' });
    t.equal(same.headers.etag, '"2"', 'writing the stored value again changes nothing');
    t.equal(p.discontinuedAt, '2025-01-02T01:04:05.000Z', 'date-times in UTC');
    t.equal(p.name, 'Naïve 🔨 名前');
    const found = (await api('GET', `/api/products?search=${encodeURIComponent('🔨 名')}`)).json();
    t.same(
      found.items.map((i: { id: string }) => i.id),
      [p.id],
    );
    // RFC 3339 allows lower-case "t" and "z"
    const lower = await product({ discontinuedAt: '2024-02-29t12:00:00z' });
    t.equal(lower.discontinuedAt, '2024-02-29T12:00:00.000Z', 'lower-case t and z');
    const patched = await api('PATCH', `/api/products/${lower.id}`, { discontinuedAt: '2024-03-01t00:00:00.5z' });
    t.equal(patched.json().discontinuedAt, '2024-03-01T00:00:00.500Z');
  });

  t.test('attributes hold any JSON value', async (t) => {
    for (const attributes of ['text', 42, true, [1, 'two', null], { a: { b: [{ c: 'd' }] } }, '{"looks":"like json"}']) {
      const p = await product({ attributes });
      t.same(p.attributes, attributes, JSON.stringify(attributes));
      t.same((await api('GET', `/api/products/${p.id}`)).json().attributes, attributes, `${JSON.stringify(attributes)} read back`);
    }
  });

  const invalid: [string, Record<string, unknown>, string][] = [
    ['sku missing', { name: 'x', price: '1.00' }, '/sku'],
    ['price missing', { sku: 'V-1', name: 'x' }, '/price'],
    ['unknown field', { sku: 'V-1', name: 'x', price: '1.00', colour: 'red' }, '/colour'],
    ['companyId is not writable', { sku: 'V-1', name: 'x', price: '1.00', companyId: tenant.companyId }, '/companyId'],
    ['id is not writable', { sku: 'V-1', name: 'x', price: '1.00', id: UNKNOWN_ID }, '/id'],
    ['version is not writable', { sku: 'V-1', name: 'x', price: '1.00', version: 3 }, '/version'],
    ['price as a number', { sku: 'V-1', name: 'x', price: 12.5 }, '/price'],
    ['stock as a string', { sku: 'V-1', name: 'x', price: '1.00', stock: '5' }, '/stock'],
    ['stock as a fraction', { sku: 'V-1', name: 'x', price: '1.00', stock: 1.5 }, '/stock'],
    ['isActive as a string', { sku: 'V-1', name: 'x', price: '1.00', isActive: 'true' }, '/isActive'],
    ['name as a number', { sku: 'V-1', name: 5, price: '1.00' }, '/name'],
    ['sku longer than 64', { sku: 'S'.repeat(65), name: 'x', price: '1.00' }, '/sku'],
    ['sku not matching its pattern', { sku: 'a b', name: 'x', price: '1.00' }, '/sku'],
    ['sku empty', { sku: '', name: 'x', price: '1.00' }, '/sku'],
    ['name of 201 characters', { sku: 'V-1', name: 'n'.repeat(201), price: '1.00' }, '/name'],
    ['translated name of 201 characters', { sku: 'V-1', price: '1.00', translations: { name: { de: 'n'.repeat(201) } } }, '/translations/name/de'],
    ['stock 2^31', { sku: 'V-1', name: 'x', price: '1.00', stock: 2 ** 31 }, '/stock'],
    ['negative stock', { sku: 'V-1', name: 'x', price: '1.00', stock: -1 }, '/stock'],
    ['price beyond precision', { sku: 'V-1', name: 'x', price: '12345678901.00' }, '/price'],
    ['price with three decimals', { sku: 'V-1', name: 'x', price: '1.005' }, '/price'],
    ['negative price', { sku: 'V-1', name: 'x', price: '-1.00' }, '/price'],
    ['price in exponent notation', { sku: 'V-1', name: 'x', price: '1e3' }, '/price'],
    ['price with leading zeros', { sku: 'V-1', name: 'x', price: '007.00' }, '/price'],
    ['currency lower case', { sku: 'V-1', name: 'x', price: '1.00', currency: 'eur' }, '/currency'],
    ['currency null', { sku: 'V-1', name: 'x', price: '1.00', currency: null }, '/currency'],
    ['unit not in the enum', { sku: 'V-1', name: 'x', price: '1.00', unit: 'ton' }, '/unit'],
    ['availableFrom not a date', { sku: 'V-1', name: 'x', price: '1.00', availableFrom: '2024-02-30' }, '/availableFrom'],
    ['discontinuedAt not a date-time', { sku: 'V-1', name: 'x', price: '1.00', discontinuedAt: 'yesterday' }, '/discontinuedAt'],
    ['categoryId not a uuid', { sku: 'V-1', name: 'x', price: '1.00', categoryId: 'abc' }, '/categoryId'],
    ['categoryId of no category', { sku: 'V-1', name: 'x', price: '1.00', categoryId: UNKNOWN_ID }, '/categoryId'],
    ['NUL in a string', { sku: 'V-1', name: 'a\u0000b', price: '1.00' }, '/name'],
    ['NUL in a translation', { sku: 'V-1', price: '1.00', translations: { name: { en: 'a\u0000b' } } }, '/translations/name/en'],
    ['NUL inside attributes', { sku: 'V-1', name: 'x', price: '1.00', attributes: { k: ['ok', 'a\u0000'] } }, '/attributes/k/1'],
    ['a lone surrogate in a translatable string', { sku: 'V-1', name: 'a\ud800', price: '1.00' }, '/name'],
    ['a lone surrogate in a plain string', { sku: 'V-1', name: 'x', price: '1.00', description: 'x', attributes: { k: '\udc00' } }, '/attributes/k'],
    ['a lone surrogate in an attributes key', { sku: 'V-1', name: 'x', price: '1.00', attributes: { 'a/\ud800': 1 } }, '/attributes/a~1\ud800'],
    ['NUL in an attributes key', { sku: 'V-1', name: 'x', price: '1.00', attributes: { 'a\u0000': 1 } }, '/attributes/a\u0000'],
    ['translation language not a tag', { sku: 'V-1', price: '1.00', translations: { name: { 'e n': 'x' } } }, '/translations/name/e n'],
    ['translations of a plain field', { sku: 'V-1', name: 'x', price: '1.00', translations: { sku: { en: 'x' } } }, '/translations/sku'],
    ['no name in any language', { sku: 'V-1', price: '1.00' }, '/name'],
    ['name only empty', { sku: 'V-1', name: '', price: '1.00' }, '/name'],
  ];
  for (const [what, body, path] of invalid) {
    t.test(`400 ${what}`, async (t) => {
      const res = await api('POST', '/api/products', body);
      t.equal(res.statusCode, 400, res.body);
      t.match(res.headers['content-type'], /^application\/problem\+json/);
      const problem = res.json();
      t.equal(problem.code, 'VALIDATION_FAILED');
      t.equal(problem.status, 400);
      t.ok(
        problem.errors?.some((e: { path: string }) => e.path === path),
        `errors name ${path}: ${JSON.stringify(problem.errors)}`,
      );
    });
  }

  t.test('400 deeply nested attributes, 500 never', async (t) => {
    for (const depth of [40, 100_000]) {
      const attributes = '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
      const res = await api('POST', '/api/products', `{"sku":"V-2","name":"x","price":"1.00","attributes":${attributes}}`);
      t.equal(res.statusCode, 400, `depth ${depth}`);
      t.equal(res.json().code, 'VALIDATION_FAILED');
    }
  });

  t.test('a 1.5 MiB body is 413', async (t) => {
    const res = await api('POST', '/api/products', { sku: 'V-3', name: 'x', price: '1.00', description: 'd'.repeat(1.5 * 1024 * 1024) });
    t.equal(res.statusCode, 413);
    t.equal(res.json().code, 'PAYLOAD_TOO_LARGE');
  });

  t.test('malformed JSON, a non-object body and a wrong media type', async (t) => {
    const bad = await api('POST', '/api/products', '{"sku":');
    t.equal(bad.statusCode, 400);
    t.equal(bad.json().code, 'VALIDATION_FAILED');
    for (const payload of ['[]', '"x"', 'null', '1']) {
      const res = await api('POST', '/api/products', payload);
      t.equal(res.statusCode, 400, payload);
      t.equal(res.json().code, 'VALIDATION_FAILED', payload);
    }
    const proto = await api('POST', '/api/products', '{"sku":"V-4","name":"x","price":"1.00","__proto__":{"isAdmin":true}}');
    t.equal(proto.statusCode, 400);
    t.equal(proto.json().code, 'VALIDATION_FAILED');
    const form = await ctx.as(tenant.adminToken, { method: 'POST', url: '/api/products', payload: 'sku=1', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    t.equal(form.statusCode, 415);
    t.equal(form.json().code, 'UNSUPPORTED_MEDIA_TYPE');
  });

  t.test('a text/plain body is 415 like any non-JSON media type', async (t) => {
    const res = await ctx.as(tenant.adminToken, { method: 'POST', url: '/api/products', payload: '{"sku":"T-1","name":"x","price":"1.00"}', headers: { 'content-type': 'text/plain' } });
    t.equal(res.statusCode, 415);
    t.equal(res.json().code, 'UNSUPPORTED_MEDIA_TYPE');
  });

  t.test('a duplicate SKU in the same company is 409', async (t) => {
    await product({ sku: 'DUP-1' });
    const res = await api('POST', '/api/products', { sku: 'DUP-1', name: 'again', price: '1.00' });
    t.equal(res.statusCode, 409);
    t.equal(res.json().code, 'CONFLICT');
  });
});

t.test('read', async (t) => {
  const p = await product();
  t.test('200 with ETag', async (t) => {
    const res = await api('GET', `/api/products/${p.id}`);
    t.equal(res.statusCode, 200);
    t.equal(res.headers.etag, '"1"');
    t.same({ ...res.json() }, p);
    const upper = await api('GET', `/api/products/${p.id.toUpperCase()}`);
    t.equal(upper.statusCode, 200, 'ids are case-insensitive');
    t.equal(upper.json().id, p.id);
  });
  t.test('malformed id is 400, unknown id 404', async (t) => {
    for (const id of ['abc', '1', `${p.id}x`, '01900000-0000-7000-8000-00000000000g', "' or 1=1 --", 'x'.repeat(150)]) {
      const res = await api('GET', `/api/products/${encodeURIComponent(id)}`);
      t.equal(res.statusCode, 400, id);
      t.equal(res.json().code, 'VALIDATION_FAILED', id);
    }
    const res = await api('GET', `/api/products/${UNKNOWN_ID}`);
    t.equal(res.statusCode, 404);
    t.equal(res.json().code, 'NOT_FOUND');
    t.match(res.headers['content-type'], /^application\/problem\+json/);
    t.match(res.json(), { status: 404, instance: `/api/products/${UNKNOWN_ID}`, type: String, title: String, requestId: String });
  });
});

const fullBody = (over: Record<string, unknown> = {}) => ({
  sku: 'PUT-1',
  name: 'Replaced',
  description: null,
  price: '2.00',
  currency: 'EUR',
  unit: 'piece',
  stock: 0,
  categoryId: null,
  isActive: true,
  availableFrom: null,
  discontinuedAt: null,
  attributes: null,
  ...over,
});

t.test('PUT', async (t) => {
  t.test('replaces every field, with If-Match', async (t) => {
    const cat = (await category({ name: 'Put category' })).id;
    const p = await product({ sku: 'PUT-0', description: 'old', stock: 9, categoryId: cat, attributes: { a: 1 }, availableFrom: '2024-01-01' });
    const res = await api('PUT', `/api/products/${p.id}`, fullBody(), { 'if-match': '"1"' });
    t.equal(res.statusCode, 200, res.body);
    t.equal(res.headers.etag, '"2"');
    t.match(res.json(), { ...fullBody(), version: 2, id: p.id, createdAt: p.createdAt });
    const read = await api('GET', `/api/products/${p.id}`);
    t.same(read.json(), res.json());
    t.equal(read.headers.etag, '"2"');
  });
  t.test('a missing field is 400, never a silent reset', async (t) => {
    const p = await product();
    for (const field of Object.keys(fullBody())) {
      const body: Record<string, unknown> = fullBody({ sku: p.sku });
      delete body[field];
      const res = await api('PUT', `/api/products/${p.id}`, body);
      t.equal(res.statusCode, 400, `without ${field}`);
      t.ok(
        res.json().errors?.some((e: { path: string }) => e.path === `/${field}`),
        `errors name /${field}`,
      );
    }
    for (const field of ['sku', 'price', 'currency']) {
      const res = await api('PUT', `/api/products/${p.id}`, fullBody({ sku: p.sku, [field]: null }));
      t.equal(res.statusCode, 400, `${field}: null`);
    }
    const unknown = await api('PUT', `/api/products/${p.id}`, fullBody({ sku: p.sku, colour: 'red' }));
    t.equal(unknown.statusCode, 400);
    t.equal((await api('GET', `/api/products/${p.id}`)).json().version, 1, 'nothing changed');
  });
  t.test('stale If-Match is 412, "*" passes, unknown id 404, malformed id 400', async (t) => {
    const p = await product();
    const stale = await api('PUT', `/api/products/${p.id}`, fullBody({ sku: p.sku }), { 'if-match': '"7"' });
    t.equal(stale.statusCode, 412);
    t.equal(stale.json().code, 'PRECONDITION_FAILED');
    const weak = await api('PUT', `/api/products/${p.id}`, fullBody({ sku: p.sku }), { 'if-match': 'W/"1"' });
    t.equal(weak.statusCode, 412, 'weak tags do not match (strong comparison)');
    const star = await api('PUT', `/api/products/${p.id}`, fullBody({ sku: p.sku }), { 'if-match': '*' });
    t.equal(star.statusCode, 200);
    const list = await api('PUT', `/api/products/${p.id}`, fullBody({ sku: p.sku, stock: 1 }), { 'if-match': '"1", "2"' });
    t.equal(list.statusCode, 200);
    t.equal(list.headers.etag, '"3"');
    const missing = await api('PUT', `/api/products/${UNKNOWN_ID}`, fullBody({ sku: 'NOPE' }));
    t.equal(missing.statusCode, 404);
    t.equal(missing.json().code, 'NOT_FOUND');
    const bad = await api('PUT', '/api/products/abc', fullBody({ sku: 'NOPE' }));
    t.equal(bad.statusCode, 400);
  });
  t.test('changing the SKU to one taken is 409', async (t) => {
    const a = await product();
    const b = await product();
    const res = await api('PUT', `/api/products/${b.id}`, fullBody({ sku: a.sku }));
    t.equal(res.statusCode, 409);
    t.equal(res.json().code, 'CONFLICT');
  });
});

t.test('PATCH', async (t) => {
  t.test('changes only the fields sent', async (t) => {
    const p = await product({ description: 'keep me', stock: 5, attributes: { a: 1 } });
    const res = await api('PATCH', `/api/products/${p.id}`, { price: '3.30', isActive: false });
    t.equal(res.statusCode, 200, res.body);
    t.equal(res.headers.etag, '"2"');
    t.match(res.json(), { ...p, price: '3.30', isActive: false, version: 2, updatedAt: String });
    const replaced = await api('PATCH', `/api/products/${p.id}`, { attributes: { b: [2] } });
    t.same(replaced.json().attributes, { b: [2] }, 'a JSON value is replaced, not merged');
    t.same((await api('GET', `/api/products/${p.id}`)).json().attributes, { b: [2] });
    const cleared = await api('PATCH', `/api/products/${p.id}`, { description: null, attributes: null, stock: null });
    t.equal(cleared.statusCode, 200, cleared.body);
    t.match(cleared.json(), { description: null, attributes: null, stock: null, price: '3.30', version: 4 });
  });
  t.test('bad bodies are 400', async (t) => {
    const p = await product();
    for (const body of [
      {},
      { sku: null },
      { price: 1 },
      { colour: 'red' },
      { stock: '5' },
      { name: 'a\u0000' },
      { categoryId: UNKNOWN_ID },
      { companyId: tenant.companyId },
      { id: UNKNOWN_ID },
      { version: 5 },
      { createdAt: '2020-01-01T00:00:00Z' },
    ]) {
      const res = await api('PATCH', `/api/products/${p.id}`, body);
      t.equal(res.statusCode, 400, JSON.stringify(body));
      t.equal(res.json().code, 'VALIDATION_FAILED');
    }
    t.equal((await api('GET', `/api/products/${p.id}`)).json().version, 1, 'nothing changed');
  });
  t.test('If-Match', async (t) => {
    const p = await product();
    const stale = await api('PATCH', `/api/products/${p.id}`, { stock: 1 }, { 'if-match': '"2"' });
    t.equal(stale.statusCode, 412);
    t.equal(stale.json().code, 'PRECONDITION_FAILED');
    const ok = await api('PATCH', `/api/products/${p.id}`, { stock: 1 }, { 'if-match': '"1"' });
    t.equal(ok.statusCode, 200);
    t.equal(ok.headers.etag, '"2"');
    const again = await api('PATCH', `/api/products/${p.id}`, { stock: 2 }, { 'if-match': '"1"' });
    t.equal(again.statusCode, 412, 'the old ETag is stale now');
    const star = await api('PATCH', `/api/products/${p.id}`, { stock: 3 }, { 'if-match': '*' });
    t.equal(star.statusCode, 200);
    t.equal(star.headers.etag, '"3"');
    const missing = await api('PATCH', `/api/products/${UNKNOWN_ID}`, { stock: 3 });
    t.equal(missing.statusCode, 404);
  });
  t.test('concurrent writes without If-Match are serialised, none lost', async (t) => {
    const p = await product({ stock: 0 });
    const results = await Promise.all([1, 2, 3, 4, 5].map((n) => api('PATCH', `/api/products/${p.id}`, { stock: n })));
    t.same(
      results.map((r) => r.statusCode),
      [200, 200, 200, 200, 200],
    );
    t.same(results.map((r) => r.headers.etag).sort(), ['"2"', '"3"', '"4"', '"5"', '"6"']);
    const last = results.find((r) => r.headers.etag === '"6"')!.json();
    const read = (await api('GET', `/api/products/${p.id}`)).json();
    t.equal(read.version, 6);
    t.equal(read.stock, last.stock, 'the row holds the last write');
  });

  t.test('the same SKU in another company is fine', async (t) => {
    const other = await ctx.company(tenant, 'C2');
    const user = await ctx.user(tenant, { codes: ['erp:catalog:manage'], companies: [tenant.companyId, other] });
    ctx.app.abilities.invalidate(tenant.id); // the role was written past the kernel's role cache
    await product({ sku: 'SHARED-1' });
    const res = await ctx.as(user.token, { method: 'POST', url: '/api/products', headers: { 'x-company-id': other }, payload: { sku: 'SHARED-1', name: 'x', price: '1.00' } });
    t.equal(res.statusCode, 201, res.body);
    t.equal(res.json().companyId, other);
  });
});

t.test('DELETE', async (t) => {
  t.test('204, then 404', async (t) => {
    const p = await product();
    const res = await api('DELETE', `/api/products/${p.id}`);
    t.equal(res.statusCode, 204);
    t.equal(res.body, '');
    t.equal((await api('GET', `/api/products/${p.id}`)).statusCode, 404);
    const again = await api('DELETE', `/api/products/${p.id}`);
    t.equal(again.statusCode, 404);
    t.equal(again.json().code, 'NOT_FOUND');
    t.equal((await api('DELETE', '/api/products/abc')).statusCode, 400);
    const other = await product();
    const unknownParam = await api('DELETE', `/api/products/${other.id}?force=true`);
    t.equal(unknownParam.statusCode, 400, 'unknown query parameters are 400 here too');
    t.equal(unknownParam.json().code, 'VALIDATION_FAILED');
    t.equal((await api('GET', `/api/products/${other.id}`)).statusCode, 200, 'not deleted');
  });
  t.test('If-Match', async (t) => {
    const p = await product();
    const stale = await api('DELETE', `/api/products/${p.id}`, undefined, { 'if-match': '"2"' });
    t.equal(stale.statusCode, 412);
    t.equal(stale.json().code, 'PRECONDITION_FAILED');
    t.equal((await api('GET', `/api/products/${p.id}`)).statusCode, 200, 'still there');
    const ok = await api('DELETE', `/api/products/${p.id}`, undefined, { 'if-match': '"1"' });
    t.equal(ok.statusCode, 204);
  });
  t.test('a deleted SKU can be used again', async (t) => {
    const p = await product();
    t.equal((await api('DELETE', `/api/products/${p.id}`)).statusCode, 204);
    await product({ sku: p.sku });
  });
});

t.test('405 with Allow for methods a path lacks', async (t) => {
  const p = await product();
  const cases: [Method, string, string][] = [
    ['PUT', '/api/products', 'GET, POST'],
    ['PATCH', '/api/products', 'GET, POST'],
    ['DELETE', '/api/products', 'GET, POST'],
    ['POST', `/api/products/${p.id}`, 'GET, PUT, PATCH, DELETE'],
  ];
  for (const [method, url, allow] of cases) {
    const res = await api(method, url, method === 'DELETE' ? undefined : {});
    t.equal(res.statusCode, 405, `${method} ${url}`);
    t.equal(res.json().code, 'METHOD_NOT_ALLOWED');
    t.equal(res.headers.allow, allow);
  }
});
