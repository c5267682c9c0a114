// Login, refresh, logout and me through the HTTP API, plus every way an access
// token can be wrong. Codes are asserted, never message text.
import t, { type Test } from 'tap';
import { randomInt } from 'node:crypto';
import { build, PASSWORD, uniqueId, type TestContext, type TestTenant } from '../../helper.ts';
import { TokenService, hashRefreshToken } from '../../../core/auth/tokens.ts';

/** The schema of the tenant registry (configurable; "platform" by default). */
const registrySchema = (kernel: { config: object }) => (kernel.config as { registrySchema?: string }).registrySchema ?? 'platform';

type Tokens = { accessToken: string; refreshToken: string };

const emOf = (ctx: TestContext, tenant: TestTenant) => {
  const tt = ctx.kernel.tenants.cached(tenant.id)!;
  return ctx.kernel.dbs.get(tt.connectionKey).em.fork({ schema: tt.schema });
};
const refresh = (ctx: TestContext, refreshToken: unknown) => ctx.app.inject({ method: 'POST', url: '/api/auth/refresh', payload: { refreshToken } });
const me = (ctx: TestContext, token: string, headers: Record<string, string> = {}) => ctx.as(token, { method: 'GET', url: '/api/auth/me', headers });
const loginOk = async (ctx: TestContext, tenant: string, email: string): Promise<Tokens> => {
  const res = await ctx.login(tenant, email, PASSWORD);
  if (res.statusCode !== 200) throw new Error(`login failed: ${res.body}`);
  return res.json();
};

t.test('login', async (t) => {
  const ctx = await build(t);
  const tenant = await ctx.tenant();

  t.test('success answers the token pair', async (t) => {
    const res = await ctx.login(tenant.id, tenant.adminEmail, PASSWORD);
    t.equal(res.statusCode, 200, res.body);
    const body = res.json();
    t.same(Object.keys(body).sort(), ['accessToken', 'expiresIn', 'refreshExpiresIn', 'refreshToken', 'tokenType']);
    t.match(body.accessToken, /^[\w-]+\.[\w-]+\.[\w-]+$/);
    t.equal(body.tokenType, 'Bearer');
    t.equal(body.expiresIn, ctx.kernel.config.accessTokenTtlSeconds);
    t.equal(body.refreshExpiresIn, ctx.kernel.config.refreshTokenTtlSeconds);
    t.ok(body.refreshToken.startsWith(`${tenant.id}.`), 'the refresh token names its tenant');
    t.equal((await me(ctx, body.accessToken)).statusCode, 200, 'the access token works');
  });

  t.test('the e-mail is case-insensitive', async (t) => {
    const res = await ctx.login(tenant.id, tenant.adminEmail.toUpperCase(), PASSWORD);
    t.equal(res.statusCode, 200, res.body);
  });

  t.test('every wrong credential answers the same 401 INVALID_CREDENTIALS', async (t) => {
    const inactive = await ctx.user(tenant, { codes: [] });
    await emOf(ctx, tenant).nativeUpdate(ctx.kernel.model('User').ormEntity, { id: inactive.id }, { isActive: false });
    const cases: [string, string, string, string][] = [
      ['wrong password', tenant.id, tenant.adminEmail, 'not the password'],
      ['unknown e-mail', tenant.id, `nobody@${tenant.id}.test`, PASSWORD],
      ['unknown tenant', uniqueId('nope'), tenant.adminEmail, PASSWORD],
      ['inactive user', tenant.id, inactive.email, PASSWORD],
    ];
    for (const [name, tid, email, password] of cases) {
      const res = await ctx.login(tid, email, password);
      t.equal(res.statusCode, 401, name);
      t.equal(res.json().code, 'INVALID_CREDENTIALS', name);
      t.match(res.headers['content-type'], /^application\/problem\+json/, name);
    }
  });

  t.test('a malformed body is a 400', async (t) => {
    const good = { tenant: tenant.id, email: tenant.adminEmail, password: PASSWORD };
    const bodies: [string, unknown][] = [
      ['unknown field', { ...good, remember: true }],
      ['missing password', { tenant: good.tenant, email: good.email }],
      ['missing tenant', { email: good.email, password: good.password }],
      ['password not a string', { ...good, password: 12345678 }],
      ['email not a string', { ...good, email: ['a@b.c'] }],
      ['tenant not a slug', { ...good, tenant: 'Not A Tenant' }],
      ['empty password', { ...good, password: '' }],
      ['an array', [good]],
    ];
    for (const [name, payload] of bodies) {
      const res = await ctx.app.inject({ method: 'POST', url: '/api/auth/login', payload: payload as object });
      t.equal(res.statusCode, 400, name);
      t.equal(res.json().code, 'VALIDATION_FAILED', name);
    }
    const empty = await ctx.app.inject({ method: 'POST', url: '/api/auth/login', headers: { 'content-type': 'application/json' }, payload: '' });
    t.equal(empty.statusCode, 400, 'empty JSON body');
    const broken = await ctx.app.inject({ method: 'POST', url: '/api/auth/login', headers: { 'content-type': 'application/json' }, payload: '{"tenant":' });
    t.equal(broken.statusCode, 400, 'broken JSON');
    t.equal(broken.json().code, 'VALIDATION_FAILED');
  });

  t.test('a suspended tenant answers 403 TENANT_UNAVAILABLE', async (t) => {
    const other = await ctx.tenant();
    await ctx.kernel.tenants.setStatus(other.id, 'suspended');
    const res = await ctx.login(other.id, other.adminEmail, PASSWORD);
    t.equal(res.statusCode, 403);
    t.equal(res.json().code, 'TENANT_UNAVAILABLE');
    const wrong = await ctx.login(other.id, other.adminEmail, 'not the password');
    t.equal(wrong.json().code, 'INVALID_CREDENTIALS', 'a wrong password learns nothing about the tenant');
    await ctx.kernel.tenants.setStatus(other.id, 'active');
    t.equal((await ctx.login(other.id, other.adminEmail, PASSWORD)).statusCode, 200, 'reactivated');
  });
});

