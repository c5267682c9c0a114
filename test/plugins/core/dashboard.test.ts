// What the core dashboard asks for in one round: the four registration lists
// with page=1&size=1000 (counts from total, active ones with isActive=true, the
// most recent with sort=-createdAt) and GET /api/auth/db; and who may open the
// page (seed §5: full-access users only).
import t from 'tap';
import { build, PASSWORD } from '../../helper.ts';
import { ConsoleSession, menuOf } from '../../support/console-session.ts';
import { apiAs, expectProblem, expectStatus } from './core-api.ts';

const ctx = await build(t);
const tenant = await ctx.tenant();
const other = await ctx.tenant();
const api = apiAs(ctx, tenant.adminToken);

t.test('the four paged lists give the cards their counts', async (t) => {
  for (let i = 0; i < 3; i++) expectStatus(await api('POST', '/api/companies', { code: `D-${i}`, name: `D ${i}`, isActive: i !== 0 }), 201, 'company');
  for (let i = 0; i < 2; i++) expectStatus(await api('POST', '/api/organizations', { code: `O-${i}`, name: `O ${i}` }), 201, 'organization');
  for (let i = 0; i < 4; i++) expectStatus(await api('POST', '/api/users', { email: `d${i}@example.test`, name: `D ${i}`, password: PASSWORD, isActive: i < 3 }), 201, 'user');
  expectStatus(await api('POST', '/api/groups', { name: 'Only group' }), 201, 'group');
  const lists = ['/api/companies', '/api/organizations', '/api/users', '/api/groups'];
  const [companies, organizations, users, groups] = await Promise.all(lists.map((l) => api('GET', `${l}?page=1&size=1000`)));
  t.same(
    [companies, organizations, users, groups].map((r) => r.json().total),
    [4, 2, 5, 1],
    'totals: HQ + 3, 2, admin + 4, 1',
  );
  const active = await Promise.all(lists.map(async (l) => expectStatus(await api('GET', `${l}?page=1&size=1000&isActive=true`), 200, l).total));
  t.same(active, [3, 2, 4, 1], 'active ones');
  const recentUsers = expectStatus(await api('GET', '/api/users?page=1&size=5&sort=-createdAt'), 200, 'recent users').items;
  t.same(recentUsers.map((u: { email: string }) => u.email).slice(0, 4), ['d3@example.test', 'd2@example.test', 'd1@example.test', 'd0@example.test']);
  const recentCompanies = expectStatus(await api('GET', '/api/companies?page=1&size=5&sort=-createdAt'), 200, 'recent companies').items;
  t.same(
    recentCompanies.map((c: { code: string }) => c.code),
    ['D-2', 'D-1', 'D-0', 'HQ'],
  );
  t.equal(expectStatus(await apiAs(ctx, other.adminToken)('GET', '/api/users?page=1&size=1000'), 200, 'other').total, 1, 'another tenant counts only its own');
});

