// Login, refresh (rotating; reuse of a rotated token revokes its family),
// logout and me. Access tokens are JWTs; refresh tokens are opaque and stored
// hashed. Ending a session revokes its access tokens too (auth/sessions.ts).
import type { FastifyInstance, FastifyReply } from 'fastify';
import { Type } from 'typebox';
import type { Kernel } from '../kernel.ts';
import { Identity, sessionStartedAt } from '../auth/identity.ts';
import { verifyPassword } from '../auth/passwords.ts';
import { tenantOfRefreshToken, type Claims, type TokenService } from '../auth/tokens.ts';
import { endSession, endUserSessions } from '../auth/sessions.ts';
import { ADMIN_ROLE } from '../access/role-directory.ts';
import type { AbilityFactory } from '../access/abilities.ts';
import { httpError } from '../errors.ts';
import { success } from './headers.ts';
import { assertServing, TENANT_ID_PATTERN } from '../tenancy/registry.ts';

const TokenPair = Type.Object(
  {
    accessToken: Type.String(),
    tokenType: Type.Literal('Bearer'),
    expiresIn: Type.Integer({ description: 'seconds until the access token expires' }),
    refreshToken: Type.String({ description: 'opaque; rotates on every refresh' }),
    refreshExpiresIn: Type.Integer(),
  },
  { $id: 'AuthTokens', additionalProperties: false },
);

const Me = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    email: Type.String(),
    name: Type.String(),
    tenant: Type.String(),
    roles: Type.Array(Type.String()),
    isAdmin: Type.Boolean(),
    permissions: Type.Array(Type.String(), { description: 'permission codes the caller holds' }),
    companies: Type.Array(Type.Object({ id: Type.String({ format: 'uuid' }), code: Type.String(), name: Type.Union([Type.String(), Type.Null()]) }, { additionalProperties: false })),
    companyId: Type.Union([Type.String({ format: 'uuid' }), Type.Null()], { description: 'the company context of this request' }),
  },
  { $id: 'AuthMe', additionalProperties: false },
);

const Login = Type.Object(
  {
    tenant: Type.String({ pattern: TENANT_ID_PATTERN, maxLength: 40 }),
    email: Type.String({ minLength: 3, maxLength: 254 }),
    password: Type.String({ minLength: 1, maxLength: 1024 }),
  },
  { $id: 'AuthLogin', additionalProperties: false },
);

const RefreshBody = Type.Object({ refreshToken: Type.String({ minLength: 10, maxLength: 200 }) }, { $id: 'AuthRefresh', additionalProperties: false });
const LogoutBody = Type.Object({ refreshToken: Type.Optional(Type.String({ minLength: 10, maxLength: 200 })) }, { $id: 'AuthLogout', additionalProperties: false });

