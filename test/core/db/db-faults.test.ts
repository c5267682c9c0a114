// Connections that die inside a transaction: the pool must get every slot back,
// the request answers 503 DATABASE_UNAVAILABLE (not 500, never a hang), and the
// next requests work. PostgreSQL only: PGlite has no backends to terminate.
import t from 'tap';
import pg from '../../../bench/pg.ts';
import { build, onPglite, TEST_DATABASE_URL } from '../../helper.ts';

if (onPglite) {
  t.plan(0, 'skipped: PGlite runs in-process, so no connection can die');
} else {
  const POOL = 3;
  const ctx = await build(t, { config: { poolSize: POOL, dbAcquireTimeoutMs: 3000 } });
  const tenant = await ctx.tenant();
  const api = (method: 'GET' | 'PATCH', url: string, payload?: object) => ctx.as(tenant.adminToken, { method, url, payload });
  // holds row locks; the observer looks at pg_stat_activity from outside the
  // holder's transaction, which would see one frozen snapshot of it
  const holder = new pg.Client({ connectionString: TEST_DATABASE_URL });
  const observer = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await holder.connect();
  await observer.connect();
  t.teardown(async () => {
    await holder.end();
    await observer.end();
  });

  /** Resolves with the value, or with 'timeout' when the promise takes longer than ms. */
  const within = <T>(p: Promise<T>, ms: number) => Promise.race([p, new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), ms).unref())]);

  /** The backend waiting on a lock the holder's session has, once it waits. */
  async function waiter(): Promise<number> {
    const {
      rows: [{ pid: holderPid }],
    } = await holder.query('select pg_backend_pid() as pid');
    for (let i = 0; i < 200; i++) {
      const { rows } = await observer.query('select pid from pg_stat_activity where $1 = any(pg_blocking_pids(pid))', [holderPid]);
      if (rows.length) return rows[0].pid as number;
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error('no request waited on the row lock');
  }

  t.test('a backend terminated while its transaction waits on a row lock costs no pool slot', async (t) => {
    const created = await ctx.as(tenant.adminToken, { method: 'POST', url: '/api/products', payload: { sku: 'LOCK-1', name: 'Locked', price: '1.00' } });
    t.equal(created.statusCode, 201, created.body);
    const id = created.json().id as string;
    const table = `"${tenant.schema}"."${ctx.kernel.model('Product').table}"`;
    for (let round = 1; round <= POOL + 2; round++) {
      await holder.query('begin');
      await holder.query(`select id from ${table} where id = $1 for update`, [id]);
      const patch = api('PATCH', `/api/products/${id}`, { stock: round });
      await observer.query('select pg_terminate_backend($1)', [await waiter()]);
      const res = await within(patch, 10_000);
      await holder.query('rollback');
      t.not(res, 'timeout', `round ${round}: the PATCH answers`);
      if (res === 'timeout') return;
      t.equal(res.statusCode, 503, `round ${round}: ${res.body}`);
      t.equal(res.json().code, 'DATABASE_UNAVAILABLE');
      t.equal(res.headers['retry-after'], '5');
    }
    const read = await within(api('GET', `/api/products/${id}`), 5_000);
    t.not(read, 'timeout', 'reads still get a connection');
    if (read !== 'timeout') t.equal(read.json().stock, 0, 'no terminated write landed');
    const write = await within(api('PATCH', `/api/products/${id}`, { stock: 42 }), 5_000);
    t.not(write, 'timeout', 'writes still get a connection');
    if (write !== 'timeout') t.equal(write.statusCode, 200, write.body);
    const ready = await within(ctx.app.inject({ method: 'GET', url: '/health/ready' }), 5_000);
    t.not(ready, 'timeout');
    if (ready !== 'timeout') t.equal(ready.statusCode, 200);
    const stats = ctx.kernel.dbs.poolStats().main;
    t.ok(stats.total <= POOL, `the pool holds at most ${POOL} connections (${JSON.stringify(stats)})`);
  });

  t.test('a request waiting for a connection gives up with 503 instead of hanging', async (t) => {
    // every pooled connection held by an open transaction
    const connection = ctx.kernel.dbs.main.em.getConnection();
    const held = await Promise.all(Array.from({ length: POOL }, () => connection.begin()));
    try {
      const res = await within(api('GET', '/api/products'), 10_000);
      t.not(res, 'timeout');
      if (res !== 'timeout') {
        t.equal(res.statusCode, 503, res.body);
        t.equal(res.json().code, 'DATABASE_UNAVAILABLE');
      }
    } finally {
      for (const trx of held) await connection.rollback(trx);
    }
    t.equal((await api('GET', '/api/products')).statusCode, 200, 'served again once connections are free');
  });
}
