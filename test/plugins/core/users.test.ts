// /api/users: a paged list under core:user:view, a user created with a
// password (hashed, never returned), deactivation, roles and companies
// assigned by administrators.
import t from 'tap';
import { build, PASSWORD } from '../../helper.ts';
import { apiAs, expectProblem, expectStatus, rolelessUser, UNKNOWN_ID } from './core-api.ts';

const ctx = await build(t);
const tenant = await ctx.tenant();
const api = apiAs(ctx, tenant.adminToken);
const me = expectStatus(await api('GET', '/api/auth/me'), 200, 'me');
let seq = 0;
const newUser = async (body: Record<string, unknown> = {}) =>
  expectStatus(await api('POST', '/api/users', { email: `user${++seq}@example.test`, name: `User ${seq}`, password: PASSWORD, ...body }), 201, 'create user');
const roleId = async (name: string) => expectStatus(await api('GET', `/api/roles?search=${name}`), 200, 'roles').items.find((r: { name: string }) => r.name === name).id as string;

t.test('create a user with a password; they can log in; the hash never shows', async (t) => {
  const res = await api('POST', '/api/users', { email: 'Mixed.Case@Example.TEST', name: 'Mixed', password: 'a long password', language: 'de', primaryCompanyId: tenant.companyId });
  t.equal(res.statusCode, 201, res.body);
  const u = res.json();
  t.equal(res.headers.location, `/api/users/${u.id}`);
  t.equal(res.headers.etag, '"1"');
  t.match(u, { email: 'mixed.case@example.test', name: 'Mixed', isActive: true, language: 'de', primaryCompanyId: tenant.companyId, organizationId: null, version: 1 });
  for (const r of [res, await api('GET', `/api/users/${u.id}`), await api('GET', '/api/users?size=1000')]) {
    t.notOk(/password|scrypt/i.test(r.body), 'neither password nor hash in a response');
  }
  const login = await ctx.login(tenant.id, 'MIXED.case@example.test', 'a long password');
  t.equal(login.statusCode, 200, 'logs in with the password');
  const mine = expectStatus(await apiAs(ctx, login.json().accessToken)('GET', '/api/auth/me'), 200, 'me');
  t.same(mine.roles, [], 'no role until given');
  t.same(
    mine.companies.map((c: { id: string }) => c.id),
    [tenant.companyId],
    'the primary company makes them a member',
  );
  expectProblem(t, await api('POST', '/api/users', { email: 'mixed.case@example.test', name: 'Twin', password: 'a long password' }), 409, 'CONFLICT', 'e-mail addresses are unique');
});

t.test('set a password: the old one and its sessions stop working', async (t) => {
  const u = await newUser();
  const before = expectStatus(await ctx.login(tenant.id, u.email, PASSWORD), 200, 'login');
  t.equal((await api('PUT', `/api/users/${u.id}/password`, { password: 'brand new secret' })).statusCode, 204);
  expectProblem(t, await ctx.login(tenant.id, u.email, PASSWORD), 401, 'INVALID_CREDENTIALS', 'old password');
  t.equal((await ctx.login(tenant.id, u.email, 'brand new secret')).statusCode, 200, 'new password');
  const refresh = await ctx.app.inject({ method: 'POST', url: '/api/auth/refresh', payload: { refreshToken: before.refreshToken } });
  t.equal(refresh.statusCode, 401, 'the old refresh token is dead');
  expectProblem(t, await api('PUT', `/api/users/${u.id}/password`, { password: 'short' }), 400, 'VALIDATION_FAILED', 'too short');
  expectProblem(t, await api('PUT', `/api/users/${UNKNOWN_ID}/password`, { password: 'long enough!' }), 404, 'NOT_FOUND');
});

t.test('deactivate: no login, no refresh; not yourself', async (t) => {
  const u = await newUser();
  const session = expectStatus(await ctx.login(tenant.id, u.email, PASSWORD), 200, 'login');
  const off = expectStatus(await api('PATCH', `/api/users/${u.id}`, { isActive: false }), 200, 'deactivate');
  t.equal(off.isActive, false);
  expectProblem(t, await ctx.login(tenant.id, u.email, PASSWORD), 401, 'INVALID_CREDENTIALS', 'login refused');
  t.equal((await ctx.app.inject({ method: 'POST', url: '/api/auth/refresh', payload: { refreshToken: session.refreshToken } })).statusCode, 401, 'refresh refused');
  const active = expectStatus(await api('GET', '/api/users?isActive=true&size=1000'), 200, 'active');
  t.notOk(
    active.items.some((x: { id: string }) => x.id === u.id),
    'the isActive filter counts it out',
  );
  expectProblem(t, await api('PATCH', `/api/users/${me.id}`, { isActive: false }), 409, 'CONFLICT', 'deactivating yourself');
  expectProblem(t, await api('DELETE', `/api/users/${me.id}`), 409, 'CONFLICT', 'deleting yourself');
  t.equal((await api('DELETE', `/api/users/${u.id}`)).statusCode, 204, 'another user can go');
});

