// The kernel's result cache (crud/result-cache.ts) and the record of committed
// changes it depends on (data/changes.ts): identical loads share one run, a
// failure is never kept, the size bound holds; a committed write ends the
// cached analyses that read its table, in this process at once and in another
// process through NOTIFY; a lost LISTEN connection forgets every stamp.
import t from 'tap';
import { build, onPglite, testConfig } from '../../helper.ts';
import { openKernel } from '../../../core/kernel.ts';
import { ResultCache } from '../../../core/crud/result-cache.ts';
import { DataChanges } from '../../../core/data/changes.ts';
import { SYSTEM } from '../../../core/access/principal.ts';
import type { Databases } from '../../../core/db/databases.ts';
import type { PgListener } from '../../../core/db/pg-listener.ts';

t.test('identical loads share one run; failures are not kept; the size bound holds', async (t) => {
  const cache = new ResultCache<{ n: number; pad?: string }>({ maxBytes: 2000, ttlMs: 60_000 });
  let runs = 0;
  const load = async () => {
    runs++;
    await new Promise((r) => setTimeout(r, 20));
    return { n: runs };
  };
  const answers = await Promise.all([cache.get('k', load), cache.get('k', load), cache.get('k', load)]);
  t.equal(runs, 1);
  t.same(
    answers.map((a) => [a.value.n, a.cached]),
    [
      [1, false],
      [1, true],
      [1, true],
    ],
  );
  t.same(await cache.get('k', load), { value: { n: 1 }, cached: true });
  const failing = () => Promise.reject(new Error('boom'));
  await t.rejects(Promise.all([cache.get('f', failing), cache.get('f', failing)]), /boom/);
  t.same(await cache.get('f', load), { value: { n: 2 }, cached: false }, 'a failure is not kept');
  await cache.get('big', async () => ({ n: 0, pad: 'x'.repeat(1000) }));
  t.equal((await cache.get('big', load)).cached, false, 'a result over an eighth of the cache is not kept');
  for (let i = 0; i < 100; i++) await cache.get(`many${i}`, async () => ({ n: i, pad: 'x'.repeat(100) }));
  t.ok(cache.size < 100, `older entries make room (${cache.size} kept)`);
  const none = new ResultCache<{ n: number }>({ maxBytes: 0, ttlMs: 1000 });
  await none.get('k', load);
  t.equal((await none.get('k', load)).cached, false, 'maxBytes 0 keeps nothing');
});

t.test('stamps: per tenant and table, bounded, forgotten after a reconnect', async (t) => {
  const changes = new DataChanges({ embedded: true } as Databases, 'platform');
  const a = changes.stamp('t1', ['x', 'y']);
  t.equal(changes.stamp('t1', ['y', 'x', 'x']), a, 'order and repeats do not matter');
  changes.changed('t2', ['x']);
  t.equal(changes.stamp('t1', ['x', 'y']), a, "another tenant's write");
  changes.changed('t1', ['z']);
  t.equal(changes.stamp('t1', ['x', 'y']), a, 'another table');
  changes.changed('t1', ['y']);
  t.not(changes.stamp('t1', ['x', 'y']), a);

  let reconnected: () => void = () => undefined;
  const listener = { on() {}, onReconnect: (fn: () => void) => void (reconnected = fn) } as unknown as PgListener;
  changes.listenOn(listener);
  const before = changes.stamp('t1', ['x']);
  reconnected();
  t.not(changes.stamp('t1', ['x']), before, 'a reconnect (notifications may be lost) ends them');
});

const ctx = await build(t);
const tenant = await ctx.tenant();
const system = await ctx.kernel.contextFor({ tenant: tenant.id, principal: SYSTEM, companyId: tenant.companyId });
const COUNT = { measures: { n: { count: true as const } } };
const LIMITS = { timeoutMs: 5000, maxRows: 100 };

t.test('a committed write ends the analyses reading its table; a rolled-back one does not', async (t) => {
  const first = await system.data('Organization').analyze(COUNT, LIMITS);
  t.equal(first.cached, false);
  t.equal((await system.data('Organization').analyze(COUNT, LIMITS)).cached, true);
  t.equal((await system.data('Organization').analyze(COUNT, { ...LIMITS, cache: false })).cached, false, 'cache: false runs it');
  await t.rejects(
    system.transaction(async (tx) => {
      await tx.data('Organization').create({ name: 'Gone', code: 'GONE' });
      throw new Error('roll back');
    }),
  );
  t.equal((await system.data('Organization').analyze(COUNT, LIMITS)).cached, true, 'nothing committed');
  await system.data('Organization').create({ name: 'Kept', code: 'KEPT' });
  const after = await system.data('Organization').analyze(COUNT, LIMITS);
  t.same([after.cached, after.rows[0].n], [false, Number(first.rows[0].n) + 1]);
});

t.test('a write in another process ends it here (NOTIFY)', { skip: onPglite && 'embedded PGlite serves one process' }, async (t) => {
  const second = await openKernel(testConfig());
  t.teardown(() => second.close());
  const there = await second.contextFor({ tenant: tenant.id, principal: SYSTEM, companyId: tenant.companyId });
  const here = await system.data('Organization').analyze(COUNT, LIMITS);
  t.equal((await system.data('Organization').analyze(COUNT, LIMITS)).cached, true);
  await there.data('Organization').create({ name: 'Elsewhere', code: 'ELSE' });
  let fresh = await system.data('Organization').analyze(COUNT, LIMITS);
  for (let i = 0; i < 40 && fresh.cached; i++) {
    await new Promise((r) => setTimeout(r, 50));
    fresh = await system.data('Organization').analyze(COUNT, LIMITS);
  }
  t.same([fresh.cached, fresh.rows[0].n], [false, Number(here.rows[0].n) + 1]);
});
