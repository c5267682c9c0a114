// The request limit is one limit however many processes serve a caller: two
// kernels on one database add their counts up (auth/shared-rate-limits.ts), so
// requests spread over both are refused once the limit is reached between
// them, and a caller of one process never uses up another caller's limit. The
// counting itself: windows from a key's first hit, totals read back at each
// sync, an expired window starting again, a failed sync keeping the count.
import t from 'tap';
import { SharedRateLimits } from '../../../core/auth/shared-rate-limits.ts';
import { build, onPglite, testConfig, type TestContext } from '../../helper.ts';
import { openKernel } from '../../../core/kernel.ts';

const serverOnly = onPglite && 'embedded PGlite serves one process, which counts its requests alone';
const MAX = 30;
const config = { rateLimit: { max: MAX, windowMs: 60_000, syncMs: 100 } };
const me = (ctx: TestContext, token: string) => ctx.app.inject({ method: 'GET', url: '/api/auth/me', headers: { authorization: `Bearer ${token}` } });

t.test('two processes count one limit together', { skip: serverOnly }, async (t) => {
  // signed in through a kernel of the usual limits: logins have a limit of their own (a sixtieth)
  const setup = await build(t);
  const tenant = await setup.tenant();
  const user = await setup.user(tenant, { codes: [] });
  const other = await setup.user(tenant, { codes: [] });
  const one = await build(t, { config });
  const two = await build(t, { config });

  const statuses: number[] = [];
  for (let i = 0; i < 20; i++) statuses.push((await me(one, user.token)).statusCode);
  t.same(new Set(statuses), new Set([200]), '20 requests to the first process pass');
  await one.kernel.rateLimits!.sync();
  await two.kernel.rateLimits!.sync();
  // a process new to a caller counts from its own first hit until its next sync reads everyone's
  t.equal((await me(two, user.token)).statusCode, 200);
  await two.kernel.rateLimits!.sync();
  const second: number[] = [];
  for (let i = 0; i < 14; i++) second.push((await me(two, user.token)).statusCode);
  t.same(second, [...Array(9).fill(200), ...Array(5).fill(429)], `the second process lets the caller have what is left of ${MAX}, then refuses`);
  const refused = await me(two, user.token);
  t.equal(refused.json().code, 'RATE_LIMITED');
  t.ok(Number(refused.headers['retry-after']) > 0 && Number(refused.headers['retry-after']) <= 60, 'Retry-After: the rest of the shared window');
  await two.kernel.rateLimits!.sync();
  await one.kernel.rateLimits!.sync();
  t.equal((await me(one, user.token)).statusCode, 429, 'and the first process refuses them too once it has synced');
  t.equal((await me(one, other.token)).statusCode, 200, 'another caller has a limit of their own');
  t.equal((await me(two, other.token)).statusCode, 200);
});

t.test('the counting', { skip: serverOnly }, async (t) => {
  const kernel = await openKernel(testConfig());
  t.teardown(() => kernel.close());
  const a = new SharedRateLimits(kernel.dbs, kernel.config.registrySchema, { syncMs: 60_000 });
  const b = new SharedRateLimits(kernel.dbs, kernel.config.registrySchema, { syncMs: 60_000 });
  const key = `unit-${Math.random()}`;
  const now = Date.now();
  t.same(a.hit(key, 1000, 4, now), { current: 1, ttl: 1000 }, 'a first hit opens the window');
  t.same(a.hit(key, 1000, 4, now + 100), { current: 2, ttl: 900 });
  t.same(b.hit(key, 1000, 4, now + 200), { current: 1, ttl: 1000 }, 'the other counts its own until it syncs');
  await a.sync();
  await b.sync();
  t.equal(b.peek(key, 1000, 4, now + 200).current, 3, 'after syncing: everyone’s hits');
  t.equal(a.peek(key, 1000, 4, now + 200).current, 2, 'one that has not synced since knows its own');
  await a.sync();
  t.equal(a.peek(key, 1000, 4, now + 200).current, 3, 'past half its limit, a key is read back at every sync');
  t.equal(b.peek(key, 1000, 4, now + 200).ttl, 1000 - 200, 'in the window that opened first');
  t.same(a.hit(key, 1000, 4, now + 1500), { current: 1, ttl: 1000 }, 'an expired window starts again');
  t.equal(a.peek(key, 1000, 6, now + 1500).current, 0, 'a limit of another size counts apart');

  const broken = new SharedRateLimits(kernel.dbs, 'no_such_registry', { syncMs: 60_000 });
  broken.hit(key, 60_000, 5);
  await broken.sync();
  t.ok(broken.lastError, 'a failed sync is recorded');
  t.equal(broken.hit(key, 60_000, 5).current, 2, 'and the count goes on here');
});

t.test('a database that never answers holds neither the syncs nor a shutdown', async (t) => {
  const wedged = { main: { em: { getConnection: () => ({ execute: () => new Promise(() => undefined) }) } } };
  const limits = new SharedRateLimits(wedged as never, 'platform', { syncMs: 50 });
  limits.hit('k', 60_000, 5);
  const sync = limits.sync();
  let started = Date.now();
  await limits.stop();
  t.ok(Date.now() - started < 1500, `stop() returned after ${Date.now() - started} ms`);
  started = Date.now();
  await sync;
  t.ok(Date.now() - started < 3000, 'the sync gave up');
  t.match(String(limits.lastError), /no answer within/);
  t.equal(limits.hit('k', 60_000, 5).current, 2, 'the count goes on here');
});

t.test('a sync asked for while one is under way is followed by one that starts after the call', async (t) => {
  // a fake table (keys as the store writes them: window:max:key): each statement waits until released, then adds the hits it was sent
  const table = new Map<string, number>();
  const waiting: (() => void)[] = [];
  const execute = (_sql: string, params: unknown[]) =>
    new Promise((resolve) => {
      if (typeof params[0] !== 'string') return resolve([]);
      waiting.push(() => {
        const sent = JSON.parse(params[0] as string) as { key: string; window_start: number; hits: number }[];
        resolve(sent.map((r) => ({ key: r.key, start: String(r.window_start), hits: table.set(r.key, (table.get(r.key) ?? 0) + r.hits).get(r.key) })));
      });
    });
  const limits = new SharedRateLimits({ main: { em: { getConnection: () => ({ execute }) } } } as never, 'platform', { syncMs: 60_000 });
  const release = async () => {
    for (let i = 0; !waiting.length; i++) {
      if (i > 1000) throw new Error('no statement waits to be released');
      await new Promise((r) => setImmediate(r));
    }
    waiting.shift()!();
  };
  limits.hit('k', 60_000, 100);
  const first = limits.sync();
  limits.hit('k', 60_000, 100);
  const second = limits.sync();
  const third = limits.sync();
  t.not(second, first, 'the second call does not join the sync under way');
  t.equal(third, second, 'callers meanwhile share the one that follows');
  await release();
  await first;
  t.equal(table.get('60000:100:k'), 1, 'the first sync sent the hit made before it');
  await release();
  await second;
  t.equal(table.get('60000:100:k'), 2, 'the following one sent the hit made after the first began');
  t.equal(limits.peek('k', 60_000, 100).current, 2);
});