t.test('login is rate limited per IP', async (t) => {
  // logins: a sixtieth of the per-caller limit, here 5 a minute
  const ctx = await build(t, { config: { rateLimit: { max: 300, windowMs: 60_000, syncMs: 1000 } } });
  const tenant = await ctx.tenant();
  // an address of this run's own: every process (and an earlier run within the minute) counts with the others
  const address = `10.9.${randomInt(256)}.${randomInt(256)}`;
  const statuses: number[] = [];
  let limited;
  for (let i = 0; i < 10 && !limited; i++) {
    const res = await ctx.app.inject({ method: 'POST', url: '/api/auth/login', remoteAddress: address, payload: { tenant: tenant.id, email: tenant.adminEmail, password: 'wrong password' } });
    statuses.push(res.statusCode);
    if (res.statusCode === 429) limited = res;
  }
  t.ok(limited, 'some attempt was refused');
  t.equal(limited!.json().code, 'RATE_LIMITED');
  t.match(limited!.headers['retry-after'], /^\d+$/, 'Retry-After says when to try again');
  t.match(limited!.headers['content-type'], /^application\/problem\+json/);
  t.same(statuses, [401, 401, 401, 401, 401, 429], 'the sixth attempt is refused');
  const fromElsewhere = await ctx.app.inject({ method: 'POST', url: '/api/auth/login', remoteAddress: '10.1.2.3', payload: { tenant: tenant.id, email: tenant.adminEmail, password: PASSWORD } });
  t.equal(fromElsewhere.statusCode, 200, 'another IP may still log in');
  t.equal((await me(ctx, tenant.adminToken)).statusCode, 200, 'other routes are not affected');
});

