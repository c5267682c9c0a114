// Kernel capabilities a work queue needs, on a probe module: the kernel's
// clock (ctx.now(), moved by a test), principals holding permission codes
// directly (an API key's scopes), ctx.data(e).claim() (FOR UPDATE SKIP
// LOCKED: concurrent claims never take the same row, within the caller's
// scope) and ctx.signal/waitForSignal (wake-ups after commit).
import t from 'tap';
import { build, onPglite, testConfig } from '../../helper.ts';
import { openKernel } from '../../../core/kernel.ts';
import { modulesWith } from '../../support/manifests.ts';
import { ManualClock } from '../../../core/clock.ts';
import { SYSTEM, type Principal } from '../../../core/access/principal.ts';

const { manifestsDir, pluginsDir } = modulesWith(t, {
  chores: {
    manifest: {
      name: 'Chores',
      permissions: [
        { code: 'test:chores:work', description: 'take one’s own chores', grants: [{ action: ['read', 'update'], subject: 'Chore', conditions: { worker: '${user.id}' } }] },
        { code: 'test:chores:all', description: 'every chore', grants: [{ action: ['read', 'update'], subject: 'Chore' }] },
      ],
      entities: [
        {
          name: 'Chore',
          scope: 'tenant',
          events: false,
          fields: {
            title: { type: 'string', required: true, maxLength: 50 },
            worker: { type: 'string', maxLength: 60, readOnly: true },
            state: { type: 'enum', values: ['open', 'taken'], default: 'open', readOnly: true },
            takenBy: { type: 'string', maxLength: 60, readOnly: true },
            takenAt: { type: 'datetime', readOnly: true },
          },
        },
        { name: 'Noisy', scope: 'tenant', fields: { title: { type: 'string', maxLength: 50 } } },
      ],
    },
    plugin: `export {};`,
  },
});

const clock = new ManualClock('2031-05-04T23:30:00.000Z');
const ctx = await build(t, { config: { manifestsDir, pluginsDir, clock } });
const tenant = await ctx.tenant();
const system = await ctx.kernel.contextFor({ tenant: tenant.id, principal: SYSTEM });
const worker = (id: string, codes: string[]): Principal => ({ kind: 'client', id, roles: [], codes, companyIds: [] });
const as = (p: Principal) => ctx.kernel.contextFor({ tenant: tenant.id, principal: p });

t.test('the clock: ctx.now() and ctx.today() follow it', async (t) => {
  t.equal(system.now().toISOString(), '2031-05-04T23:30:00.000Z');
  t.equal(system.today(), '2031-05-04');
  clock.advance(60 * 60_000);
  t.equal(system.now().toISOString(), '2031-05-05T00:30:00.000Z');
  t.equal(system.today(), '2031-05-05');
});

t.test('codes held directly make the ability, cached by the code set', async (t) => {
  const a = ctx.kernel.abilities.forCodes(['test:chores:work']);
  t.equal(ctx.kernel.abilities.forCodes(['test:chores:work', 'test:chores:work']), a, 'one ability per set');
  t.ok(a.can('read', 'Chore'));
  t.notOk(a.can('read', 'Noisy'));
  t.notOk(ctx.kernel.abilities.forCodes(['no:such:code']).can('read', 'Chore'), 'an unknown code grants nothing');
  const none = await as(worker('nobody', []));
  t.notOk(none.can('read', 'Chore'), 'no codes, nothing: roles are not consulted');
  t.equal(await none.data('Chore').count(), 0);
});

t.test('claim: each row once under concurrency, within the caller’s scope', async (t) => {
  for (let i = 0; i < 8; i++) await system.data('Chore').create({ title: `c${i}` }, { internal: { worker: i < 6 ? 'w1' : 'w2' } });
  const w1 = await as(worker('w1', ['test:chores:work']));
  const takers = Array.from({ length: 12 }, (_, i) =>
    as(worker('w1', ['test:chores:work'])).then((c) => c.data('Chore').claim({ state: 'open' }, { state: 'taken', takenBy: `taker${i}`, takenAt: c.now() }, { orderBy: 'title' })),
  );
  const got = (await Promise.all(takers)).filter((r) => r !== null);
  t.equal(got.length, 6, 'only w1’s six chores');
  t.equal(new Set(got.map((r) => r!.id)).size, 6, 'no chore twice');
  t.ok(
    got.every((r) => r!.state === 'taken' && r!.version === 2),
    'set, with a new version',
  );
  t.equal(await w1.data('Chore').claim({ state: 'open' }, { state: 'taken' }), null, 'none left for w1');
  const all = await as(worker('boss', ['test:chores:all']));
  const first = await all.data('Chore').claim({ state: 'open' }, { state: 'taken', takenBy: 'boss' }, { orderBy: '-title' });
  t.equal(first?.title, 'c7', 'orderBy');
  // a row held by another transaction is skipped, not waited for (embedded PGlite has one connection: no other transaction)
  if (!onPglite)
    await system.transaction(async (tx) => {
      await tx.data('Chore').lock((await system.data('Chore').find({ title: 'c6' }))[0].id);
      t.equal(await all.data('Chore').claim({ state: 'open' }, { state: 'taken' }), null, 'the only open one is locked: skipped');
    });
  t.rejects(system.data('Noisy').claim({}, { title: 'x' }), /events/, 'refused where writes record events');
});

t.test('signals wake waiters after commit, not on rollback; waits time out', async (t) => {
  t.equal(await system.waitForSignal('probe', 50), false, 'a timeout');
  const woken = system.waitForSignal('probe', 5000);
  await system.transaction(async (tx) => {
    await tx.signal('probe');
  });
  t.equal(await woken, true);
  const notWoken = system.waitForSignal('probe', 300);
  await system
    .transaction(async (tx) => {
      await tx.signal('probe');
      throw new Error('roll back');
    })
    .catch(() => undefined);
  t.equal(await notWoken, false, 'a rolled back transaction signals nothing');
  const other = await ctx.tenant();
  const elsewhere = system.waitForSignal('probe', 300);
  await (await ctx.kernel.contextFor({ tenant: other.id, principal: SYSTEM })).signal('probe');
  t.equal(await elsewhere, false, "another tenant's topic is another topic");
  const aborted = new AbortController();
  const waiting = system.waitForSignal('probe', 5000, aborted.signal);
  aborted.abort();
  t.equal(await waiting, false, 'abort');
  t.throws(() => system.signal(''), 'an empty topic');
});

t.test('a signal reaches waiters of another process (LISTEN/NOTIFY)', { skip: onPglite && 'embedded PGlite serves one process' }, async (t) => {
  const second = await openKernel(testConfig({ manifestsDir, pluginsDir }));
  t.teardown(() => second.close());
  const there = await second.contextFor({ tenant: tenant.id, principal: SYSTEM });
  const woken = there.waitForSignal('across', 5000);
  const started = Date.now();
  await system.signal('across');
  t.equal(await woken, true);
  t.ok(Date.now() - started < 2000, 'at once, not after a poll');
  t.equal(await there.waitForSignal('across', 300), false, 'one signal wakes once');
});
