// /api/companies: admin protected (authenticate → requireRole → requireAdmin),
// translatable names, active state, 409 while anything still belongs to a company.
import t from 'tap';
import { build, PASSWORD } from '../../helper.ts';
import { apiAs, checkAdminGuard, expectProblem, expectStatus, rolelessUser, UNKNOWN_ID } from './core-api.ts';

const ctx = await build(t);
const tenant = await ctx.tenant();
const api = apiAs(ctx, tenant.adminToken);
let seq = 0;
const company = async (body: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
  expectStatus(await api('POST', '/api/companies', { code: `C-${++seq}`, name: `Company ${seq}`, ...body }, headers), 201, 'create company');

t.test('the three admin checks, each failing on its own and in order', async (t) => {
  const c = await company();
  const codes = ['core:company:view', 'core:company:manage'];
  for (const request of [
    { method: 'GET', url: '/api/companies' },
    { method: 'GET', url: `/api/companies/${c.id}` },
    { method: 'POST', url: '/api/companies', payload: { code: 'G-1', name: 'Guarded' } },
    { method: 'PATCH', url: `/api/companies/${c.id}`, payload: { isActive: false } },
    { method: 'PUT', url: `/api/companies/${c.id}`, payload: { code: c.code, name: 'x', isActive: true, organizationId: null } },
    { method: 'DELETE', url: `/api/companies/${c.id}` },
  ] as const)
    await checkAdminGuard(t, ctx, tenant, codes, request);
  t.equal(expectStatus(await api('GET', `/api/companies/${c.id}`), 200, 'read').isActive, true, 'nothing the refused calls sent was applied');
  t.equal(expectStatus(await api('GET', '/api/companies?code=G-1'), 200, 'list').total, 0);

  t.test('the order: authentication before role before admin', async (t) => {
    // a role-less caller with a broken token is UNAUTHENTICATED, not ROLE_REQUIRED
    const none = await rolelessUser(ctx, tenant);
    expectProblem(t, await ctx.app.inject({ method: 'GET', url: '/api/companies', headers: { authorization: `Bearer ${none.token}x` } }), 401, 'UNAUTHENTICATED');
    // a role-less caller is ROLE_REQUIRED, though not an admin either
    expectProblem(t, await apiAs(ctx, none.token)('GET', '/api/companies'), 403, 'ROLE_REQUIRED');
    // a non-admin who holds nothing at all is ADMIN_REQUIRED, not FORBIDDEN
    const member = await ctx.user(tenant, { codes: [] });
    expectProblem(t, await apiAs(ctx, member.token)('GET', '/api/companies'), 403, 'ADMIN_REQUIRED');
  });
});

t.test('create, read, PATCH, PUT, delete', async (t) => {
  const res = await api('POST', '/api/companies', { code: 'ACME', name: 'Acme' });
  t.equal(res.statusCode, 201, res.body);
  const c = res.json();
  t.equal(res.headers.location, `/api/companies/${c.id}`);
  t.equal(res.headers.etag, '"1"');
  t.match(c, { code: 'ACME', name: 'Acme', isActive: true, organizationId: null, version: 1 });
  t.notOk('companyId' in c, 'a company is tenant-scoped');
  t.same(expectStatus(await api('GET', `/api/companies/${c.id}`), 200, 'read'), c);
  const patched = expectStatus(await api('PATCH', `/api/companies/${c.id}`, { isActive: false }, { 'if-match': '"1"' }), 200, 'patch');
  t.match(patched, { isActive: false, name: 'Acme', version: 2 });
  expectProblem(t, await api('PATCH', `/api/companies/${c.id}`, { isActive: true }, { 'if-match': '"1"' }), 412, 'PRECONDITION_FAILED', 'stale If-Match');
  expectProblem(t, await api('PUT', `/api/companies/${c.id}`, { code: 'ACME', name: 'Acme' }), 400, 'VALIDATION_FAILED', 'PUT without every field');
  const put = expectStatus(await api('PUT', `/api/companies/${c.id}`, { code: 'ACME2', name: 'Acme Two', isActive: true, organizationId: null }), 200, 'put');
  t.match(put, { code: 'ACME2', name: 'Acme Two', isActive: true, version: 3 });
  expectProblem(t, await api('POST', '/api/companies', { code: 'ACME2', name: 'Twin' }), 409, 'CONFLICT', 'codes are unique');
  expectProblem(t, await api('DELETE', `/api/companies/${c.id}`, undefined, { 'if-match': '"2"' }), 412, 'PRECONDITION_FAILED', 'stale delete');
  t.equal((await api('DELETE', `/api/companies/${c.id}`)).statusCode, 204);
  expectProblem(t, await api('GET', `/api/companies/${c.id}`), 404, 'NOT_FOUND');
  expectProblem(t, await api('DELETE', `/api/companies/${c.id}`), 404, 'NOT_FOUND');
  expectProblem(t, await api('DELETE', '/api/companies'), 405, 'METHOD_NOT_ALLOWED');
});

t.test('paged list: page=1&size=1000, isActive filter, createdAt sort', async (t) => {
  const a = await company();
  const b = await company({ isActive: false });
  const all = expectStatus(await api('GET', '/api/companies?page=1&size=1000'), 200, 'list');
  t.match(all, { page: 1, size: 1000 });
  t.equal(all.total, all.items.length);
  const active = expectStatus(await api('GET', '/api/companies?page=1&size=1000&isActive=true'), 200, 'active');
  t.ok(active.items.every((c: { isActive: boolean }) => c.isActive));
  t.equal(active.total + expectStatus(await api('GET', '/api/companies?isActive=false'), 200, 'inactive').total, all.total);
  const recent = expectStatus(await api('GET', '/api/companies?sort=-createdAt&size=2'), 200, 'recent');
  t.same(
    recent.items.map((c: { id: string }) => c.id),
    [b.id, a.id],
    'most recent first',
  );
  t.equal(expectStatus(await api('GET', '/api/companies?size=1&page=2'), 200, 'page 2').items.length, 1);
  for (const url of ['/api/companies?size=1001', '/api/companies?size=0', '/api/companies?page=0', '/api/companies?isActive=yes', '/api/companies?sort=secret', '/api/companies?bogus=1']) {
    expectProblem(t, await api('GET', url), 400, 'VALIDATION_FAILED', url);
  }
});

t.test('translations', async (t) => {
  const c = expectStatus(await api('POST', '/api/companies', { code: 'BAKERY', translations: { name: { en: 'Bakery', de: 'Bäckerei', fr: 'Boulangerie', 'de-ch': 'Beck' } } }), 201, 'create');
  const read = async (acceptLanguage?: string, query = '') => {
    const res = await api('GET', `/api/companies/${c.id}${query}`, undefined, acceptLanguage === undefined ? {} : { 'accept-language': acceptLanguage });
    return { name: res.json().name, lang: res.headers['content-language'], body: res.json() };
  };
  const cases: [string | undefined, string, string][] = [
    [undefined, 'Bakery', 'en'],
    ['de', 'Bäckerei', 'de'],
    ['fr-CA', 'Boulangerie', 'fr'],
    ['de-CH', 'Beck', 'de-ch'],
    ['it, fr;q=0.8, de;q=0.9', 'Bäckerei', 'de'],
    ['de;q=0.1, fr;q=0.5', 'Boulangerie', 'fr'],
    ['xx', 'Bakery', 'en'],
    ['*', 'Bakery', 'en'],
    ['de;q=0, fr', 'Boulangerie', 'fr'],
    ['de;q=oops', 'Bakery', 'en'],
    ['!!!', 'Bakery', 'en'],
  ];
  for (const [header, name, lang] of cases) {
    const r = await read(header);
    t.equal(r.name, name, `Accept-Language ${header ?? '(none)'}`);
    t.equal(r.lang, lang, `Content-Language for ${header ?? '(none)'}`);
    t.notOk('translations' in r.body);
  }
  t.same((await read('de', '?translations=true')).body.translations, { name: { en: 'Bakery', de: 'Bäckerei', fr: 'Boulangerie', 'de-ch': 'Beck' } });
  t.same((await read(undefined, '?translations=de,fr')).body.translations, { name: { de: 'Bäckerei', fr: 'Boulangerie' } });
  const list = expectStatus(await api('GET', `/api/companies?code=${c.code}&translations=true`, undefined, { 'accept-language': 'fr' }), 200, 'list');
  t.equal(list.items[0].name, 'Boulangerie');
  t.equal(list.items[0].translations.name.de, 'Bäckerei');

  // a plain string is stored under Content-Language; other languages stay
  const patched = expectStatus(await api('PATCH', `/api/companies/${c.id}?translations=true`, { name: 'Panetteria' }, { 'content-language': 'it' }), 200, 'patch');
  t.same(patched.translations.name, { en: 'Bakery', de: 'Bäckerei', fr: 'Boulangerie', 'de-ch': 'Beck', it: 'Panetteria' });
  t.equal((await read('it')).name, 'Panetteria');
  // a company with only a German name answers in German whatever is asked
  const de = expectStatus(await api('POST', '/api/companies', { code: 'DE-ONLY', translations: { name: { de: 'Nur Deutsch' } } }), 201, 'create');
  const only = await api('GET', `/api/companies/${de.id}`, undefined, { 'accept-language': 'fr' });
  t.equal(only.json().name, 'Nur Deutsch');
  t.equal(only.headers['content-language'], 'de');
  t.match(expectStatus(await api('GET', `/api/companies?search=${encodeURIComponent('bäck')}`), 200, 'search').items, [{ id: c.id }], 'search covers every language');
  for (const [what, query] of [
    ['bad language list', '?translations=de,,fr'],
    ['bad value', '?translations=yes please'],
  ] as const) {
    expectProblem(t, await api('GET', `/api/companies/${c.id}${query.replace(/ /g, '%20')}`), 400, 'VALIDATION_FAILED', what);
  }
});

t.test('deleting a company something still belongs to is 409', async (t) => {
  const c = await company();
  const user = expectStatus(await api('POST', '/api/users', { email: `p${seq}@x.test`, name: 'P', password: 'long enough', primaryCompanyId: c.id }), 201, 'user');
  expectProblem(t, await api('DELETE', `/api/companies/${c.id}`), 409, 'CONFLICT', "a user's primary company");
  expectStatus(await api('PATCH', `/api/users/${user.id}`, { primaryCompanyId: null }), 200, 'unset primary');

  const email = expectStatus(await api('POST', '/api/emails', { companyId: c.id, type: 'SMTP', name: 'out', host: 'smtp.example.test', port: 587 }), 201, 'email');
  expectProblem(t, await api('DELETE', `/api/companies/${c.id}`), 409, 'CONFLICT', 'an e-mail account');
  t.equal((await api('DELETE', `/api/emails/${email.id}`)).statusCode, 204);

  // company-scoped rows (catalog) belong to it through the company context
  const me = expectStatus(await api('GET', '/api/auth/me'), 200, 'me');
  expectStatus(await api('PUT', `/api/users/${me.id}/companies`, { companyIds: [tenant.companyId, c.id] }), 200, 'join the company');
  const member = apiAs(ctx, expectStatus(await ctx.login(tenant.id, tenant.adminEmail, PASSWORD), 200, 'login').accessToken);
  const product = expectStatus(await member('POST', '/api/products', { sku: 'IN-C', name: 'In C', price: '1.00' }, { 'x-company-id': c.id }), 201, 'product');
  t.equal(product.companyId, c.id);
  expectProblem(t, await api('DELETE', `/api/companies/${c.id}`), 409, 'CONFLICT', 'a product of the company');
  t.equal((await member('DELETE', `/api/products/${product.id}`, undefined, { 'x-company-id': c.id })).statusCode, 204);

  t.equal((await api('DELETE', `/api/companies/${c.id}`)).statusCode, 204, 'memberships go with it; nothing else held it');
  t.same(expectStatus(await api('GET', `/api/users/${user.id}/companies`), 200, 'memberships').items, []);
});

t.test('other tenants', async (t) => {
  const other = await ctx.tenant();
  const c = await company();
  const theirs = apiAs(ctx, other.adminToken);
  expectProblem(t, await theirs('GET', `/api/companies/${c.id}`), 404, 'NOT_FOUND');
  expectProblem(t, await theirs('PATCH', `/api/companies/${c.id}`, { isActive: false }), 404, 'NOT_FOUND');
  expectProblem(t, await theirs('DELETE', `/api/companies/${c.id}`), 404, 'NOT_FOUND');
  const list = expectStatus(await theirs('GET', '/api/companies?size=1000'), 200, 'their list');
  t.same(
    list.items.map((x: { id: string }) => x.id),
    [other.companyId],
    'only their own company',
  );
  expectProblem(t, await api('GET', '/api/companies', undefined, { 'x-company-id': other.companyId }), 403, 'COMPANY_FORBIDDEN', "another tenant's company as context");
});

t.test('bad input', async (t) => {
  const c = await company();
  const bodies: [string, Record<string, unknown>, string][] = [
    ['code missing', { name: 'x' }, '/code'],
    ['unknown field', { code: 'B-1', name: 'x', vat: 'DE1' }, '/vat'],
    ['id is not writable', { code: 'B-1', name: 'x', id: UNKNOWN_ID }, '/id'],
    ['code a number', { code: 5, name: 'x' }, '/code'],
    ['isActive a string', { code: 'B-1', name: 'x', isActive: 'yes' }, '/isActive'],
    ['code of 41 characters', { code: 'C'.repeat(41), name: 'x' }, '/code'],
    ['name of 201 characters', { code: 'B-1', name: 'n'.repeat(201) }, '/name'],
    ['huge name', { code: 'B-1', name: 'n'.repeat(500_000) }, '/name'],
    ['no name in any language', { code: 'B-1' }, '/name'],
    ['NUL in the name', { code: 'B-1', name: 'a\u0000b' }, '/name'],
    ['organization that does not exist', { code: 'B-1', name: 'x', organizationId: UNKNOWN_ID }, '/organizationId'],
    ['organization not a uuid', { code: 'B-1', name: 'x', organizationId: 'hq' }, '/organizationId'],
  ];
  for (const [what, body, path] of bodies) {
    const res = await api('POST', '/api/companies', body);
    expectProblem(t, res, 400, 'VALIDATION_FAILED', what);
    t.ok(
      res.json().errors?.some((e: { path: string }) => e.path === path),
      `${what} names ${path}: ${res.body.slice(0, 300)}`,
    );
  }
  expectProblem(t, await api('POST', '/api/companies', '{"code": "B-1", "name": '), 400, 'VALIDATION_FAILED', 'broken JSON');
  expectProblem(t, await api('POST', '/api/companies', { code: 'B-1', name: 'x'.repeat(2_000_000) }), 413, 'PAYLOAD_TOO_LARGE', 'over the body limit');
  expectProblem(t, await api('PATCH', `/api/companies/${c.id}`, {}), 400, 'VALIDATION_FAILED', 'empty PATCH');
  expectProblem(t, await api('PATCH', `/api/companies/${c.id}`, { name: null, code: null }), 400, 'VALIDATION_FAILED', 'PATCH code to null');
  expectProblem(t, await api('GET', '/api/companies/not-a-uuid'), 400, 'VALIDATION_FAILED', 'malformed id');
  expectProblem(t, await api('GET', `/api/companies/${UNKNOWN_ID}`), 404, 'NOT_FOUND', 'unknown id');
  expectProblem(t, await api('PATCH', `/api/companies/${c.id}`, { isActive: false }, { 'if-match': '"99"' }), 412, 'PRECONDITION_FAILED', 'stale If-Match');
  t.equal(expectStatus(await api('GET', `/api/companies/${c.id}`), 200, 'unchanged').version, 1);
});
