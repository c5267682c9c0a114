// Pooled connections routed by tenant (core/db/lane-pool.ts), on real PostgreSQL
// backends: a tenant's statements go to its home lane's backend, one busy tenant
// still gets every lane, a tenant waits for a home busy with others only briefly when another
// lane is free, a freed lane serves its own waiters first, and waiting is bounded.
import t, { type Test } from 'tap';
import { laneOf, onLane, type LanePool } from '../../../core/db/lane-pool.ts';
import { openLanePool } from '../../../core/db/databases.ts';
import type { LanePgClient } from '../../../core/db/pg.ts';
import { isDatabaseUnavailable } from '../../../core/db/failures.ts';
import { onPglite, TEST_DATABASE_URL } from '../../helper.ts';

type Client = LanePgClient & { query(sql: string): Promise<{ rows: { pid: number }[] }> };
const LANES = 4;
const config = { poolSize: LANES, dbAcquireTimeoutMs: 2000, dbConnectionMaxUses: 1_000_000, dbConnectionMaxAgeSeconds: 0, dbLaneWaitMs: 50, dbPreparedStatements: 0 };

/** `count` schema-like names whose lane is `lane` */
function keysOn(lane: number, count = 1): string[] {
  const keys: string[] = [];
  for (let i = 0; keys.length < count; i++) if (laneOf(`t_${i}`, LANES) === lane) keys.push(`t_${i}`);
  return keys;
}

async function open(t: Test, overrides: Partial<typeof config> = {}) {
  const pool = openLanePool(TEST_DATABASE_URL, { ...config, ...overrides }) as unknown as LanePool<Client>;
  t.teardown(() => pool.end());
  const checkout = (key?: string) => onLane(key, () => pool.connect());
  const pid = async (c: Client) => (await c.query('select pg_backend_pid() as pid')).rows[0].pid;
  // one backend per lane, known by pid: hold every lane at once, from a key homed on each
  const held = await Promise.all(Array.from({ length: LANES }, (_, lane) => checkout(keysOn(lane)[0])));
  const lanePids = await Promise.all(held.map(pid));
  for (const c of held) c.release();
  return { pool, checkout, pid, lanePids };
}

const settled = () => new Promise((r) => setImmediate(r));

