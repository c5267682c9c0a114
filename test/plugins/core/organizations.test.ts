// /api/organizations: a tenant's organisational units, to which users and
// companies can belong; listed under core:organization:view, changed under
// core:organization:manage.
import t from 'tap';
import { build } from '../../helper.ts';
import { apiAs, expectProblem, expectStatus, UNKNOWN_ID } from './core-api.ts';

const ctx = await build(t);
const tenant = await ctx.tenant();
const api = apiAs(ctx, tenant.adminToken);
let seq = 0;
const org = async (body: Record<string, unknown> = {}) => expectStatus(await api('POST', '/api/organizations', { code: `O-${++seq}`, name: `Unit ${seq}`, ...body }), 201, 'create organization');

t.test('create, read, PATCH, PUT, delete', async (t) => {
  const res = await api('POST', '/api/organizations', { code: 'SALES', name: 'Sales', description: 'Everyone who sells' });
  t.equal(res.statusCode, 201, res.body);
  const o = res.json();
  t.equal(res.headers.location, `/api/organizations/${o.id}`);
  t.match(o, { code: 'SALES', name: 'Sales', description: 'Everyone who sells', parentId: null, isActive: true, version: 1 });
  const child = await org({ parentId: o.id });
  t.equal(child.parentId, o.id);
  t.same(expectStatus(await api('GET', `/api/organizations/${o.id}`), 200, 'read'), o);
  t.match(expectStatus(await api('PATCH', `/api/organizations/${o.id}`, { isActive: false }, { 'if-match': '"1"' }), 200, 'patch'), { isActive: false, version: 2 });
  expectProblem(t, await api('PATCH', `/api/organizations/${o.id}`, { isActive: true }, { 'if-match': '"1"' }), 412, 'PRECONDITION_FAILED');
  t.match(expectStatus(await api('PUT', `/api/organizations/${o.id}`, { code: 'SALES', name: 'Sales', description: null, parentId: null, isActive: true }), 200, 'put'), {
    description: null,
    version: 3,
  });
  expectProblem(t, await api('POST', '/api/organizations', { code: 'SALES', name: 'Twin' }), 409, 'CONFLICT', 'codes are unique');

  // users and companies belong to organizations; a referenced one is not deleted
  const company = expectStatus(await api('POST', '/api/companies', { code: 'ORG-C', name: 'C', organizationId: o.id }), 201, 'company');
  t.equal(company.organizationId, o.id);
  const user = expectStatus(await api('POST', '/api/users', { email: 'org@example.test', name: 'O', password: 'long enough!', organizationId: child.id }), 201, 'user');
  t.equal(user.organizationId, child.id);
  expectProblem(t, await api('DELETE', `/api/organizations/${o.id}`), 409, 'CONFLICT', 'a child unit and a company');
  expectProblem(t, await api('DELETE', `/api/organizations/${child.id}`), 409, 'CONFLICT', 'a user');
  expectStatus(await api('PATCH', `/api/users/${user.id}`, { organizationId: null }), 200, 'user leaves');
  t.equal((await api('DELETE', `/api/organizations/${child.id}`)).statusCode, 204);
  expectStatus(await api('DELETE', `/api/companies/${company.id}`), 204, 'company goes');
  t.equal((await api('DELETE', `/api/organizations/${o.id}`)).statusCode, 204);
  expectProblem(t, await api('GET', `/api/organizations/${o.id}`), 404, 'NOT_FOUND');
});

