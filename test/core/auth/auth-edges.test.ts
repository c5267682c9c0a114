// Rough edges of authentication: a logout with the refresh token alone (a
// client whose access token expired), the newest token of an ended session
// saying "revoked" rather than "reused", and a company its creator (or a user
// just added to it) can work in at once, without logging in again.
import t from 'tap';
import { build, PASSWORD, type TestContext } from '../../helper.ts';

type Tokens = { accessToken: string; refreshToken: string };

const ctx = await build(t);
const tenant = await ctx.tenant();

const loginOk = async (c: TestContext, tenantId: string, email: string): Promise<Tokens> => {
  const res = await c.login(tenantId, email, PASSWORD);
  if (res.statusCode !== 200) throw new Error(`login failed: ${res.body}`);
  return res.json();
};
const refresh = (refreshToken: string) => ctx.app.inject({ method: 'POST', url: '/api/auth/refresh', payload: { refreshToken } });
const logout = (payload?: object, headers: Record<string, string> = {}) => ctx.app.inject({ method: 'POST', url: '/api/auth/logout', headers, ...(payload ? { payload } : {}) });
const me = (token: string, headers: Record<string, string> = {}) => ctx.as(token, { method: 'GET', url: '/api/auth/me', headers });

t.test('logout with the refresh token alone', async (t) => {
  t.test('ends that session: its refresh and access tokens', async (t) => {
    const user = await ctx.user(tenant, { codes: [] });
    const a = await loginOk(ctx, tenant.id, user.email);
    const b = await loginOk(ctx, tenant.id, user.email);
    const res = await logout({ refreshToken: a.refreshToken });
    t.equal(res.statusCode, 204, res.body);
    t.equal(res.body, '');
    const again = await refresh(a.refreshToken);
    t.equal(again.statusCode, 401);
    t.equal(again.json().code, 'UNAUTHENTICATED', 'revoked, not reused');
    t.equal((await me(a.accessToken)).statusCode, 401, "the session's access token stops too");
    t.equal((await me(b.accessToken)).statusCode, 200, 'another session stays');
    t.equal((await refresh(b.refreshToken)).statusCode, 200);
  });

  t.test('an unknown, spent or foreign token is no error and ends nothing', async (t) => {
    const live = await loginOk(ctx, tenant.id, tenant.adminEmail);
    for (const refreshToken of [`${tenant.id}.${'a'.repeat(43)}`, `nosuch-tenant.${'a'.repeat(43)}`, 'no-dot-at-all-here', `.${'b'.repeat(20)}`, live.accessToken.slice(0, 200)]) {
      t.equal((await logout({ refreshToken })).statusCode, 204, refreshToken.slice(0, 30));
    }
    t.equal((await logout({ refreshToken: live.refreshToken })).statusCode, 204);
    t.equal((await logout({ refreshToken: live.refreshToken })).statusCode, 204, 'twice: the session is over either way');
  });

  t.test('refusals: nothing to end, a bad body, a bad Authorization header', async (t) => {
    const live = await loginOk(ctx, tenant.id, tenant.adminEmail);
    for (const payload of [undefined, {}]) {
      const res = await logout(payload);
      t.equal(res.statusCode, 401, JSON.stringify(payload));
      t.equal(res.json().code, 'UNAUTHENTICATED');
    }
    for (const payload of [{ refreshToken: 42 }, { refreshToken: 'x'.repeat(201) }, { refreshToken: 'short' }, { refreshToken: live.refreshToken, extra: 1 }, { refreshToken: null }]) {
      const res = await logout(payload);
      t.equal(res.statusCode, 400, JSON.stringify(payload).slice(0, 60));
      t.equal(res.json().code, 'VALIDATION_FAILED');
    }
    for (const authorization of [`Bearer ${live.accessToken}x`, 'Basic abc', 'Bearer']) {
      const res = await logout({ refreshToken: live.refreshToken }, { authorization });
      t.equal(res.json().code, 'UNAUTHENTICATED', `${authorization.slice(0, 12)}: a header sent must be valid`);
    }
    t.equal((await refresh(live.refreshToken)).statusCode, 200, 'nothing was ended');
  });

  t.test('the document says the access token is optional', async (t) => {
    const doc = (await ctx.app.inject({ method: 'GET', url: '/api-docs/json' })).json();
    t.same(doc.paths['/api/auth/logout'].post.security, [{ bearerAuth: [] }, {}]);
  });
});

