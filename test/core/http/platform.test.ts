// Tenant administration by platform operators: the users of the reserved
// tenant "platform". Tenants this file creates through the API are dropped again.
import t, { type Test } from 'tap';
import { build, onPglite, PASSWORD, uniqueId, type TestContext } from '../../helper.ts';
import { provisionTenant } from '../../../core/tenancy/provision.ts';
import { PLATFORM_TENANT, schemaFor } from '../../../core/tenancy/registry.ts';

/** The schema of the tenant registry (configurable; "platform" by default). */
const registrySchema = (kernel: { config: object }) => (kernel.config as { registrySchema?: string }).registrySchema ?? 'platform';

interface Setup {
  ctx: TestContext;
  operatorToken: string;
  cleanup: (tenantId: string) => void;
}

/** build(t) plus a platform operator; tenants passed to cleanup() and the operator go at teardown. */
async function setup(t: Test): Promise<Setup> {
  const helperTeardowns: (() => unknown)[] = [];
  const extra: string[] = [];
  let platformCreated = false;
  let operatorEmail: string | undefined;
  // ours first, then the helper's (which closes the kernel)
  t.teardown(async () => {
    const { kernel } = ctx;
    const conn = kernel.dbs.main.em.getConnection();
    const drop = async (id: string) => {
      await conn.execute(`drop schema if exists "${schemaFor(id)}" cascade`);
      await conn.execute(`delete from "${registrySchema(kernel)}".tenants where id = ?`, [id]);
    };
    for (const id of extra) await drop(id);
    if (platformCreated) await drop(PLATFORM_TENANT);
    else if (operatorEmail) {
      const p = kernel.tenants.cached(PLATFORM_TENANT)!;
      await kernel.dbs.get(p.connectionKey).em.fork({ schema: p.schema }).nativeDelete(kernel.model('User').ormEntity, { email: operatorEmail });
    }
    for (const fn of helperTeardowns) await fn();
  });
  // a kernel of its own: it makes and drops the reserved tenant "platform", which a shared kernel would keep cached
  const ctx = await build({ teardown: (fn) => helperTeardowns.push(fn) }, { own: true });
  operatorEmail = `${uniqueId('operator')}@platform.test`;
  const r = await provisionTenant(ctx.kernel, {
    id: PLATFORM_TENANT,
    name: 'Platform operators',
    company: { code: 'PLATFORM', name: 'Platform' },
    admin: { email: operatorEmail, name: 'Operator', password: PASSWORD },
  });
  platformCreated = r.created;
  const login = await ctx.login(PLATFORM_TENANT, operatorEmail, PASSWORD);
  if (login.statusCode !== 200) throw new Error(login.body);
  return { ctx, operatorToken: login.json().accessToken, cleanup: (id) => extra.push(id) };
}

const newTenant = (id: string, o: Record<string, unknown> = {}) => ({
  id,
  name: `Tenant ${id}`,
  company: { code: 'HQ', name: 'Zentrale' },
  admin: { email: `boss@${id}.test`, name: 'Boss', password: PASSWORD },
  ...o,
});