t.test('paged list: page=1&size=1000, isActive, createdAt sort, translations', async (t) => {
  const a = await org();
  const b = await org({ isActive: false, translations: { name: { de: 'Einkauf', en: 'Purchasing' } } });
  const all = expectStatus(await api('GET', '/api/organizations?page=1&size=1000'), 200, 'list');
  t.match(all, { page: 1, size: 1000 });
  t.equal(all.total, all.items.length);
  const active = expectStatus(await api('GET', '/api/organizations?isActive=true&size=1000'), 200, 'active');
  t.ok(active.items.some((x: { id: string }) => x.id === a.id) && !active.items.some((x: { id: string }) => x.id === b.id));
  t.same(
    expectStatus(await api('GET', '/api/organizations?sort=-createdAt&size=2'), 200, 'recent').items.map((x: { id: string }) => x.id),
    [b.id, a.id],
  );
  const de = await api('GET', `/api/organizations/${b.id}`, undefined, { 'accept-language': 'de-AT, en;q=0.5' });
  t.equal(de.json().name, 'Einkauf');
  t.equal(de.headers['content-language'], 'de');
  t.equal(expectStatus(await api('GET', `/api/organizations?parentId=${UNKNOWN_ID}`), 200, 'by parent').total, 0);
});

t.test('read privilege and manage privilege', async (t) => {
  const o = await org();
  const viewer = apiAs(ctx, (await ctx.user(tenant, { codes: ['core:organization:view'] })).token);
  t.equal(expectStatus(await viewer('GET', '/api/organizations?page=1&size=1000'), 200, 'viewer lists').total >= 1, true);
  t.equal((await viewer('GET', `/api/organizations/${o.id}`)).statusCode, 200);
  expectProblem(t, await viewer('POST', '/api/organizations', { code: 'V', name: 'v' }), 403, 'FORBIDDEN', 'view only: no create');
  expectProblem(t, await viewer('DELETE', `/api/organizations/${o.id}`), 403, 'FORBIDDEN', 'view only: no delete');
  const stranger = apiAs(ctx, (await ctx.user(tenant, { codes: ['core:group:view', 'erp:catalog:manage'] })).token);
  expectProblem(t, await stranger('GET', '/api/organizations'), 403, 'FORBIDDEN', 'no read privilege');
  expectProblem(t, await stranger('GET', `/api/organizations/${o.id}`), 403, 'FORBIDDEN', 'no read privilege');
  const manager = apiAs(ctx, (await ctx.user(tenant, { codes: ['core:organization:manage'] })).token);
  t.equal((await manager('POST', '/api/organizations', { code: 'MGR', name: 'By a manager' })).statusCode, 201, 'a manager needs no admin role');
  expectProblem(t, await ctx.app.inject({ method: 'GET', url: '/api/organizations' }), 401, 'UNAUTHENTICATED');
});

t.test('other tenants', async (t) => {
  const o = await org();
  const theirs = apiAs(ctx, (await ctx.tenant()).adminToken);
  expectProblem(t, await theirs('GET', `/api/organizations/${o.id}`), 404, 'NOT_FOUND');
  expectProblem(t, await theirs('PATCH', `/api/organizations/${o.id}`, { name: 'x' }), 404, 'NOT_FOUND');
  expectProblem(t, await theirs('POST', '/api/organizations', { code: 'X', name: 'x', parentId: o.id }), 400, 'VALIDATION_FAILED', 'a parent of another tenant');
  t.equal(expectStatus(await theirs('GET', '/api/organizations'), 200, 'their list').total, 0);
});

t.test('bad input', async (t) => {
  const bodies: [string, Record<string, unknown>, string][] = [
    ['code missing', { name: 'x' }, '/code'],
    ['unknown field', { code: 'B', name: 'x', manager: 'me' }, '/manager'],
    ['parent not a uuid', { code: 'B', name: 'x', parentId: 'root' }, '/parentId'],
    ['parent that does not exist', { code: 'B', name: 'x', parentId: UNKNOWN_ID }, '/parentId'],
    ['description too long', { code: 'B', name: 'x', description: 'd'.repeat(4001) }, '/description'],
    ['isActive a number', { code: 'B', name: 'x', isActive: 1 }, '/isActive'],
  ];
  for (const [what, body, path] of bodies) {
    const res = await api('POST', '/api/organizations', body);
    expectProblem(t, res, 400, 'VALIDATION_FAILED', what);
    t.ok(
      res.json().errors?.some((e: { path: string }) => e.path === path),
      `${what} names ${path}`,
    );
  }
});
