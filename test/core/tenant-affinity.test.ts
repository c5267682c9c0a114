// Tenant-affine pooled connections (core/db/tenant-affinity.ts): a tenant's
// statements go to its home connection while that one is idle, a busy pool
// still serves one tenant with every connection, nothing waits for good, and a
// request's statements carry its tenant from the request pipeline to the pool.
import t from 'tap';
import pg, { type Pool } from '../../core/db/pg.ts';
import { affinePool, withTenant, type AffinityStats } from '../../core/db/tenant-affinity.ts';
import { build, onPglite, TEST_DATABASE_URL } from '../helper.ts';

const serverOnly = onPglite && 'embedded PGlite has no connection pool';
const pidOf = async (pool: Pool, schema: string, sleepMs = 0) =>
  withTenant(schema, async () => (await pool.query(`select pg_backend_pid() as pid, pg_sleep(${sleepMs / 1000})`)).rows[0].pid as number);

async function affinePoolOf(t: { teardown(fn: () => unknown): void }, max: number): Promise<{ pool: Pool; stats: AffinityStats }> {
  const pool = new pg.Pool({ connectionString: TEST_DATABASE_URL, max, min: 0, types: undefined as never });
  t.teardown(() => pool.end());
  const stats = { tagged: 0, home: 0 };
  if (!affinePool(pool, stats)) throw new Error('pg-pool lacks the queues affinity orders');
  // every connection open and idle
  await Promise.all(Array.from({ length: max }, () => pool.query('select pg_sleep(0.05)')));
  return { pool, stats };
}

t.test('an idle pool: each tenant always on the same connection, the tenants over several', { skip: serverOnly }, async (t) => {
  const { pool } = await affinePoolOf(t, 4);
  const schemas = Array.from({ length: 24 }, (_, i) => `tenant_affinity_${i}`);
  const seen = new Map<string, Set<number>>();
  for (let round = 0; round < 3; round++) {
    for (const s of schemas) {
      const pid = await pidOf(pool, s);
      seen.set(s, (seen.get(s) ?? new Set()).add(pid));
    }
  }
  t.ok(
    [...seen.values()].every((pids) => pids.size === 1),
    'every tenant met one backend',
  );
  t.ok(new Set([...seen.values()].map((pids) => [...pids][0])).size >= 3, 'and the tenants are spread over the connections');
});

t.test('a busy pool: one tenant still gets every connection, and every statement is served', { skip: serverOnly }, async (t) => {
  const { pool } = await affinePoolOf(t, 4);
  const pids = await Promise.all(Array.from({ length: 40 }, () => pidOf(pool, 'tenant_affinity_busy', 20)));
  t.equal(pids.length, 40);
  t.equal(new Set(pids).size, 4, 'all four connections served the one tenant');
});

t.test('a busy pool with many tenants: most statements run on their home connection, none is starved', { skip: serverOnly }, async (t) => {
  const { pool, stats } = await affinePoolOf(t, 4);
  const byTenant = new Map<string, number[]>();
  await Promise.all(
    Array.from({ length: 400 }, async (_, i) => {
      const s = `tenant_affinity_many_${i % 50}`;
      const pid = await pidOf(pool, s, 2);
      byTenant.set(s, [...(byTenant.get(s) ?? []), pid]);
    }),
  );
  t.equal([...byTenant.values()].flat().length, 400, 'all 400 statements were served');
  t.ok(stats.tagged >= 400 && stats.home / stats.tagged > 0.5, `home connection for ${stats.home} of ${stats.tagged}`);
});

t.test('a pool without the internals it relies on is left as it is', async (t) => {
  t.notOk(affinePool({ connect() {} }));
});

t.test("a request's statements name its tenant to the pool", { skip: serverOnly }, async (t) => {
  const ctx = await build(t, { config: { dbTenantAffinity: true } });
  const tenant = await ctx.tenant();
  const before = ctx.kernel.dbs.affinity.tagged;
  for (let i = 0; i < 5; i++) t.equal((await ctx.as(tenant.adminToken, { method: 'GET', url: '/api/products' })).statusCode, 200);
  t.ok(ctx.kernel.dbs.affinity.tagged - before >= 5, `${ctx.kernel.dbs.affinity.tagged - before} statements came with their tenant`);
});