t.test('platform tenant administration', async (t) => {
  const { ctx, operatorToken, cleanup } = await setup(t);
  const post = (payload: unknown, token = operatorToken) => ctx.as(token, { method: 'POST', url: '/api/platform/tenants', payload: payload as object });

  t.test('an operator provisions a tenant; repeating it changes nothing', async (t) => {
    const id = uniqueId('p');
    cleanup(id);
    const created = await post(newTenant(id, { defaultLanguage: 'de', timeZone: 'Europe/Berlin' }));
    t.equal(created.statusCode, 201, created.body);
    t.equal(created.headers.location, `/api/platform/tenants/${id}`);
    const body = created.json();
    t.same(Object.keys(body).sort(), ['connectionKey', 'createdAt', 'defaultLanguage', 'id', 'migrationError', 'name', 'schema', 'status', 'timeZone']);
    t.match(body, { id, name: `Tenant ${id}`, connectionKey: 'main', schema: schemaFor(id), status: 'active', defaultLanguage: 'de', timeZone: 'Europe/Berlin' });
    t.ok(!Number.isNaN(Date.parse(body.createdAt)));

    const again = await post(newTenant(id, { defaultLanguage: 'de', timeZone: 'Europe/Berlin' }));
    t.equal(again.statusCode, 200, 'idempotent');
    t.equal(again.headers.location, `/api/platform/tenants/${id}`);
    t.same(again.json(), body);

    const login = await ctx.login(id, `boss@${id}.test`, PASSWORD);
    t.equal(login.statusCode, 200, "the new tenant's admin can log in");
    const me = (await ctx.as(login.json().accessToken, { method: 'GET', url: '/api/auth/me' })).json();
    t.same(me.roles, ['admin']);
    t.equal(me.companies[0].name, 'Zentrale');
    const platformOnly = await ctx.as(login.json().accessToken, { method: 'GET', url: '/api/platform/tenants' });
    t.equal(platformOnly.json().code, 'PLATFORM_ONLY', 'and is no operator');
  });

  t.test('a time zone must be one the runtime knows; without one it is UTC', async (t) => {
    for (const tz of ['Mars/Olympus_Mons', 'UTC+25', '']) {
      const res = await post(newTenant(uniqueId('p'), { timeZone: tz }));
      t.equal(res.statusCode, 400, JSON.stringify(tz));
      t.equal(res.json().errors?.[0]?.path, '/timeZone');
    }
    const id = uniqueId('p');
    cleanup(id);
    t.equal((await post(newTenant(id))).json().timeZone, 'UTC');
  });

  t.test("operators see every tenant's jobs and the queues; tenant users do not", async (t) => {
    const queues = await ctx.as(operatorToken, { method: 'GET', url: '/api/platform/queues' });
    t.equal(queues.statusCode, 200, queues.body);
    const names = queues.json().map((q: { name: string }) => q.name);
    t.ok(names.includes('plinth.subscriber') && names.includes('core.deliver-webhook') && names.includes('core.deliver-webhook.dead'), names.join(', '));
    t.match(queues.json()[0], { database: 'main', queued: Number, active: Number, failed: Number, total: Number });
    const jobs = await ctx.as(operatorToken, { method: 'GET', url: '/api/platform/jobs?size=5&state=failed' });
    t.equal(jobs.statusCode, 200, jobs.body);
    t.match(jobs.json(), { page: 1, size: 5, total: Number });
    t.equal((await ctx.as(operatorToken, { method: 'GET', url: '/api/platform/jobs?database=nowhere' })).statusCode, 400);
    const id = uniqueId('p');
    cleanup(id);
    await post(newTenant(id));
    const admin = (await ctx.login(id, `boss@${id}.test`, PASSWORD)).json().accessToken;
    for (const url of ['/api/platform/jobs', '/api/platform/queues']) t.equal((await ctx.as(admin, { method: 'GET', url })).json().code, 'PLATFORM_ONLY', url);
  });

  t.test("operators see this process's connection pools and how their lanes were used; tenant users do not", async (t) => {
    const url = '/api/platform/database-pools';
    const id = uniqueId('p');
    cleanup(id);
    await post(newTenant(id));
    const admin = (await ctx.login(id, `boss@${id}.test`, PASSWORD)).json().accessToken;
    const pools = async () => {
      const res = await ctx.as(operatorToken, { method: 'GET', url });
      t.equal(res.statusCode, 200, res.body);
      return res.json();
    };
    const before = await pools();
    t.equal((await ctx.as(admin, { method: 'GET', url: '/api/products' })).statusCode, 200, "a tenant's request");
    const after = await pools();
    if (onPglite) t.same(after, [], 'embedded PGlite has no pool');
    else {
      t.match(after[0], { database: 'main', lanes: ctx.kernel.config.poolSize, connections: Number, idle: Number, waiting: 0, waited: Number, timedOut: Number });
      const routed = (p: { checkouts: { home: number; otherLane: number } }) => p.checkouts.home + p.checkouts.otherLane;
      t.ok(routed(after[0]) > routed(before[0]), `the tenant's statements were routed by its schema (${JSON.stringify(after[0].checkouts)})`);
    }
    t.equal((await ctx.as(operatorToken, { method: 'GET', url: `${url}?lane=1` })).statusCode, 400, 'an unknown parameter');
    t.equal((await ctx.app.inject({ method: 'GET', url })).statusCode, 401, 'no token');
    t.equal((await ctx.as(admin, { method: 'GET', url })).json().code, 'PLATFORM_ONLY');
  });

  t.test('list and read', async (t) => {
    const id = uniqueId('p');
    cleanup(id);
    t.equal((await post(newTenant(id))).statusCode, 201);
    const list = await ctx.as(operatorToken, { method: 'GET', url: '/api/platform/tenants?size=1000' });
    t.equal(list.statusCode, 200, list.body);
    const page = list.json();
    t.match(page, { page: 1, size: 1000 });
    t.ok(page.total >= 2);
    t.ok(page.items.some((x: { id: string }) => x.id === id));
    t.ok(page.items.some((x: { id: string }) => x.id === PLATFORM_TENANT));
    const small = (await ctx.as(operatorToken, { method: 'GET', url: '/api/platform/tenants?size=1&page=2' })).json();
    t.equal(small.items.length, 1);
    // other test files add and drop tenants of the shared registry meanwhile: the count, not the same count
    t.ok(small.total >= 2, 'a paged list counts every tenant too');
    const one = await ctx.as(operatorToken, { method: 'GET', url: `/api/platform/tenants/${id}` });
    t.equal(one.statusCode, 200);
    t.equal(one.json().id, id);
    const unknown = await ctx.as(operatorToken, { method: 'GET', url: `/api/platform/tenants/${uniqueId('nope')}` });
    t.equal(unknown.statusCode, 404);
    t.equal(unknown.json().code, 'NOT_FOUND');
    for (const url of ['/api/platform/tenants/NOT_AN_ID', '/api/platform/tenants?size=0', '/api/platform/tenants?page=x', '/api/platform/tenants?bogus=1']) {
      const res = await ctx.as(operatorToken, { method: 'GET', url });
      t.equal(res.statusCode, 400, url);
      t.equal(res.json().code, 'VALIDATION_FAILED', url);
    }
  });

  t.test('bad input is a 400', async (t) => {
    const id = uniqueId('p');
    const good = newTenant(id);
    const bodies: [string, unknown][] = [
      ['unknown field', { ...good, plan: 'gold' }],
      ['missing admin', { ...good, admin: undefined }],
      ['missing company', { ...good, company: undefined }],
      ['id not a slug', { ...good, id: 'Not_A_Slug' }],
      ['id too long', { ...good, id: `a${'b'.repeat(60)}` }],
      ['bad e-mail', { ...good, admin: { ...good.admin, email: 'not-an-email' } }],
      ['short password', { ...good, admin: { ...good.admin, password: 'short' } }],
      ['unknown admin field', { ...good, admin: { ...good.admin, role: 'root' } }],
      ['name not a string', { ...good, name: 42 }],
      ['bad language', { ...good, defaultLanguage: 'German' }],
      ['unknown connection', { ...good, connectionKey: 'nowhere' }],
    ];
    for (const [name, payload] of bodies) {
      const res = await post(payload);
      t.equal(res.statusCode, 400, name);
      t.equal(res.json().code, 'VALIDATION_FAILED', name);
    }
    const read = await ctx.as(operatorToken, { method: 'GET', url: `/api/platform/tenants/${id}` });
    t.equal(read.statusCode, 404, 'nothing was created');
  });

  t.test('the platform tenant itself is reserved: 409', async (t) => {
    const res = await post(newTenant(PLATFORM_TENANT));
    t.equal(res.statusCode, 409);
    t.equal(res.json().code, 'CONFLICT');
  });

  t.test('only platform operators get in', async (t) => {
    const tenant = await ctx.tenant();
    const id = uniqueId('p');
    for (const [method, url] of [
      ['POST', '/api/platform/tenants'],
      ['GET', '/api/platform/tenants'],
      ['GET', `/api/platform/tenants/${tenant.id}`],
    ] as const) {
      const res = await ctx.as(tenant.adminToken, { method, url, ...(method === 'POST' ? { payload: newTenant(id) } : {}) });
      t.equal(res.statusCode, 403, `${method} ${url} by a tenant admin`);
      t.equal(res.json().code, 'PLATFORM_ONLY');
      const anonymous = await ctx.app.inject({ method, url, ...(method === 'POST' ? { payload: newTenant(id) } : {}) });
      t.equal(anonymous.statusCode, 401);
      t.equal(anonymous.json().code, 'UNAUTHENTICATED');
    }
    t.equal((await ctx.as(operatorToken, { method: 'GET', url: `/api/platform/tenants/${id}` })).statusCode, 404, 'nothing was created');

    const platform = ctx.kernel.tenants.cached(PLATFORM_TENANT)!;
    const pt = {
      id: PLATFORM_TENANT,
      schema: platform.schema,
      companyId: (await ctx.as(operatorToken, { method: 'GET', url: '/api/auth/me' })).json().companyId,
      adminEmail: '',
      adminToken: operatorToken,
    };
    const role = uniqueId('helper');
    const helper = await ctx.user(pt, { codes: [], role });
    const notAdmin = await ctx.as(helper.token, { method: 'GET', url: '/api/platform/tenants' });
    t.equal(notAdmin.statusCode, 403, 'a platform user who is no admin');
    t.equal(notAdmin.json().code, 'ADMIN_REQUIRED');
    const em = ctx.kernel.dbs.get(platform.connectionKey).em.fork({ schema: platform.schema });
    await em.nativeDelete(ctx.kernel.model('UserRole').ormEntity, { userId: helper.id });
    const roleless = await ctx.login(PLATFORM_TENANT, helper.email, PASSWORD);
    const noRole = await ctx.as(roleless.json().accessToken, { method: 'GET', url: '/api/platform/tenants' });
    t.equal(noRole.statusCode, 403, 'a platform user with no role');
    t.equal(noRole.json().code, 'ROLE_REQUIRED');
    await em.nativeDelete(ctx.kernel.model('User').ormEntity, { id: helper.id });
    await em.nativeDelete(ctx.kernel.model('Role').ormEntity, { name: role });
  });
});