t.test('the newest token of an ended session says revoked; an old one reuse', async (t) => {
  t.test('after a logout of every session', async (t) => {
    const user = await ctx.user(tenant, { codes: [] });
    const first = await loginOk(ctx, tenant.id, user.email);
    const second: Tokens = (await refresh(first.refreshToken)).json();
    t.equal((await ctx.as(second.accessToken, { method: 'POST', url: '/api/auth/logout' })).statusCode, 204);
    const newest = await refresh(second.refreshToken);
    t.equal(newest.statusCode, 401);
    t.equal(newest.json().code, 'UNAUTHENTICATED', 'never used: revoked');
    const old = await refresh(first.refreshToken);
    t.equal(old.json().code, 'TOKEN_REUSED', 'used before: reuse');
  });

  t.test('after a password change', async (t) => {
    const user = await ctx.user(tenant, { codes: [] });
    const pair = await loginOk(ctx, tenant.id, user.email);
    const res = await ctx.as(tenant.adminToken, { method: 'PUT', url: `/api/users/${user.id}/password`, payload: { password: 'a brand new password' } });
    t.equal(res.statusCode, 204, res.body);
    t.equal((await refresh(pair.refreshToken)).json().code, 'UNAUTHENTICATED');
  });

  t.test('after a reuse revoked the family', async (t) => {
    const first = await loginOk(ctx, tenant.id, tenant.adminEmail);
    const second: Tokens = (await refresh(first.refreshToken)).json();
    t.equal((await refresh(first.refreshToken)).json().code, 'TOKEN_REUSED');
    t.equal((await refresh(second.refreshToken)).json().code, 'UNAUTHENTICATED', "the legitimate client's token: revoked");
    t.equal((await refresh(first.refreshToken)).json().code, 'TOKEN_REUSED', 'the stolen one stays reuse');
  });
});

t.test('a new company answers at once', async (t) => {
  const own = await ctx.tenant();
  const created = await ctx.as(own.adminToken, { method: 'POST', url: '/api/companies', payload: { code: 'NEW', name: 'New branch' } });
  t.equal(created.statusCode, 201, created.body);
  const companyId: string = created.json().id;
  const inNew = { 'x-company-id': companyId };

  t.test('to the administrator who created it, on the token from before', async (t) => {
    const who = await me(own.adminToken, inNew);
    t.equal(who.statusCode, 200, who.body);
    t.equal(who.json().companyId, companyId);
    t.ok(
      who.json().companies.some((c: { id: string }) => c.id === companyId),
      'a member now',
    );
    const product = await ctx.as(own.adminToken, { method: 'POST', url: '/api/products', headers: inNew, payload: { sku: 'NEW-1', name: 'Fresh', price: '1.00' } });
    t.equal(product.statusCode, 201, product.body);
    const there = (await ctx.as(own.adminToken, { method: 'GET', url: '/api/products', headers: inNew })).json();
    t.same(
      there.items.map((p: { sku: string }) => p.sku),
      ['NEW-1'],
    );
    const home = (await ctx.as(own.adminToken, { method: 'GET', url: '/api/products' })).json();
    t.notOk(
      home.items.some((p: { sku: string }) => p.sku === 'NEW-1'),
      'the primary company keeps its own rows',
    );
  });

  t.test('to a user added to it, without a new login; to nobody else', async (t) => {
    const clerk = await ctx.user(own, { codes: ['erp:catalog:view'] });
    const before = await ctx.as(clerk.token, { method: 'GET', url: '/api/products', headers: inNew });
    t.equal(before.statusCode, 403);
    t.equal(before.json().code, 'COMPANY_FORBIDDEN');
    const added = await ctx.as(own.adminToken, { method: 'PUT', url: `/api/users/${clerk.id}/companies`, payload: { companyIds: [own.companyId, companyId] } });
    t.equal(added.statusCode, 200, added.body);
    const after = await ctx.as(clerk.token, { method: 'GET', url: '/api/products', headers: inNew });
    t.equal(after.statusCode, 200, after.body);
    t.same(
      after.json().items.map((p: { sku: string }) => p.sku),
      ['NEW-1'],
    );
    const other = await ctx.tenant();
    const foreign = await ctx.as(other.adminToken, { method: 'GET', url: '/api/products', headers: inNew });
    t.equal(foreign.json().code, 'COMPANY_FORBIDDEN', "another tenant's administrator");
    const outsider = await ctx.user(own, { codes: ['erp:catalog:view'] });
    t.equal((await ctx.as(outsider.token, { method: 'GET', url: '/api/products', headers: inNew })).json().code, 'COMPANY_FORBIDDEN', 'a user of the tenant who is no member');
  });

  t.test('not once it is deactivated', async (t) => {
    const patched = await ctx.as(own.adminToken, { method: 'PATCH', url: `/api/companies/${companyId}`, payload: { isActive: false } });
    t.equal(patched.statusCode, 200, patched.body);
    const fresh = await loginOk(ctx, own.id, own.adminEmail);
    t.equal((await me(fresh.accessToken, inNew)).json().code, 'COMPANY_FORBIDDEN');
  });
});
