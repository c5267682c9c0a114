// Plinth behind PgBouncer in transaction pooling (Debian's pgbouncer): two
// processes whose pools of 10 share 3 server connections, so every request's
// transaction may run on a connection another tenant's just used. Tenants are
// provisioned, written and read concurrently and each sees its own rows only;
// a stale write is refused, a failed one rolls back, analytics' read-only
// transaction and statement timeout end with it; NOTIFY sent through the
// pooler reaches the other process, whose LISTEN is on its direct session
// URL (DATABASE_SESSION_URL): a logout and a cached result end there at once.
import t from 'tap';
import { loadConfig } from '../../../core/config.ts';
import { build, onPglite, TEST_DATABASE_URL, type TestContext, type TestTenant } from '../../helper.ts';
import { pgbouncerUnavailable, startPgbouncer, type Bouncer } from '../../support/pgbouncer.ts';
import { until } from '../../support/wait.ts';

const skip = onPglite ? 'embedded PGlite has no network server to pool' : pgbouncerUnavailable();
const SERVER_CONNECTIONS = 3;

t.test('DATABASE_SESSION_URL: per key, defaulting to the database URL', async (t) => {
  const config = loadConfig({ DATABASE_URL: 'postgres://bouncer/db', DATABASE_SESSION_URL: 'postgres://direct/db', DATABASE_URL_EU: 'postgres://eu/db' });
  t.same(config.sessionDatabases, { main: 'postgres://direct/db' });
  t.throws(() => loadConfig({ DATABASE_URL: 'postgres://a/db', DATABASE_SESSION_URL_EU: 'postgres://b/db' }), /DATABASE_SESSION_URL_EU is set without its DATABASE_URL_EU/);
});