/** An operator's new tenant (gone at teardown) and its admin ("boss") logged in. */
async function tenantWithBoss(t: Test, prefix: string) {
  const { ctx, operatorToken, cleanup } = await setup(t);
  const id = uniqueId(prefix);
  cleanup(id);
  const op = (method: 'GET' | 'POST', url: string, token = operatorToken) => ctx.as(token, { method, url });
  t.equal((await ctx.as(operatorToken, { method: 'POST', url: '/api/platform/tenants', payload: newTenant(id) })).statusCode, 201);
  const login = (await ctx.login(id, `boss@${id}.test`, PASSWORD)).json();
  const asBoss = () => ctx.as(login.accessToken, { method: 'GET', url: '/api/auth/me' });
  return { ctx, id, op, login, asBoss };
}

t.test('suspend and resume a tenant', async (t) => {
  const { ctx, id, op, login, asBoss } = await tenantWithBoss(t, 'p');
  t.equal((await asBoss()).statusCode, 200);

  const suspended = await op('POST', `/api/platform/tenants/${id}/suspend`);
  t.equal(suspended.statusCode, 200, suspended.body);
  t.match(suspended.json(), { id, status: 'suspended' });
  t.equal((await op('GET', `/api/platform/tenants/${id}`)).json().status, 'suspended', 'read back');
  const refused = await asBoss();
  t.equal(refused.statusCode, 403, "the tenant's tokens stop working at once");
  t.equal(refused.json().code, 'TENANT_UNAVAILABLE');
  t.equal((await ctx.login(id, `boss@${id}.test`, PASSWORD)).json().code, 'TENANT_UNAVAILABLE', 'no new login');
  t.equal((await ctx.app.inject({ method: 'POST', url: '/api/auth/refresh', payload: { refreshToken: login.refreshToken } })).json().code, 'TENANT_UNAVAILABLE', 'no refresh');
  t.equal((await op('POST', `/api/platform/tenants/${id}/suspend`)).statusCode, 200, 'suspending again is fine');

  const resumed = await op('POST', `/api/platform/tenants/${id}/resume`);
  t.equal(resumed.statusCode, 200);
  t.equal(resumed.json().status, 'active');
  t.equal((await asBoss()).statusCode, 200, 'the same token works again');
  t.equal((await op('POST', `/api/platform/tenants/${id}/resume`)).statusCode, 200, 'resuming again is fine');

  for (const verb of ['suspend', 'resume']) {
    const self = await op('POST', `/api/platform/tenants/${PLATFORM_TENANT}/${verb}`);
    t.equal(self.statusCode, 409, `the platform tenant cannot ${verb}`);
    t.equal(self.json().code, 'CONFLICT');
    const unknown = await op('POST', `/api/platform/tenants/${uniqueId('nope')}/${verb}`);
    t.equal(unknown.statusCode, 404);
    t.equal((await op('POST', `/api/platform/tenants/NOT_AN_ID/${verb}`)).statusCode, 400);
    t.equal((await op('POST', `/api/platform/tenants/${id}/${verb}`, login.accessToken)).json().code, 'PLATFORM_ONLY', 'a tenant admin is no operator');
    t.equal((await ctx.app.inject({ method: 'POST', url: `/api/platform/tenants/${id}/${verb}` })).statusCode, 401);
  }
  const tenant = await ctx.tenant();
  t.equal((await op('POST', `/api/platform/tenants/${tenant.id}/suspend`, tenant.adminToken)).json().code, 'PLATFORM_ONLY');
  t.equal((await ctx.as(tenant.adminToken, { method: 'GET', url: '/api/auth/me' })).statusCode, 200, 'other tenants carry on');
});

