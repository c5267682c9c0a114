// Access tokens stop working at once when their session or user is revoked:
// logout, password change, deactivation, deletion; in the process that revoked
// them, in every other process on the same server (two kernels here), and in a
// process started afterwards. The shared LISTEN connection survives failures.
import t, { type Test } from 'tap';
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../../core/app.ts';
import { Identity } from '../../../core/auth/identity.ts';
import { PgListener, type ListenClient } from '../../../core/db/pg-listener.ts';
import { build, onPglite, PASSWORD, TEST_DATABASE_URL, type TestContext } from '../../helper.ts';
import { kernelKit, randomId, type KernelKit } from '../../fixtures/kernels.ts';

type Tokens = { accessToken: string; refreshToken: string };
const serverOnly = onPglite && 'needs two processes (or a LISTEN connection) on one server database';

const meOf = (app: FastifyInstance, token: string) => app.inject({ method: 'GET', url: '/api/auth/me', headers: { authorization: `Bearer ${token}` } });
const loginOf = async (app: FastifyInstance, tenant: string, email: string, password = PASSWORD): Promise<Tokens> => {
  const res = await app.inject({ method: 'POST', url: '/api/auth/login', payload: { tenant, email, password } });
  if (res.statusCode !== 200) throw new Error(`login failed: ${res.body}`);
  return res.json();
};
const revoked = (t: Test, res: { statusCode: number; json(): { code: string } }, name: string) => {
  t.equal(res.statusCode, 401, name);
  t.equal(res.json().code, 'UNAUTHENTICATED', name);
};
/** Polls until the request is refused; NOTIFY arrives asynchronously, within a bounded wait. */
async function refusedWithin(send: () => Promise<{ statusCode: number }>, ms = 2000): Promise<{ statusCode: number; json(): { code: string } }> {
  const until = Date.now() + ms;
  let res = await send();
  while (res.statusCode !== 401 && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 25));
    res = await send();
  }
  return res as never;
}