t.test('the per-caller rate limit answers 429 with Retry-After', async (t) => {
  const ctx = await build(t, { config: { rateLimit: { max: 120, windowMs: 60_000, syncMs: 1000 } } });
  const tenant = await ctx.tenant();
  const other = await ctx.user(tenant, { codes: [] });
  let limited;
  for (let i = 0; i < 200 && !limited; i++) {
    const res = await me(ctx, tenant.adminToken);
    if (res.statusCode === 429) limited = res;
    else if (res.statusCode !== 200) t.fail(res.body);
  }
  t.ok(limited, 'the caller was limited');
  t.equal(limited!.json().code, 'RATE_LIMITED');
  t.match(limited!.headers['retry-after'], /^\d+$/);
  t.equal((await me(ctx, other.token)).statusCode, 200, 'another caller is not');
  t.equal((await ctx.app.inject({ method: 'GET', url: '/health/live' })).statusCode, 200, 'health checks are never limited');
});

t.test('refresh', async (t) => {
  const ctx = await build(t);
  const tenant = await ctx.tenant();

  t.test('rotates: new tokens, and the old refresh token stops working', async (t) => {
    const first = await loginOk(ctx, tenant.id, tenant.adminEmail);
    const res = await refresh(ctx, first.refreshToken);
    t.equal(res.statusCode, 200, res.body);
    const second: Tokens = res.json();
    t.not(second.refreshToken, first.refreshToken);
    t.ok(second.refreshToken.startsWith(`${tenant.id}.`));
    t.equal((await me(ctx, second.accessToken)).statusCode, 200, 'the new access token works');
    const third = await refresh(ctx, second.refreshToken);
    t.equal(third.statusCode, 200, 'the new refresh token rotates again');
  });

  t.test('reusing a rotated token revokes the whole family', async (t) => {
    const first = await loginOk(ctx, tenant.id, tenant.adminEmail);
    const bystander = await loginOk(ctx, tenant.id, tenant.adminEmail);
    const second: Tokens = (await refresh(ctx, first.refreshToken)).json();
    const reuse = await refresh(ctx, first.refreshToken);
    t.equal(reuse.statusCode, 401);
    t.equal(reuse.json().code, 'TOKEN_REUSED');
    const newest = await refresh(ctx, second.refreshToken);
    t.equal(newest.statusCode, 401, 'the newest token of the family is revoked too');
    t.equal((await refresh(ctx, bystander.refreshToken)).statusCode, 200, 'another family (another device) is untouched');
  });

  t.test('two concurrent uses of one token: one wins, the other is reuse', async (t) => {
    const first = await loginOk(ctx, tenant.id, tenant.adminEmail);
    const results = await Promise.all([refresh(ctx, first.refreshToken), refresh(ctx, first.refreshToken)]);
    t.same(results.map((r) => r.statusCode).sort(), [200, 401]);
    t.equal(results.find((r) => r.statusCode === 401)!.json().code, 'TOKEN_REUSED');
  });

  t.test('garbage and unknown tokens are 401', async (t) => {
    const tokens = ['x'.repeat(40), `${uniqueId('nope')}.${'a'.repeat(43)}`, `${tenant.id}.${'a'.repeat(43)}`, `NOT_A_TENANT.${'a'.repeat(43)}`, `.${'a'.repeat(43)}`];
    for (const token of tokens) {
      const res = await refresh(ctx, token);
      t.equal(res.statusCode, 401, token);
      t.equal(res.json().code, 'UNAUTHENTICATED', token);
    }
    for (const payload of [{}, { refreshToken: 5 }, { refreshToken: 'short' }, { refreshToken: 'x'.repeat(20), extra: 1 }]) {
      const res = await ctx.app.inject({ method: 'POST', url: '/api/auth/refresh', payload });
      t.equal(res.statusCode, 400, JSON.stringify(payload));
      t.equal(res.json().code, 'VALIDATION_FAILED');
    }
  });

  t.test('an expired refresh token is 401', async (t) => {
    const first = await loginOk(ctx, tenant.id, tenant.adminEmail);
    const em = emOf(ctx, tenant);

    const n = await em.nativeUpdate(ctx.kernel.model('RefreshToken').ormEntity, { tokenHash: hashRefreshToken(first.refreshToken) }, { expiresAt: new Date(Date.now() - 1000) });
    t.equal(n, 1);
    const res = await refresh(ctx, first.refreshToken);
    t.equal(res.statusCode, 401);
    t.equal(res.json().code, 'UNAUTHENTICATED');
  });

  t.test('a deactivated user cannot refresh', async (t) => {
    const user = await ctx.user(tenant, { codes: [] });
    const pair = await loginOk(ctx, tenant.id, user.email);
    await emOf(ctx, tenant).nativeUpdate(ctx.kernel.model('User').ormEntity, { id: user.id }, { isActive: false });
    const res = await refresh(ctx, pair.refreshToken);
    t.equal(res.statusCode, 401);
    t.equal(res.json().code, 'UNAUTHENTICATED');
  });

  t.test('a suspended tenant cannot refresh', async (t) => {
    const other = await ctx.tenant();
    const pair = await loginOk(ctx, other.id, other.adminEmail);
    await ctx.kernel.tenants.setStatus(other.id, 'suspended');
    const res = await refresh(ctx, pair.refreshToken);
    t.equal(res.statusCode, 403);
    t.equal(res.json().code, 'TENANT_UNAVAILABLE');
    const guess = await refresh(ctx, `${other.id}.${'a'.repeat(43)}`);
    t.equal(guess.json().code, 'UNAUTHENTICATED', 'a made-up token learns nothing about the tenant');
  });
});