t.test('behind PgBouncer in transaction pooling', { skip }, async (t) => {
  const database = new URL(TEST_DATABASE_URL);
  const bouncer: Bouncer = await startPgbouncer(t, { server: `${database.hostname}:${database.port || 5432}`, database: database.pathname.slice(1), serverConnections: SERVER_CONNECTIONS });
  const through = { databases: { main: bouncer.url }, sessionDatabases: { main: TEST_DATABASE_URL }, poolSize: 10 };
  const one: TestContext = await build(t, { config: through });
  const two: TestContext = await build(t, { config: through });
  const tenants: TestTenant[] = await Promise.all([one.tenant(), two.tenant(), one.tenant()]);
  const api = (ctx: TestContext, tenant: TestTenant, method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object, headers: Record<string, string> = {}) =>
    ctx.as(tenant.adminToken, { method, url, ...(payload ? { payload } : {}), headers });

  await t.test('concurrent writes and reads of three tenants through two processes: each sees its own rows', async (t) => {
    const writes = tenants.flatMap((tenant, i) => Array.from({ length: 20 }, (_, n) => api(n % 2 ? one : two, tenant, 'POST', '/api/crm/customers', { name: `T${i} customer ${n}`, currency: 'EUR' })));
    const answers = await Promise.all(writes);
    t.same(
      answers.filter((r) => r.statusCode !== 201).map((r) => r.body),
      [],
      'every create answered 201',
    );
    for (const [i, tenant] of tenants.entries()) {
      const list = (await api(i % 2 ? one : two, tenant, 'GET', '/api/crm/customers?size=100')).json();
      t.equal(list.total, 20, `tenant ${i} holds its 20 customers`);
      t.ok(
        list.items.every((c: { name: string }) => c.name.startsWith(`T${i} `)),
        `and none of another tenant's`,
      );
    }
    const pools = await bouncer.admin('SHOW POOLS');
    const pool = pools.find((p) => p.database === database.pathname.slice(1) && p.user === 'postgres')!;
    const servers = ['sv_active', 'sv_idle', 'sv_used', 'sv_tested', 'sv_login'].reduce((n, k) => n + Number(pool[k]), 0);
    t.ok(servers <= SERVER_CONNECTIONS, `at most ${SERVER_CONNECTIONS} server connections served them (${servers})`);
    const stats = (await bouncer.admin('SHOW STATS')).find((s) => s.database === database.pathname.slice(1))!;
    t.ok(Number(stats.total_xact_count) >= 60, `the transactions went through the pooler (${String(stats.total_xact_count)})`);
  });

  await t.test('a stale write is refused and a failed one leaves nothing behind on the shared connections', async (t) => {
    const [tenant] = tenants;
    const created = (await api(one, tenant, 'POST', '/api/crm/customers', { name: 'Versioned', currency: 'EUR' })).json();
    const ok = await api(one, tenant, 'PATCH', `/api/crm/customers/${created.id}`, { name: 'Versioned 2' }, { 'if-match': `"${created.version}"` });
    t.equal(ok.statusCode, 200, ok.body);
    const stale = await api(two, tenant, 'PATCH', `/api/crm/customers/${created.id}`, { name: 'Versioned 3' }, { 'if-match': `"${created.version}"` });
    t.equal(stale.statusCode, 412, 'the stale version is refused');
    const refused = await Promise.all(Array.from({ length: 10 }, () => api(one, tenant, 'POST', '/api/crm/customers', { name: 'x', currency: 'not a currency' })));
    t.ok(
      refused.every((r) => r.statusCode === 400),
      'invalid writes are 400s',
    );
    const after = await Promise.all(Array.from({ length: 10 }, (_, n) => api(two, tenant, 'POST', '/api/crm/customers', { name: `after ${n}`, currency: 'EUR' })));
    t.ok(
      after.every((r) => r.statusCode === 201),
      'the connections serve the next writes',
    );
  });

  await t.test("analytics' read-only transaction and timeout end with it", async (t) => {
    const [tenant] = tenants;
    const query = { table: 'Customer', measures: [{ agg: 'count' }] };
    const counts = await Promise.all(Array.from({ length: 6 }, (_, n) => api(n % 2 ? one : two, tenant, 'POST', '/api/bi/analytics', query)));
    t.ok(
      counts.every((r) => r.statusCode === 200),
      counts.map((r) => r.statusCode).join(','),
    );
    const writes = await Promise.all(Array.from({ length: 6 }, (_, n) => api(n % 2 ? one : two, tenant, 'POST', '/api/crm/customers', { name: `written after analytics ${n}`, currency: 'EUR' })));
    t.same(
      writes.map((r) => r.statusCode),
      [201, 201, 201, 201, 201, 201],
      'no connection was left read-only',
    );
  });

  await t.test('NOTIFY through the pooler reaches the other process, which listens on its direct session', async (t) => {
    const [tenant] = tenants;
    const user = await one.user(tenant, { codes: [] });
    const me = () => two.app.inject({ method: 'GET', url: '/api/auth/me', headers: { authorization: `Bearer ${user.token}` } });
    t.equal((await me()).statusCode, 200, 'the other process serves the session');
    const res = await one.as(tenant.adminToken, { method: 'PUT', url: `/api/users/${user.id}/password`, payload: { password: 'changed through the pooler' } });
    t.equal(res.statusCode, 204, res.body);
    t.equal((await until(me, (r) => r.statusCode === 401, 3000)).statusCode, 401, 'revoked in the other process');

    const query = { table: 'Customer', measures: [{ agg: 'count' }] };
    const first = (await api(two, tenant, 'POST', '/api/bi/analytics', query)).json();
    t.match((await api(two, tenant, 'POST', '/api/bi/analytics', query)).json(), { cached: true }, 'cached in the other process');
    t.equal((await api(one, tenant, 'POST', '/api/crm/customers', { name: 'one more', currency: 'EUR' })).statusCode, 201);
    const fresh = await until(
      async () => (await api(two, tenant, 'POST', '/api/bi/analytics', query)).json(),
      (r) => r.rows[0].count === first.rows[0].count + 1,
      3000,
    );
    t.equal(fresh.rows[0].count, first.rows[0].count + 1, "the other process's cached result ended with the write");
  });
});
