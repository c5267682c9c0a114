// Request helpers the core module's tests share (not a test file: tap runs *.test.ts only).
import type { LightMyRequestResponse } from 'fastify';
import type { TAP } from 'tap';
import { PASSWORD, type TestContext, type TestTenant } from '../../helper.ts';
import { expectProblem, expectStatus, type Method } from '../catalog/catalog-api.ts';

export { expectFieldProblem, expectProblem, expectStatus, UNKNOWN_ID } from '../catalog/catalog-api.ts';

export type Api = (method: Method, url: string, payload?: object | string, headers?: Record<string, string>) => Promise<LightMyRequestResponse>;

/** Requests as `token`; a string payload goes out as raw JSON text. */
export function apiAs(ctx: TestContext, token: string): Api {
  return (method, url, payload, headers = {}) => {
    const raw = typeof payload === 'string';
    return ctx.as(token, { method, url, headers: raw ? { 'content-type': 'application/json', ...headers } : headers, ...(payload === undefined ? {} : { payload }) });
  };
}

/** A user of the tenant who holds no role at all (logged in after their role was taken away). */
export async function rolelessUser(ctx: TestContext, tenant: TestTenant): Promise<{ id: string; token: string }> {
  const u = await ctx.user(tenant, { codes: [] });
  const t = ctx.kernel.tenants.cached(tenant.id)!;
  await ctx.kernel.dbs.get(t.connectionKey).em.fork({ schema: t.schema }).nativeDelete(ctx.kernel.model('UserRole').ormEntity, { userId: u.id });
  const login = await ctx.login(tenant.id, u.email, PASSWORD);
  return { id: u.id, token: expectStatus(login, 200, 'login').accessToken };
}

/**
 * The seed's admin guard on one request: no token 401 UNAUTHENTICATED, a
 * bad token too, no role 403 ROLE_REQUIRED (even holding nothing else), a role
 * with every code of the area but not admin 403 ADMIN_REQUIRED.
 */
export async function checkAdminGuard(
  t: Pick<TAP, 'equal' | 'match'>,
  ctx: TestContext,
  tenant: TestTenant,
  codes: string[],
  request: { method: Method; url: string; payload?: object },
): Promise<void> {
  const what = `${request.method} ${request.url}`;
  expectProblem(t, await ctx.app.inject({ method: request.method, url: request.url, ...(request.payload ? { payload: request.payload } : {}) }), 401, 'UNAUTHENTICATED', `${what} anonymous`);
  expectProblem(
    t,
    await ctx.app.inject({ method: request.method, url: request.url, headers: { authorization: 'Bearer a.b.c' }, ...(request.payload ? { payload: request.payload } : {}) }),
    401,
    'UNAUTHENTICATED',
    `${what} bad token`,
  );
  const none = await rolelessUser(ctx, tenant);
  expectProblem(t, await apiAs(ctx, none.token)(request.method, request.url, request.payload), 403, 'ROLE_REQUIRED', `${what} no role`);
  const manager = await ctx.user(tenant, { codes });
  expectProblem(t, await apiAs(ctx, manager.token)(request.method, request.url, request.payload), 403, 'ADMIN_REQUIRED', `${what} not admin`);
}

/** Every log line the app wrote, as one string (build(t, { logger: logSink(lines) })). */
export function logSink(lines: string[]) {
  return {
    level: 'trace',
    stream: {
      write: (line: string) => {
        lines.push(line);
      },
    },
  };
}