t.test('lanes', { skip: onPglite && 'embedded PGlite has one in-process connection, no pool' }, async (t) => {
  t.test('laneOf spreads schema names over the lanes and is stable', async (t) => {
    const counts = new Array(10).fill(0);
    for (let i = 0; i < 10_000; i++) counts[laneOf(`tenant_${i.toString(36)}`, 10)]++;
    t.ok(
      counts.every((n) => n > 850 && n < 1150),
      `10,000 names over 10 lanes: ${counts.join(' ')}`,
    );
    t.equal(laneOf('acme', 10), laneOf('acme', 10));
  });

  t.test("a tenant's statements run on its home lane's backend", async (t) => {
    const { checkout, pid, lanePids, pool } = await open(t);
    t.equal(new Set(lanePids).size, LANES, 'one backend per lane');
    for (let lane = 0; lane < LANES; lane++) {
      for (const key of keysOn(lane, 3)) {
        const c = await checkout(key);
        t.equal(await pid(c), lanePids[lane], `${key} on lane ${lane}`);
        c.release();
      }
    }
    t.same(pool.stats().checkouts, { home: LANES + LANES * 3, otherLane: 0, unrouted: 0 }, 'no tenant left its lane');
    t.match(pool.stats(), { lanes: LANES, connections: LANES, idle: LANES, waiting: 0, waited: 0, timedOut: 0 }, 'what operators see');
  });

  t.test('one busy tenant still gets every lane', async (t) => {
    const { checkout, pid } = await open(t);
    const [key] = keysOn(0);
    const clients = await Promise.all(Array.from({ length: LANES }, () => checkout(key)));
    t.equal(new Set(await Promise.all(clients.map(pid))).size, LANES, `${LANES} checkouts at once hold ${LANES} backends`);
    for (const c of clients) c.release();
  });

  t.test('a home busy with another tenant: the statement waits for it while it frees soon', async (t) => {
    const { checkout, pid, lanePids } = await open(t, { dbLaneWaitMs: 5000 });
    const [holder, key] = keysOn(1, 2);
    const first = await checkout(holder);
    const second = checkout(key);
    await settled();
    first.release();
    const served = await second;
    t.equal(await pid(served), lanePids[1], 'served by the home lane when it freed');
    served.release();
  });

  t.test('a home busy with another tenant: after DB_LANE_WAIT_MS the statement takes a free lane', async (t) => {
    const { checkout, pid, lanePids, pool } = await open(t, { dbLaneWaitMs: 30 });
    const [holder, key] = keysOn(2, 2);
    const first = await checkout(holder);
    const second = await checkout(key);
    const elsewhere = await pid(second);
    t.not(elsewhere, lanePids[2], 'not the busy home');
    t.ok(lanePids.includes(elsewhere), 'another lane of the pool');
    t.equal(pool.stats().checkouts.otherLane, 1);
    first.release();
    second.release();
  });

  t.test('a home busy with the same tenant: its next statement takes a free lane at once, others still wait', async (t) => {
    const { checkout, pid, lanePids } = await open(t, { dbLaneWaitMs: 60_000 });
    const [key, other, third] = keysOn(3, 3);
    const first = await checkout(key);
    const second = await checkout(key);
    t.not(await pid(second), lanePids[3], 'the same tenant, holding its home: another lane at once');
    second.release();
    const waiting = checkout(other);
    await settled();
    const again = await checkout(other);
    t.not(await pid(again), lanePids[3], 'the same tenant, waiting for its home: another lane at once');
    const patient = checkout(third);
    await settled();
    first.release();
    t.equal(await pid(await waiting), lanePids[3], 'the first waiter got the home');
    (await waiting).release();
    t.equal(await pid(await patient), lanePids[3], 'and a third tenant, who waited behind another, got it next');
    again.release();
    (await patient).release();
  });

  t.test('every lane busy: a waiter stays patient for its home, though another lane frees', async (t) => {
    const { checkout, pid, lanePids } = await open(t, { dbLaneWaitMs: 60_000 });
    const held = await Promise.all([0, 1, 2, 3].map((lane) => checkout(keysOn(lane)[0])));
    const forOne = checkout(keysOn(1, 2)[1]);
    await settled();
    held[2].release();
    const anyone = await checkout();
    t.equal(await pid(anyone), lanePids[2], 'lane 2 freed and stayed free for work with no tenant');
    held[1].release();
    t.equal(await pid(await forOne), lanePids[1], 'the waiter got its home');
    for (const c of [held[0], held[3], anyone, await forOne]) c.release();
  });

  t.test('every lane busy: a freed lane serves its own waiters first, then the oldest of any', async (t) => {
    const { checkout, pid, lanePids } = await open(t, { dbLaneWaitMs: 1 });
    const held = await Promise.all([0, 1, 2, 3].map((lane) => checkout(keysOn(lane)[0])));
    const [a, b] = keysOn(0, 3).slice(1);
    const order: string[] = [];
    const forOther = checkout(keysOn(1, 2)[1]).then((c) => (order.push('lane 1 waiter'), c));
    const forZero = checkout(a).then((c) => (order.push('lane 0 waiter'), c));
    const anyone = checkout().then((c) => (order.push('no tenant'), c));
    // their patience (1 ms) over
    await new Promise((r) => setTimeout(r, 20));
    held[0].release();
    const zero = await forZero;
    t.equal(await pid(zero), lanePids[0], 'lane 0 freed: its own waiter, though another came first');
    held[2].release();
    const other = await forOther;
    t.equal(await pid(other), lanePids[2], 'lane 2 freed with no waiter of its own: the oldest waiter');
    held[3].release();
    const none = await anyone;
    t.equal(await pid(none), lanePids[3], 'then work with no tenant');
    t.same(order, ['lane 0 waiter', 'lane 1 waiter', 'no tenant']);
    const late = checkout(b);
    zero.release();
    t.equal(await pid(await late), lanePids[0], 'and a waiter of lane 0 gets lane 0 back');
    held[1].release();
    for (const c of [other, none, await late]) c.release();
  });

  t.test('waiting is bounded by DB_ACQUIRE_TIMEOUT_MS, and the error says the database is busy', async (t) => {
    const { checkout, pool } = await open(t, { dbAcquireTimeoutMs: 200 });
    const held = await Promise.all(Array.from({ length: LANES }, () => checkout()));
    const pending = checkout('t_1').catch((e: Error) => e);
    await settled();
    t.match(pool.stats(), { waiting: 1, idle: 0, waited: 1, timedOut: 0, checkouts: { unrouted: LANES } }, 'counted while it waits');
    const err = await pending;
    t.match(err, { message: 'timeout exceeded when trying to connect' });
    t.match(pool.stats(), { waiting: 0, timedOut: 1 });
    t.ok(isDatabaseUnavailable(err), 'answers 503, not 500');
    for (const c of held) c.release();
    const again = await checkout('t_1');
    again.release();
    t.pass('the lanes serve again once freed');
  });

  t.test('a connection given back broken is replaced; its lane goes on', async (t) => {
    const { checkout, pid, lanePids } = await open(t);
    const [key] = keysOn(0);
    const c = await checkout(key);
    c.release(new Error('broken'));
    c.release();
    const next = await checkout(key);
    const fresh = await pid(next);
    t.not(fresh, lanePids[0], 'a new backend on the same lane');
    next.release();
    const again = await checkout(key);
    t.equal(await pid(again), fresh, 'and the lane keeps it');
    again.release();
  });

  t.test('a lane keeps its connection while idle; age and uses end it', async (t) => {
    const { pool } = await open(t, { dbConnectionMaxAgeSeconds: 1800, dbConnectionMaxUses: 1000 });
    t.match(pool.options, { idleTimeoutMillis: 0, maxLifetimeSeconds: 1800, maxUses: 1000, max: 1 });
  });

  t.test('end: waiters are refused, later checkouts too', async (t) => {
    const pool = openLanePool(TEST_DATABASE_URL, { ...config, poolSize: 1 }) as unknown as LanePool<Client>;
    const held = await pool.connect();
    const waiting = pool.connect().catch((e: Error) => e);
    t.equal(pool.waitingCount, 1);
    const ended = pool.end();
    t.match(await waiting, { message: /after calling end/ });
    held.release();
    await ended;
    await t.rejects(pool.connect(), /after calling end/);
  });
});