t.test('logout', async (t) => {
  const ctx = await build(t);
  const tenant = await ctx.tenant();

  t.test('revokes the family of the refresh token it names', async (t) => {
    const pair = await loginOk(ctx, tenant.id, tenant.adminEmail);
    const other = await loginOk(ctx, tenant.id, tenant.adminEmail);
    const rotated: Tokens = (await refresh(ctx, pair.refreshToken)).json();
    const res = await ctx.as(rotated.accessToken, { method: 'POST', url: '/api/auth/logout', payload: { refreshToken: rotated.refreshToken } });
    t.equal(res.statusCode, 204, res.body);
    t.equal(res.body, '');
    t.equal((await refresh(ctx, rotated.refreshToken)).statusCode, 401, 'refresh after logout fails');
    t.equal((await refresh(ctx, other.refreshToken)).statusCode, 200, 'another session stays');
  });

  t.test('without a body revokes every refresh token of the caller', async (t) => {
    const user = await ctx.user(tenant, { codes: [] });
    const a = await loginOk(ctx, tenant.id, user.email);
    const b = await loginOk(ctx, tenant.id, user.email);
    const admin = await loginOk(ctx, tenant.id, tenant.adminEmail);
    const res = await ctx.as(a.accessToken, { method: 'POST', url: '/api/auth/logout' });
    t.equal(res.statusCode, 204, res.body);
    t.equal((await refresh(ctx, a.refreshToken)).statusCode, 401);
    t.equal((await refresh(ctx, b.refreshToken)).statusCode, 401);
    t.equal((await refresh(ctx, admin.refreshToken)).statusCode, 200, 'other users keep theirs');
    t.equal((await me(ctx, b.accessToken)).statusCode, 401, 'and every access token of the caller stops working');
    const c = await loginOk(ctx, tenant.id, user.email);
    const empty = await ctx.as(c.accessToken, { method: 'POST', url: '/api/auth/logout', payload: {} });
    t.equal(empty.statusCode, 204, 'an empty object does the same');
    t.equal((await refresh(ctx, c.refreshToken)).statusCode, 401);
  });

  t.test("cannot revoke another user's tokens", async (t) => {
    const user = await ctx.user(tenant, { codes: [] });
    const victim = await loginOk(ctx, tenant.id, tenant.adminEmail);
    const res = await ctx.as(user.token, { method: 'POST', url: '/api/auth/logout', payload: { refreshToken: victim.refreshToken } });
    t.equal(res.statusCode, 204);
    t.equal((await refresh(ctx, victim.refreshToken)).statusCode, 200);
  });

  t.test('needs a refresh token or an access token, and a valid body', async (t) => {
    const pair = await loginOk(ctx, tenant.id, tenant.adminEmail);
    const res = await ctx.app.inject({ method: 'POST', url: '/api/auth/logout' });
    t.equal(res.statusCode, 401);
    t.equal(res.json().code, 'UNAUTHENTICATED');
    t.equal((await refresh(ctx, pair.refreshToken)).statusCode, 200, 'nothing was revoked');
    const bad = await ctx.as(tenant.adminToken, { method: 'POST', url: '/api/auth/logout', payload: { refreshToken: 42 } });
    t.equal(bad.statusCode, 400);
    t.equal(bad.json().code, 'VALIDATION_FAILED');
  });
});