t.test('a tenant whose migration failed answers 503 until an operator migrates it', async (t) => {
  const { ctx, id, op, login, asBoss } = await tenantWithBoss(t, 'm');
  // as npm run migrate records a schema the change did not fit (test/core/migrations.test.ts makes a real one)
  const error = { code: 'MIGRATION_FAILED', message: 'table "catalog_products" has rows', statements: ['alter table x add "ean" varchar(13) not null'], at: new Date().toISOString() };
  await ctx.kernel.tenants.setMigrationError(id, error);
  const refused = await asBoss();
  t.same([refused.statusCode, refused.json().code], [503, 'TENANT_MIGRATION_FAILED']);
  t.match(refused.json().detail, `POST /api/platform/tenants/${id}/migrate`);
  t.equal((await ctx.login(id, `boss@${id}.test`, PASSWORD)).json().code, 'TENANT_MIGRATION_FAILED', 'no new login');
  t.equal((await ctx.app.inject({ method: 'POST', url: '/api/auth/refresh', payload: { refreshToken: login.refreshToken } })).json().code, 'TENANT_MIGRATION_FAILED', 'no refresh');
  const shown = (await op('GET', `/api/platform/tenants/${id}`)).json();
  t.same(shown.migrationError, error, 'operators see why');
  t.ok(
    (await op('GET', '/api/platform/tenants?size=1000')).json().items.some((x: { id: string; migrationError: unknown }) => x.id === id && x.migrationError),
    'and in the list',
  );
  const other = await ctx.tenant();
  t.equal((await ctx.as(other.adminToken, { method: 'GET', url: '/api/auth/me' })).statusCode, 200, 'other tenants carry on');

  t.equal((await op('POST', `/api/platform/tenants/${id}/migrate`, login.accessToken)).json().code, 'TENANT_MIGRATION_FAILED', "the tenant's own admin cannot");
  t.equal((await op('POST', `/api/platform/tenants/${other.id}/migrate`, other.adminToken)).json().code, 'PLATFORM_ONLY');
  t.equal((await op('POST', `/api/platform/tenants/${uniqueId('nope')}/migrate`)).statusCode, 404);
  t.equal((await op('POST', '/api/platform/tenants/NOT_AN_ID/migrate')).statusCode, 400);
  const migrated = await op('POST', `/api/platform/tenants/${id}/migrate`);
  t.same([migrated.statusCode, migrated.json().migrationError], [200, null], 'its schema is current: the mark goes');
  t.equal((await asBoss()).statusCode, 200, 'the same token works again');
});