t.test('in one process', async (t) => {
  const ctx = await build(t);
  const tenant = await ctx.tenant();
  const api = (token: string, method: 'PUT' | 'PATCH' | 'DELETE', url: string, payload?: object) => ctx.as(token, { method, url, payload });

  t.test('logout with a refresh token ends that session only', async (t) => {
    const user = await ctx.user(tenant, { codes: [] });
    const a = await loginOf(ctx.app, tenant.id, user.email);
    const b = await loginOf(ctx.app, tenant.id, user.email);
    t.equal((await meOf(ctx.app, a.accessToken)).statusCode, 200);
    const out = await ctx.as(b.accessToken, { method: 'POST', url: '/api/auth/logout', payload: { refreshToken: a.refreshToken } });
    t.equal(out.statusCode, 204, out.body);
    revoked(t, await meOf(ctx.app, a.accessToken), 'the session logged out');
    t.equal((await meOf(ctx.app, b.accessToken)).statusCode, 200, 'another session of the user stays');
  });

  t.test('logout without a refresh token ends every session; a fresh login works', async (t) => {
    const user = await ctx.user(tenant, { codes: [] });
    const a = await loginOf(ctx.app, tenant.id, user.email);
    const b = await loginOf(ctx.app, tenant.id, user.email);
    t.equal((await ctx.as(a.accessToken, { method: 'POST', url: '/api/auth/logout' })).statusCode, 204);
    revoked(t, await meOf(ctx.app, a.accessToken), 'the caller');
    revoked(t, await meOf(ctx.app, b.accessToken), 'another session');
    revoked(t, await meOf(ctx.app, user.token), 'a token from before');
    t.equal((await meOf(ctx.app, tenant.adminToken)).statusCode, 200, 'other users keep theirs');
    const fresh = await loginOf(ctx.app, tenant.id, user.email);
    t.equal((await meOf(ctx.app, fresh.accessToken)).statusCode, 200, 'a token issued after the revocation works');
  });

  t.test('a password change ends every session of that user', async (t) => {
    const user = await ctx.user(tenant, { codes: [] });
    const res = await api(tenant.adminToken, 'PUT', `/api/users/${user.id}/password`, { password: 'an entirely new one' });
    t.equal(res.statusCode, 204, res.body);
    revoked(t, await meOf(ctx.app, user.token), 'old access token');
    const fresh = await loginOf(ctx.app, tenant.id, user.email, 'an entirely new one');
    t.equal((await meOf(ctx.app, fresh.accessToken)).statusCode, 200, 'the new password logs in');
  });

  t.test('deactivation ends every session; reactivation needs a new login', async (t) => {
    const user = await ctx.user(tenant, { codes: [] });
    const res = await api(tenant.adminToken, 'PATCH', `/api/users/${user.id}`, { isActive: false });
    t.equal(res.statusCode, 200, res.body);
    revoked(t, await meOf(ctx.app, user.token), 'deactivated');
    t.equal((await api(tenant.adminToken, 'PATCH', `/api/users/${user.id}`, { isActive: true })).statusCode, 200);
    revoked(t, await meOf(ctx.app, user.token), 'still revoked after reactivation');
  });

  t.test('deletion ends every session', async (t) => {
    const user = await ctx.user(tenant, { codes: ['erp:catalog:view'] });
    t.equal((await ctx.as(user.token, { method: 'GET', url: '/api/products' })).statusCode, 200);
    t.equal((await api(tenant.adminToken, 'DELETE', `/api/users/${user.id}`)).statusCode, 204);
    const res = await ctx.as(user.token, { method: 'GET', url: '/api/products' });
    revoked(t, res, 'a deleted user reads nothing');
  });

  t.test('a session whose login began before the revocation cannot be refreshed', async (t) => {
    // the race: a login checks the old password while it is being changed, and
    // stores its refresh token after the change revoked every session
    const user = await ctx.user(tenant, { codes: [] });
    const loginBegan = Date.now();
    await new Promise((r) => setTimeout(r, 5));
    t.equal((await api(tenant.adminToken, 'PUT', `/api/users/${user.id}/password`, { password: 'changed meanwhile' })).statusCode, 204);
    const identity = new Identity(ctx.kernel);
    const refresh = ctx.app.tokens.newRefreshToken(tenant.id);
    const em = ctx.kernel.dbs.get(ctx.kernel.tenants.cached(tenant.id)!.connectionKey).em.fork({ schema: tenant.schema });
    await identity.storeRefreshToken(em, user.id, refresh.hash, identity.newFamily(loginBegan));
    const res = await ctx.app.inject({ method: 'POST', url: '/api/auth/refresh', payload: { refreshToken: refresh.token } });
    revoked(t, res, 'the late session is refused');
    const fresh = await loginOf(ctx.app, tenant.id, user.email, 'changed meanwhile');
    t.equal((await ctx.app.inject({ method: 'POST', url: '/api/auth/refresh', payload: { refreshToken: fresh.refreshToken } })).statusCode, 200, 'a session begun after it refreshes');
  });

  t.test('an ordinary update revokes nothing', async (t) => {
    const user = await ctx.user(tenant, { codes: [] });
    t.equal((await api(tenant.adminToken, 'PATCH', `/api/users/${user.id}`, { name: 'Renamed' })).statusCode, 200);
    t.equal((await meOf(ctx.app, user.token)).statusCode, 200);
  });
});

t.test('across processes', { skip: serverOnly }, async (t) => {
  const one = await build(t);
  const two = await build(t);
  const tenant = await one.tenant();
  const waitRevoked = async (t: Test, ctx: TestContext, token: string, name: string) => revoked(t, await refusedWithin(() => meOf(ctx.app, token)), name);

  t.test('a logout in one process reaches the other within a moment', async (t) => {
    const user = await one.user(tenant, { codes: [] });
    const a = await loginOf(one.app, tenant.id, user.email);
    const b = await loginOf(two.app, tenant.id, user.email);
    t.equal((await meOf(two.app, a.accessToken)).statusCode, 200, 'the other process serves the session');
    t.equal((await one.as(a.accessToken, { method: 'POST', url: '/api/auth/logout', payload: { refreshToken: a.refreshToken } })).statusCode, 204);
    await waitRevoked(t, two, a.accessToken, 'session revoked in the other process');
    t.equal((await meOf(two.app, b.accessToken)).statusCode, 200, 'the other session stays');
  });

  t.test('a password change in one process reaches the other', async (t) => {
    const user = await one.user(tenant, { codes: [] });
    t.equal((await meOf(two.app, user.token)).statusCode, 200);
    const res = await one.as(tenant.adminToken, { method: 'PUT', url: `/api/users/${user.id}/password`, payload: { password: 'changed in one' } });
    t.equal(res.statusCode, 204, res.body);
    await waitRevoked(t, two, user.token, 'user revoked in the other process');
    const fresh = await loginOf(two.app, tenant.id, user.email, 'changed in one');
    t.equal((await meOf(two.app, fresh.accessToken)).statusCode, 200, 'a fresh login works there');
  });

  t.test('refresh-token reuse in one process revokes the session in the other', async (t) => {
    const user = await one.user(tenant, { codes: [] });
    const first = await loginOf(one.app, tenant.id, user.email);
    const next = await one.app.inject({ method: 'POST', url: '/api/auth/refresh', payload: { refreshToken: first.refreshToken } });
    t.equal(next.statusCode, 200);
    const second: Tokens = next.json();
    t.equal((await meOf(two.app, second.accessToken)).statusCode, 200);
    const reuse = await one.app.inject({ method: 'POST', url: '/api/auth/refresh', payload: { refreshToken: first.refreshToken } });
    t.equal(reuse.json().code, 'TOKEN_REUSED');
    await waitRevoked(t, two, second.accessToken, 'the newest access token of the family');
  });
});