t.test('me', async (t) => {
  const ctx = await build(t);
  const tenant = await ctx.tenant();

  t.test('an admin holds every code', async (t) => {
    const res = await me(ctx, tenant.adminToken);
    t.equal(res.statusCode, 200, res.body);
    const body = res.json();
    t.equal(body.email, tenant.adminEmail);
    t.equal(body.tenant, tenant.id);
    t.same(body.roles, ['admin']);
    t.equal(body.isAdmin, true);
    t.same(body.permissions, ctx.kernel.permissions.all().sort());
    t.ok(body.permissions.length > 0);
    t.same(body.companies, [{ id: tenant.companyId, code: 'HQ', name: 'Headquarters' }]);
    t.equal(body.companyId, tenant.companyId);
  });

  t.test('a member holds the codes of their roles', async (t) => {
    const role = uniqueId('viewer');
    const user = await ctx.user(tenant, { codes: ['erp:catalog:view'], role });
    const body = (await me(ctx, user.token)).json();
    t.same(body.roles, [role]);
    t.equal(body.isAdmin, false);
    t.same(body.permissions, ['erp:catalog:view']);
    t.equal(body.companyId, tenant.companyId);
  });

  t.test('a caller without companies has no company context', async (t) => {
    const user = await ctx.user(tenant, { codes: ['erp:catalog:view'], companies: [] });
    const body = (await me(ctx, user.token)).json();
    t.same(body.companies, []);
    t.equal(body.companyId, null);
    const list = await ctx.as(user.token, { method: 'GET', url: '/api/products' });
    t.equal(list.statusCode, 403, 'company data needs a company');
    t.equal(list.json().code, 'COMPANY_REQUIRED');
  });

  t.test('a deleted user is 401', async (t) => {
    const user = await ctx.user(tenant, { codes: [] });
    await emOf(ctx, tenant).nativeDelete(ctx.kernel.model('User').ormEntity, { id: user.id });
    const res = await me(ctx, user.token);
    t.equal(res.statusCode, 401);
    t.equal(res.json().code, 'UNAUTHENTICATED');
  });

  t.test("X-Company-Id picks one of the caller's companies", async (t) => {
    const user = await ctx.user(tenant, { codes: ['erp:catalog:view'] });
    const second = await ctx.company(tenant, uniqueId('C'), [user.id]);
    const foreign = await ctx.company(tenant, uniqueId('F'));
    const { accessToken } = await loginOk(ctx, tenant.id, user.email);
    const body = (await me(ctx, accessToken)).json();
    t.same(body.companies.map((c: { id: string }) => c.id).sort(), [tenant.companyId, second].sort());
    t.equal(body.companyId, tenant.companyId, 'the primary company by default');
    t.equal((await me(ctx, accessToken, { 'x-company-id': second })).json().companyId, second);
    t.equal((await me(ctx, accessToken, { 'x-company-id': second.toUpperCase() })).json().companyId, second, 'case-insensitive');
    const forbidden = await me(ctx, accessToken, { 'x-company-id': foreign });
    t.equal(forbidden.statusCode, 403);
    t.equal(forbidden.json().code, 'COMPANY_FORBIDDEN');
    const malformed = await me(ctx, accessToken, { 'x-company-id': 'HQ' });
    t.equal(malformed.statusCode, 400);
    t.equal(malformed.json().code, 'VALIDATION_FAILED');
  });
});