t.test('GET /api/auth/db for an operator: the whole database by schema', async (t) => {
  const { ctx, operatorToken } = await setup(t);
  const tenant = await ctx.tenant();
  const res = await ctx.as(operatorToken, { method: 'GET', url: '/api/auth/db' });
  t.equal(res.statusCode, 200, res.body);
  const size = res.json();
  t.equal(size.scope, 'database');
  t.ok(size.totalBytes > 0);
  const names = size.schemas.map((s: { name: string }) => s.name);
  t.ok(names.includes(tenant.schema) && names.includes(registrySchema(ctx.kernel)), 'tenant schemas and the registry');
  t.match(
    size.schemas.find((s: { name: string }) => s.name === tenant.schema),
    { tenant: tenant.id },
  );
  t.ok(size.schemas.every((s: { bytes: number; tables?: unknown }) => Number.isInteger(s.bytes) && s.tables === undefined));
  t.ok(size.schemas.reduce((sum: number, s: { bytes: number }) => sum + s.bytes, 0) <= size.totalBytes);
  t.notOk(
    names.some((n: string) => n.startsWith('pg_') || n === 'information_schema'),
    'no system schemas',
  );
  const own = (await ctx.as(tenant.adminToken, { method: 'GET', url: '/api/auth/db' })).json();
  t.equal(own.scope, 'tenant', 'a tenant admin sees their schema only');
});
