// Failed logins per account: a few failures lock one address out of one
// account for a while; many failures from anywhere lock the account for
// addresses that have not logged in to it lately. Locks expire; unknown
// accounts are counted the same way. Tiny thresholds and windows from config.
import t from 'tap';
import { build, onPglite, PASSWORD, uniqueId, type TestContext } from '../../helper.ts';

const loginThrottle = { addressMaxFailures: 3, accountMaxFailures: 5, lockMs: 1500 };
const ctx = await build(t, { config: { loginThrottle } });
const tenant = await ctx.tenant();

const attempt = (c: TestContext, address: string, email: string, password: string, tenantId = tenant.id) =>
  c.app.inject({ method: 'POST', url: '/api/auth/login', remoteAddress: address, payload: { tenant: tenantId, email, password } });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const outcome = (r: { statusCode: number; json(): { code?: string } }) => `${r.statusCode} ${r.statusCode === 200 ? 'ok' : r.json().code}`;

t.test('an address is locked out of an account after a few failures, not other addresses', async (t) => {
  const user = await ctx.user(tenant, { codes: [] });
  const seen = [];
  for (let i = 0; i < 3; i++) seen.push(outcome(await attempt(ctx, '10.1.0.1', user.email, 'wrong password')));
  t.same(seen, ['401 INVALID_CREDENTIALS', '401 INVALID_CREDENTIALS', '401 INVALID_CREDENTIALS']);
  const locked = await attempt(ctx, '10.1.0.1', user.email, PASSWORD);
  t.equal(locked.statusCode, 429, 'even the right password is refused while locked');
  t.equal(locked.json().code, 'RATE_LIMITED');
  t.match(locked.headers['retry-after'], /^[12]$/, 'Retry-After: the rest of the lock, in whole seconds');
  t.equal((await attempt(ctx, '10.1.0.2', user.email, PASSWORD)).statusCode, 200, 'the right password from another address logs in');
  t.equal((await attempt(ctx, '10.1.0.1', tenant.adminEmail, PASSWORD)).statusCode, 200, 'the locked address may log in to another account');
});

t.test('the e-mail is matched as login matches it (case and spaces)', async (t) => {
  const user = await ctx.user(tenant, { codes: [] });
  for (const email of [user.email.toUpperCase(), ` ${user.email}`, user.email]) await attempt(ctx, '10.2.0.1', email, 'wrong password');
  t.equal((await attempt(ctx, '10.2.0.1', user.email, PASSWORD)).statusCode, 429);
});

t.test('a lock expires', async (t) => {
  const user = await ctx.user(tenant, { codes: [] });
  for (let i = 0; i < 3; i++) await attempt(ctx, '10.3.0.1', user.email, 'wrong password');
  t.equal((await attempt(ctx, '10.3.0.1', user.email, PASSWORD)).statusCode, 429);
  await sleep(loginThrottle.lockMs + 100);
  t.equal((await attempt(ctx, '10.3.0.1', user.email, PASSWORD)).statusCode, 200, 'after the lock time');
});

t.test("a successful login clears that address's counter", async (t) => {
  const user = await ctx.user(tenant, { codes: [] });
  for (let i = 0; i < 2; i++) await attempt(ctx, '10.4.0.1', user.email, 'wrong password');
  t.equal((await attempt(ctx, '10.4.0.1', user.email, PASSWORD)).statusCode, 200);
  for (let i = 0; i < 2; i++) await attempt(ctx, '10.4.0.1', user.email, 'wrong password');
  t.equal((await attempt(ctx, '10.4.0.1', user.email, PASSWORD)).statusCode, 200, 'four failures, but never three in a row');
});

t.test('failures from many addresses lock the account, except for addresses it logged in from', async (t) => {
  const user = await ctx.user(tenant, { codes: [] }); // logs in from 127.0.0.1
  for (let i = 1; i <= 5; i++) t.equal((await attempt(ctx, `10.5.0.${i}`, user.email, 'wrong password')).statusCode, 401);
  const fresh = await attempt(ctx, '10.5.1.1', user.email, PASSWORD);
  t.equal(fresh.statusCode, 429, 'a new address is refused, right password or not');
  t.equal(fresh.json().code, 'RATE_LIMITED');
  t.ok(Number(fresh.headers['retry-after']) >= 1);
  t.equal((await attempt(ctx, '127.0.0.1', user.email, PASSWORD)).statusCode, 200, "the owner's usual address still logs in");
  await sleep(loginThrottle.lockMs + 100);
  t.equal((await attempt(ctx, '10.5.1.1', user.email, PASSWORD)).statusCode, 200, 'and the account lock expires');
});

t.test('unknown accounts answer exactly like known ones', async (t) => {
  const user = await ctx.user(tenant, { codes: [] });
  const run = async (address: string, tenantId: string, email: string) => {
    const seen = [];
    for (let i = 0; i < 4; i++) {
      const r = await attempt(ctx, address, email, 'wrong password', tenantId);
      seen.push(`${outcome(r)} ${r.headers['retry-after'] === undefined ? '-' : 'retry-after'}`);
    }
    return seen;
  };
  const known = await run('10.6.0.1', tenant.id, user.email);
  t.same(known, ['401 INVALID_CREDENTIALS -', '401 INVALID_CREDENTIALS -', '401 INVALID_CREDENTIALS -', '429 RATE_LIMITED retry-after']);
  t.same(await run('10.6.0.2', tenant.id, `nobody-${uniqueId()}@${tenant.id}.test`), known, 'unknown e-mail');
  t.same(await run('10.6.0.3', uniqueId('nope'), user.email), known, 'unknown tenant');
});

t.test('every process sees the same counters', { skip: onPglite && 'needs two processes on one server database' }, async (t) => {
  const other = await build(t, { config: { loginThrottle } });
  const user = await ctx.user(tenant, { codes: [] });
  for (let i = 0; i < 3; i++) await attempt(ctx, '10.7.0.1', user.email, 'wrong password');
  const there = await attempt(other, '10.7.0.1', user.email, PASSWORD);
  t.equal(there.statusCode, 429, 'locked in the other process too');
});