t.test('a process started after the revocation knows it', async (t) => {
  const kit: KernelKit = await kernelKit(t, { persistent: true });
  const started = async () => {
    const kernel = await kit.open();
    const app = await buildApp(kernel, { logger: false });
    await app.ready();
    return {
      kernel,
      app,
      stop: async () => {
        await app.close();
        await kernel.close();
      },
    };
  };
  const id = randomId('rv');
  const email = `admin@${id}.test`;
  const first = await started();
  await kit.provision(first.kernel, id);
  const a = await loginOf(first.app, id, email);
  const b = await loginOf(first.app, id, email);
  const out = await first.app.inject({ method: 'POST', url: '/api/auth/logout', headers: { authorization: `Bearer ${a.accessToken}` }, payload: { refreshToken: a.refreshToken } });
  t.equal(out.statusCode, 204);
  await first.stop();

  const second = await started();
  t.teardown(() => second.stop());
  revoked(t, await meOf(second.app, a.accessToken), 'the logged-out session');
  t.equal((await meOf(second.app, b.accessToken)).statusCode, 200, 'another session works');
  const everywhere = await second.app.inject({ method: 'POST', url: '/api/auth/logout', headers: { authorization: `Bearer ${b.accessToken}` } });
  t.equal(everywhere.statusCode, 204);
  await second.kernel.revocations.reload();
  revoked(t, await meOf(second.app, b.accessToken), 'after logout everywhere');
  const fresh = await loginOf(second.app, id, email);
  t.equal((await meOf(second.app, fresh.accessToken)).statusCode, 200, 'a fresh login works');
});

t.test('the listener reconnects after its connection dies, retrying failed attempts', { skip: serverOnly }, async (t) => {
  const { Client } = createRequire(import.meta.url)('pg') as {
    Client: new (o: { connectionString: string }) => ListenClient & { query(sql: string, v?: unknown[]): Promise<{ rows: { n: number }[] }> };
  };
  const channel = `plinth_test_${randomBytes(5).toString('hex')}`;
  let failNext = 0;
  const attempts: string[] = [];
  // a refused connection: nothing listens on port 1
  const dead = TEST_DATABASE_URL.replace(/:\d+\//, ':1/');
  const listener = new PgListener(TEST_DATABASE_URL, {
    backoffMs: { min: 20, max: 200 },
    client: (url) => {
      attempts.push(failNext > 0 ? 'fail' : 'ok');
      return new Client({ connectionString: failNext-- > 0 ? dead : url });
    },
  });
  const got: string[] = [];
  const calls: string[] = [];
  listener.on(channel, (p) => got.push(p));
  listener.onReload(async () => void calls.push('reload'));
  listener.onReconnect(() => calls.push('reconnect'));
  await listener.start();
  t.teardown(() => listener.close());

  const admin = new Client({ connectionString: TEST_DATABASE_URL });
  await admin.connect();
  t.teardown(() => admin.end());
  const notify = (payload: string) => admin.query('select pg_notify($1, $2)', [channel, payload]);
  const until = async (cond: () => boolean, ms = 5000) => {
    const end = Date.now() + ms;
    while (!cond() && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
    return cond();
  };

  await notify('before');
  t.ok(await until(() => got.includes('before')), 'notifications arrive');
  failNext = 3;
  const killed = await admin.query(`select count(pg_terminate_backend(pid))::int as n from pg_stat_activity where query = $1 and pid <> pg_backend_pid()`, [`listen "${channel}"`]);
  t.equal(killed.rows[0].n, 1, 'the listening connection was killed');
  t.ok(await until(() => listener.connected && listener.connects === 2), 'connected again');
  t.same(attempts, ['ok', 'fail', 'fail', 'fail', 'ok'], 'failed reconnects were retried');
  t.ok(await until(() => calls.includes('reload')), 'the reconnect reloaded what it may have missed');
  t.same(calls.slice(0, 2), ['reconnect', 'reload'], 'after telling the caches it reconnected, once');
  await notify('after');
  t.ok(await until(() => got.includes('after')), 'notifications arrive again');
});