t.test('roles: read and replaced by administrators only', async (t) => {
  const u = await newUser();
  const member = await roleId('member');
  const admin = await roleId('admin');
  const set = expectStatus(await api('PUT', `/api/users/${u.id}/roles`, { roleIds: [member] }), 200, 'set roles');
  t.same(set.items, [{ id: member, name: 'member' }]);
  t.match(set, { page: 1, total: 1 });
  t.same(
    expectStatus(await api('GET', `/api/users/${u.id}/roles`), 200, 'get roles').items.map((r: { name: string }) => r.name),
    ['member'],
  );
  const login = expectStatus(await ctx.login(tenant.id, u.email, PASSWORD), 200, 'login');
  t.same(expectStatus(await apiAs(ctx, login.accessToken)('GET', '/api/auth/me'), 200, 'me').roles, ['member'], 'in the next token');

  const manager = await ctx.user(tenant, { codes: ['core:user:view', 'core:user:manage'] });
  const asManager = apiAs(ctx, manager.token);
  expectProblem(t, await asManager('GET', `/api/users/${u.id}/roles`), 403, 'ADMIN_REQUIRED', 'a user manager does not read roles');
  expectProblem(t, await asManager('GET', `/api/users/${u.id}/companies`), 403, 'ADMIN_REQUIRED', 'nor companies');
  expectProblem(t, await asManager('PUT', `/api/users/${manager.id}/roles`, { roleIds: [admin] }), 403, 'ADMIN_REQUIRED', 'but cannot make themselves admin');
  expectProblem(t, await asManager('PUT', `/api/users/${u.id}/companies`, { companyIds: [] }), 403, 'ADMIN_REQUIRED', 'nor assign companies');
  const none = await rolelessUser(ctx, tenant);
  expectProblem(t, await apiAs(ctx, none.token)('PUT', `/api/users/${u.id}/roles`, { roleIds: [] }), 403, 'ROLE_REQUIRED');
  expectProblem(t, await ctx.app.inject({ method: 'PUT', url: `/api/users/${u.id}/roles`, payload: { roleIds: [] } }), 401, 'UNAUTHENTICATED');

  const bad = await api('PUT', `/api/users/${u.id}/roles`, { roleIds: [member, UNKNOWN_ID] });
  expectProblem(t, bad, 400, 'VALIDATION_FAILED', 'an unknown role');
  t.same(
    bad.json().errors.map((e: { path: string }) => e.path),
    ['/roleIds/1'],
  );
  for (const body of [{ roleIds: ['admin'] }, { roleIds: [member, member] }, {}, { roleIds: [], extra: 1 }, { roleIds: 'member' }]) {
    expectProblem(t, await api('PUT', `/api/users/${u.id}/roles`, body), 400, 'VALIDATION_FAILED', JSON.stringify(body));
  }
  t.same(
    expectStatus(await api('GET', `/api/users/${u.id}/roles`), 200, 'unchanged').items.map((r: { name: string }) => r.name),
    ['member'],
    'a refused change changed nothing',
  );
  expectProblem(t, await api('PUT', `/api/users/${UNKNOWN_ID}/roles`, { roleIds: [] }), 404, 'NOT_FOUND');

  // the tenant keeps an administrator
  expectProblem(t, await api('PUT', `/api/users/${me.id}/roles`, { roleIds: [member] }), 409, 'CONFLICT', 'the last admin');
  expectStatus(await api('PUT', `/api/users/${u.id}/roles`, { roleIds: [admin, member] }), 200, 'a second admin');
  t.same(expectStatus(await api('PUT', `/api/users/${u.id}/roles`, { roleIds: [] }), 200, 'no roles').items, []);
});

t.test('companies: replaced by administrators, in the next token', async (t) => {
  const u = await newUser();
  const other = expectStatus(await api('POST', '/api/companies', { code: 'U-C', translations: { name: { en: 'Branch', de: 'Filiale' } } }), 201, 'company');
  const set = expectStatus(await api('PUT', `/api/users/${u.id}/companies`, { companyIds: [other.id, tenant.companyId] }, { 'accept-language': 'de' }), 200, 'set');
  t.same(
    set.items.map((c: { code: string; name: string }) => [c.code, c.name]),
    [
      ['HQ', 'Headquarters'],
      ['U-C', 'Filiale'],
    ],
  );
  const login = expectStatus(await ctx.login(tenant.id, u.email, PASSWORD), 200, 'login');
  t.same(
    expectStatus(await apiAs(ctx, login.accessToken)('GET', '/api/auth/me'), 200, 'me')
      .companies.map((c: { id: string }) => c.id)
      .sort(),
    [other.id, tenant.companyId].sort(),
  );
  const bad = await api('PUT', `/api/users/${u.id}/companies`, { companyIds: [UNKNOWN_ID] });
  expectProblem(t, bad, 400, 'VALIDATION_FAILED');
  t.same(
    bad.json().errors.map((e: { path: string }) => e.path),
    ['/companyIds/0'],
  );
  t.same(expectStatus(await api('GET', `/api/users/${u.id}/companies`), 200, 'get').total, 2);
});