export function registerAuthRoutes(app: FastifyInstance, kernel: Kernel, tokens: TokenService, abilities: AbilityFactory): void {
  const identity = new Identity(kernel);
  for (const s of [TokenPair, Me, Login, RefreshBody, LogoutBody]) app.addSchema(s);
  const tags = ['Auth'];

  // issuedAt: taken before the claims' state was read, so a revocation recorded
  // after that state changed (password, deactivation) always covers the token
  const pair = (reply: FastifyReply, claims: Claims, family: string, refreshToken: string, issuedAt: number) => {
    // token responses must not be kept by browsers or proxies (RFC 6749 §5.1)
    reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
    return {
      accessToken: tokens.signAccess({ ...claims, sid: family }, issuedAt),
      tokenType: 'Bearer' as const,
      expiresIn: tokens.accessTtlSeconds,
      refreshToken,
      refreshExpiresIn: tokens.refreshTtlSeconds,
    };
  };
  const tenantEm = (t: { connectionKey: string; schema: string }) => kernel.dbs.get(t.connectionKey).em.fork({ schema: t.schema });

  // Login attempts per IP: a sixtieth of the per-caller limit (20 a minute by
  // default), so guessing passwords is slow and a test setup's high limit lifts it.
  const { max, windowMs } = kernel.config.rateLimit;
  const loginLimit = { max: Math.max(1, Math.ceil(max / 60)), timeWindow: windowMs, keyGenerator: (r: { ip: string }) => `login:${r.ip}` };

  app.post(
    '/api/auth/login',
    {
      config: { access: { auth: 'public' }, rateLimit: loginLimit, problems: ['INVALID_CREDENTIALS', 'TENANT_UNAVAILABLE', 'TENANT_MIGRATION_FAILED', 'TENANT_MIGRATING', 'DATABASE_UNAVAILABLE'] },
      schema: {
        operationId: 'authLogin',
        tags,
        summary: 'Log in with tenant, e-mail and password',
        security: [],
        body: Type.Ref('AuthLogin'),
        response: { 200: success(Type.Ref('AuthTokens'), 'An access token and a refresh token', ['Cache-Control']) },
      },
    },
    async (request, reply) => {
      const issuedAt = Date.now();
      const { tenant: tenantId, email, password } = request.body as { tenant: string; email: string; password: string };
      const account = email.trim().toLowerCase();
      // per account, before any password is checked (see auth/login-throttle.ts)
      const wait = await kernel.loginThrottle.lockedFor(tenantId, account, request.ip);
      if (wait > 0) throw httpError('RATE_LIMITED', 'too many failed logins for this account; try again later', { headers: { 'retry-after': String(Math.ceil(wait / 1000)) } });
      const tenant = await kernel.tenants.find(tenantId);
      // before its tables are read: they may not fit the loaded modules yet
      if (tenant) await kernel.migrations.awaitMigrated(tenant);
      const em = tenant ? tenantEm(tenant) : null;
      const user = em ? await identity.userByEmail(em, account) : null;
      const ok = await verifyPassword(password, user?.passwordHash);
      if (!ok || !user || !user.isActive || !tenant || !em) {
        await kernel.loginThrottle.failed(tenantId, account, request.ip);
        throw httpError('INVALID_CREDENTIALS');
      }
      await kernel.loginThrottle.succeeded(tenantId, account, request.ip);
      assertServing(tenant);
      const claims = identity.claimsFor(tenant.id, user);
      kernel.memberships.forget(tenant.id, user.id);
      const refresh = tokens.newRefreshToken(tenant.id);
      // the session begins when the login did: a revocation of the user while its
      // password was being checked still covers it (see the refresh below)
      const family = await identity.storeRefreshToken(em, user.id, refresh.hash, identity.newFamily(issuedAt));
      return pair(reply, claims, family, refresh.token, issuedAt);
    },
  );

  app.post(
    '/api/auth/refresh',
    {
      config: { access: { auth: 'public' }, problems: ['UNAUTHENTICATED', 'TOKEN_REUSED', 'TENANT_UNAVAILABLE', 'TENANT_MIGRATION_FAILED', 'TENANT_MIGRATING', 'DATABASE_UNAVAILABLE'] },
      schema: {
        operationId: 'authRefresh',
        tags,
        summary: 'Exchange a refresh token for new tokens (the old one stops working)',
        security: [],
        body: Type.Ref('AuthRefresh'),
        response: { 200: success(Type.Ref('AuthTokens'), 'New tokens; the refresh token sent is used up', ['Cache-Control']) },
      },
    },
    async (request, reply) => {
      const issuedAt = Date.now();
      const { refreshToken } = request.body as { refreshToken: string };
      const tenantId = tenantOfRefreshToken(refreshToken);
      const tenant = tenantId ? await kernel.tenants.find(tenantId) : undefined;
      if (!tenant) throw httpError('UNAUTHENTICATED', 'unknown refresh token');
      kernel.migrations.assertMigrated(tenant);
      const em = tenantEm(tenant);
      const stored = await identity.findRefreshToken(em, refreshToken);
      if (!stored) throw httpError('UNAUTHENTICATED', 'unknown refresh token');
      // only a real token learns that its tenant is suspended
      assertServing(tenant);
      const reused = async () => {
        await endSession(kernel, em, tenant.id, stored.family);
        return httpError('TOKEN_REUSED');
      };
      if (stored.revokedAt) {
        // used before: the stolen-token signal; never used: its session was ended
        if (await identity.wasRotated(em, stored)) throw await reused();
        throw httpError('UNAUTHENTICATED', 'the refresh token was revoked (its session was logged out or ended); log in again');
      }
      // a session that began before its user's sessions were revoked (a login that
      // checked the old password while it was being changed) ends here
      if (kernel.revocations.isRevoked({ tid: tenant.id, sub: stored.userId, sid: stored.family, ims: sessionStartedAt(stored.family) })) {
        await endSession(kernel, em, tenant.id, stored.family);
        throw httpError('UNAUTHENTICATED', 'the session was ended; log in again');
      }
      if (stored.expiresAt.getTime() < Date.now()) throw httpError('UNAUTHENTICATED', 'the refresh token expired; log in again');
      const user = await identity.userById(em, stored.userId);
      if (!user?.isActive) throw httpError('UNAUTHENTICATED', 'the user is no longer active');
      const claims = identity.claimsFor(tenant.id, user);
      kernel.memberships.forget(tenant.id, user.id);
      const next = tokens.newRefreshToken(tenant.id);
      // consume and successor in one transaction: see Identity.rotateRefreshToken
      if (!(await identity.rotateRefreshToken(em, stored, next.hash))) throw await reused();
      return pair(reply, claims, stored.family, next.token, issuedAt);
    },
  );

  app.post(
    '/api/auth/logout',
    {
      // the refresh token alone is enough (a client whose access token expired can still log out);
      // an Authorization header, when sent, must be valid
      config: { access: { auth: 'user', optional: true } },
      // the body is optional: without one (no content at all) every token of the caller goes
      preValidation: async (request) => {
        request.body ??= {};
      },
      schema: {
        operationId: 'authLogout',
        tags,
        summary: 'End the session of a refresh token: its family and access tokens (or, without one, every session of the caller)',
        security: [{ bearerAuth: [] }, {}],
        body: Type.Ref('AuthLogout'),
        response: { 204: success({ type: 'null' }, 'Logged out: the session ended') },
      },
    },
    async (request, reply) => {
      const { refreshToken } = (request.body ?? {}) as { refreshToken?: string };
      const caller = request.caller;
      if (refreshToken) {
        // with an access token: only a session of that caller; without: whoever holds the refresh token holds the session
        const named = tenantOfRefreshToken(refreshToken);
        const tenant = caller ? request.tenant : named ? await kernel.tenants.find(named) : undefined;
        const em = caller ? request.em! : tenant && tenantEm(tenant);
        const stored = em ? await identity.findRefreshToken(em, refreshToken) : null;
        // an unknown or spent token is no error (RFC 7009 §2.2): the session is over either way
        if (stored && (!caller || stored.userId === caller.sub)) await endSession(kernel, em!, tenant!.id, stored.family);
      } else if (caller) {
        await endUserSessions(kernel, request.em!, caller.tid, caller.sub);
      } else {
        throw httpError('UNAUTHENTICATED', 'send the refresh token of the session, or an access token to end every session');
      }
      return reply.code(204).send();
    },
  );

  app.get(
    '/api/auth/me',
    {
      config: { access: { auth: 'user' } },
      schema: {
        operationId: 'authGetMe',
        tags,
        summary: 'The caller: roles, permissions, companies and company context',
        security: [{ bearerAuth: [] }],
        response: { 200: success(Type.Ref('AuthMe'), 'The caller and the company context of this request') },
      },
    },
    async (request) => {
      const claims = request.caller!;
      const { roles } = request.principal!;
      const em = request.em!;
      const user = await identity.userById(em, claims.sub);
      if (!user) throw httpError('UNAUTHENTICATED', 'the user no longer exists');
      const companies = await identity.companiesOf(em, user.id);
      const lang = request.tenant!.defaultLanguage;
      const permissions = roles.includes(ADMIN_ROLE) ? kernel.permissions.all() : [...new Set(await abilities.codes(request.tenant!.id, roles))];
      return {
        id: user.id,
        email: user.email,
        name: user.name,
        tenant: claims.tid,
        roles: [...roles],
        isAdmin: roles.includes(ADMIN_ROLE),
        permissions: permissions.sort(),
        companies: companies.map((c) => ({ id: c.id, code: c.code, name: c.name?.[lang] ?? Object.values(c.name ?? {})[0] ?? null })),
        companyId: request.companyId,
      };
    },
  );
}