t.test("GET /api/auth/db: the caller's tenant schema by table, nothing else", async (t) => {
  const res = await api('GET', '/api/auth/db');
  t.equal(res.statusCode, 200, res.body);
  const size = res.json();
  t.equal(size.scope, 'tenant');
  t.equal(size.schemas.length, 1);
  const [schema] = size.schemas;
  t.match(schema, { name: tenant.schema, tenant: tenant.id });
  const tables = schema.tables.map((x: { name: string }) => x.name);
  for (const table of ['core_companies', 'core_users', 'core_email_accounts', 'catalog_products']) t.ok(tables.includes(table), table);
  t.ok(schema.tables.every((x: { bytes: number }) => Number.isInteger(x.bytes) && x.bytes > 0));
  t.same(
    schema.tables.map((x: { bytes: number }) => x.bytes),
    [...schema.tables.map((x: { bytes: number }) => x.bytes)].sort((a, b) => b - a),
    'largest first',
  );
  t.equal(
    schema.bytes,
    schema.tables.reduce((s: number, x: { bytes: number }) => s + x.bytes, 0),
  );
  t.equal(size.totalBytes, schema.bytes, "the total is the tenant's own, not the database's");
  t.notOk(res.body.includes(other.schema) || res.body.includes('platform'), 'no other schema named');

  const theirs = expectStatus(await apiAs(ctx, other.adminToken)('GET', '/api/auth/db'), 200, 'other');
  t.equal(theirs.schemas[0].name, other.schema);
  t.notOk(JSON.stringify(theirs).includes(tenant.schema));

  // the dashboard's permission: a user without it learns no table name or size
  const viewer = await ctx.user(tenant, { codes: ['core:dashboard:view'] });
  t.equal(expectStatus(await apiAs(ctx, viewer.token)('GET', '/api/auth/db'), 200, 'dashboard viewer').schemas[0].name, tenant.schema);
  for (const codes of [[], ['erp:catalog:view'], ['core:company:view', 'core:user:view']]) {
    const user = await ctx.user(tenant, { codes });
    expectProblem(t, await apiAs(ctx, user.token)('GET', '/api/auth/db'), 403, 'FORBIDDEN', `codes ${codes.join() || 'none'}`);
  }
  expectProblem(t, await ctx.app.inject({ method: 'GET', url: '/api/auth/db' }), 401, 'UNAUTHENTICATED');
  expectProblem(t, await api('GET', '/api/auth/db?schema=public'), 400, 'VALIDATION_FAILED', 'no parameters');
  expectProblem(t, await api('POST', '/api/auth/db'), 404, 'NOT_FOUND');
});

t.test("the dashboard permission codes are the seed's", async (t) => {
  const me = expectStatus(await api('GET', '/api/auth/me'), 200, 'me');
  for (const code of ['core:dashboard:view', 'core:company:view', 'core:email:view', 'core:organization:view', 'core:user:view', 'core:group:view']) {
    t.ok(me.permissions.includes(code), `admin holds ${code}`);
  }
  const member = apiAs(ctx, (await ctx.user(tenant, { codes: ['core:dashboard:view'] })).token);
  for (const list of ['/api/organizations', '/api/users', '/api/groups']) {
    expectProblem(t, await member('GET', `${list}?page=1&size=1000`), 403, 'FORBIDDEN', `${list}: the dashboard code alone reads no list`);
  }
  expectProblem(t, await member('GET', '/api/companies?page=1&size=1000'), 403, 'ADMIN_REQUIRED');
});

t.test('the dashboard page opens for full-access users only, and only they find it in the menu', async (t) => {
  const session = async (email: string) => {
    const s = new ConsoleSession(ctx.app);
    const res = await s.login(tenant.id, email, PASSWORD);
    t.equal(res.statusCode, 303, `${email} logs in`);
    return { s, landing: (await s.get(res.headers.location!)).headers.location };
  };
  const admin = await session(tenant.adminEmail);
  t.equal(admin.landing, '/dashboard', 'an administrator lands on the dashboard');
  const page = await admin.s.get('/dashboard');
  t.equal(page.statusCode, 200);
  t.match(page.body, /class="card"/);
  t.ok(menuOf(page.body).includes('/dashboard'));

  // the dashboard's code and readable lists, but no full access
  const viewer = await ctx.user(tenant, { codes: ['core:dashboard:view', 'core:user:view', 'core:group:view', 'erp:catalog:view'] });
  const v = await session(viewer.email);
  t.equal(v.landing, '/users', 'lands on the first page they may open, not on a refusal');
  const refused = await v.s.get('/dashboard');
  t.equal(refused.statusCode, 403);
  t.notMatch(refused.body, /class="card"|database-parts/, 'no card, no database size');
  t.notOk(menuOf(refused.body).includes('/dashboard'), 'not in their menu');
  t.ok(menuOf(refused.body).includes('/users'), 'the menu around the refusal holds their pages');
  const sent = new ConsoleSession(ctx.app);
  const login = await sent.login(tenant.id, viewer.email, PASSWORD, '/dashboard');
  t.equal((await sent.get(login.headers.location!)).headers.location, '/users', 'a login with next=/dashboard lands on their first page');

  const nobody = await ctx.user(tenant, { codes: [] });
  const n = await session(nobody.email);
  t.equal(n.landing, undefined, 'no page to go to: the home page says so');
  t.equal((await n.s.get('/dashboard')).statusCode, 403, 'a user without permissions gets no empty dashboard');
});