t.test('read privilege: core:user:view lists, nothing else does', async (t) => {
  const viewer = await ctx.user(tenant, { codes: ['core:user:view'] });
  const asViewer = apiAs(ctx, viewer.token);
  const page = expectStatus(await asViewer('GET', '/api/users?page=1&size=1000&sort=-createdAt'), 200, 'list');
  t.ok(page.total >= 2);
  t.equal(page.items[0].id, viewer.id, 'most recent first');
  expectProblem(t, await asViewer('POST', '/api/users', { email: 'v@x.test', name: 'v', password: PASSWORD }), 403, 'FORBIDDEN', 'view only: no create');
  expectProblem(t, await asViewer('PATCH', `/api/users/${viewer.id}`, { name: 'v' }), 403, 'FORBIDDEN', 'view only: no update');
  expectProblem(t, await asViewer('PUT', `/api/users/${viewer.id}/password`, { password: 'long enough!' }), 403, 'FORBIDDEN', 'view only: no password');
  const catalog = await ctx.user(tenant, { codes: ['erp:catalog:view'] });
  for (const url of ['/api/users', `/api/users/${viewer.id}`]) {
    expectProblem(t, await apiAs(ctx, catalog.token)('GET', url), 403, 'FORBIDDEN', `${url} without core:user:view`);
  }
  for (const url of [`/api/users/${viewer.id}/roles`, `/api/users/${viewer.id}/companies`]) {
    expectProblem(t, await asViewer('GET', url), 403, 'ADMIN_REQUIRED', `${url}: administrators only`);
  }
  expectProblem(t, await ctx.app.inject({ method: 'GET', url: '/api/users' }), 401, 'UNAUTHENTICATED');
});

t.test('other tenants', async (t) => {
  const other = await ctx.tenant();
  const u = await newUser();
  const theirs = apiAs(ctx, other.adminToken);
  for (const [method, url] of [
    ['GET', `/api/users/${u.id}`],
    ['PATCH', `/api/users/${u.id}`],
    ['GET', `/api/users/${u.id}/roles`],
    ['PUT', `/api/users/${u.id}/companies`],
    ['PUT', `/api/users/${u.id}/password`],
  ] as const) {
    const body = method === 'PATCH' ? { name: 'x' } : url.endsWith('companies') ? { companyIds: [] } : url.endsWith('password') ? { password: 'long enough!' } : undefined;
    expectProblem(t, await theirs(method, url, body), 404, 'NOT_FOUND', `${method} ${url}`);
  }
  expectProblem(t, await api('PUT', `/api/users/${u.id}/companies`, { companyIds: [other.companyId] }), 400, 'VALIDATION_FAILED', "another tenant's company");
  t.equal(expectStatus(await theirs('GET', '/api/users?size=1000'), 200, 'their list').total, 1);
});

t.test('bad input', async (t) => {
  const u = await newUser();
  const good = { email: 'bad@example.test', name: 'Bad', password: PASSWORD };
  const bodies: [string, Record<string, unknown>, string][] = [
    ['password missing', { ...good, password: undefined }, '/password'],
    ['password too short', { ...good, password: 'short' }, '/password'],
    ['password huge', { ...good, password: 'p'.repeat(5000) }, '/password'],
    ['e-mail not an address', { ...good, email: 'nobody' }, '/email'],
    ['passwordHash is not writable', { ...good, passwordHash: 'scrypt$1$1$1$x$y' }, '/passwordHash'],
    ['unknown field', { ...good, admin: true }, '/admin'],
    ['isActive a string', { ...good, isActive: 'no' }, '/isActive'],
    ['primary company that does not exist', { ...good, primaryCompanyId: UNKNOWN_ID }, '/primaryCompanyId'],
    ['name too long', { ...good, name: 'n'.repeat(201) }, '/name'],
  ];
  for (const [what, body, path] of bodies) {
    const res = await api('POST', '/api/users', body);
    expectProblem(t, res, 400, 'VALIDATION_FAILED', what);
    t.ok(
      res.json().errors?.some((e: { path: string }) => e.path === path),
      `${what} names ${path}: ${res.body.slice(0, 300)}`,
    );
  }
  expectProblem(t, await ctx.login(tenant.id, good.email, PASSWORD), 401, 'INVALID_CREDENTIALS', 'nothing was created');
  expectProblem(t, await api('PATCH', `/api/users/${u.id}`, { passwordHash: 'x' }), 400, 'VALIDATION_FAILED', 'PATCH passwordHash');
  expectProblem(t, await api('PATCH', `/api/users/${u.id}`, { password: 'long enough!' }), 400, 'VALIDATION_FAILED', 'PATCH password (use PUT /password)');
  expectProblem(t, await api('PATCH', `/api/users/${u.id}`, { name: 'x' }, { 'if-match': '"7"' }), 412, 'PRECONDITION_FAILED', 'stale If-Match');
  t.equal(expectStatus(await api('PATCH', `/api/users/${u.id}`, { email: 'Renamed@Example.TEST' }), 200, 'patch e-mail').email, 'renamed@example.test', 'stored lower-case, as login compares');
});