t.test('access tokens', async (t) => {
  const ctx = await build(t);
  const tenant = await ctx.tenant();
  const claims = ctx.app.tokens.verifyAccess(tenant.adminToken);
  const { sub, tid } = claims;

  const unauthenticated = async (t: Test, headers: Record<string, string>, name: string) => {
    const res = await ctx.app.inject({ method: 'GET', url: '/api/auth/me', headers });
    t.equal(res.statusCode, 401, name);
    t.equal(res.json().code, 'UNAUTHENTICATED', name);
  };

  t.test('missing, malformed, forged and expired tokens are 401 UNAUTHENTICATED', async (t) => {
    const secret = ctx.kernel.config.jwtSecret;
    const forged = new TokenService('another-secret-another-secret-another-secret', 900, 900).signAccess({ sub, tid });
    const expired = new TokenService(secret, -1, 900).signAccess({ sub, tid });
    const [h, p] = tenant.adminToken.split('.');
    const none = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${p}.`;
    const tampered = `${h}.${Buffer.from(JSON.stringify({ ...claims, rol: ['admin', 'root'] })).toString('base64url')}.${tenant.adminToken.split('.')[2]}`;
    const cases: [string, Record<string, string>][] = [
      ['missing', {}],
      ['empty', { authorization: '' }],
      ['scheme only', { authorization: 'Bearer' }],
      ['another scheme', { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` }],
      ['not a JWT', { authorization: 'Bearer not-a-token' }],
      ['three garbage parts', { authorization: 'Bearer aaa.bbb.ccc' }],
      ['bad signature', { authorization: `Bearer ${forged}` }],
      ['tampered payload', { authorization: `Bearer ${tampered}` }],
      ['alg none', { authorization: `Bearer ${none}` }],
      ['expired', { authorization: `Bearer ${expired}` }],
      ['two tokens', { authorization: `Bearer ${tenant.adminToken} ${tenant.adminToken}` }],
    ];
    for (const [name, headers] of cases) await unauthenticated(t, headers, name);
  });

  t.test('the scheme name is case-insensitive (RFC 9110)', async (t) => {
    const res = await ctx.app.inject({ method: 'GET', url: '/api/auth/me', headers: { authorization: `bearer ${tenant.adminToken}` } });
    t.equal(res.statusCode, 200);
  });

  t.test('a token of a tenant deleted from the registry is 401', async (t) => {
    const doomed = await ctx.tenant();
    t.equal((await me(ctx, doomed.adminToken)).statusCode, 200);
    const conn = ctx.kernel.dbs.main.em.getConnection();
    await conn.execute(`delete from "${registrySchema(ctx.kernel)}".tenants where id = ?`, [doomed.id]);
    await ctx.kernel.tenants.reload();
    await unauthenticated(t, { authorization: `Bearer ${doomed.adminToken}` }, 'deleted tenant');
    await conn.execute(`drop schema if exists "${doomed.schema}" cascade`);
  });

  t.test('a token naming a tenant that never existed is 401', async (t) => {
    const ghost = ctx.app.tokens.signAccess({ sub, tid: uniqueId('ghost') });
    await unauthenticated(t, { authorization: `Bearer ${ghost}` }, 'unknown tenant');
  });

  t.test("a suspended tenant's tokens stop working at once", async (t) => {
    const other = await ctx.tenant();
    t.equal((await me(ctx, other.adminToken)).statusCode, 200);
    await ctx.kernel.tenants.setStatus(other.id, 'suspended');
    const res = await me(ctx, other.adminToken);
    t.equal(res.statusCode, 403);
    t.equal(res.json().code, 'TENANT_UNAVAILABLE');
    const list = await ctx.as(other.adminToken, { method: 'GET', url: '/api/products' });
    t.equal(list.json().code, 'TENANT_UNAVAILABLE');
    await ctx.kernel.tenants.setStatus(other.id, 'active');
    t.equal((await me(ctx, other.adminToken)).statusCode, 200, 'reactivated');
  });
});
