// Which problem codes a route can answer: what the kernel's pipeline may refuse
// before the handler runs, derived from the route's access config, method and
// schemas, plus what its handler says it raises (config.problems). The OpenAPI
// document lists exactly these, so a client never handles a code that cannot come.
import type { RouteOptions } from 'fastify';
import type { ErrorCode } from '../errors.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** the codes the handler itself (and the data layer under it) may raise */
    problems?: ErrorCode[];
  }
}

/** Methods whose body Fastify never reads: no 413 or 415 can come from them. */
const BODYLESS = new Set(['GET', 'HEAD']);

/** The codes any data write may raise (core/crud): a missing row, a constraint, a field rule, a state flow, a module hook's rule. */
export const DATA_WRITE_PROBLEMS: ErrorCode[] = ['NOT_FOUND', 'CONFLICT', 'FORBIDDEN', 'STATE_LOCKED', 'INVALID_TRANSITION', 'UNPROCESSABLE'];

export function routeProblems(route: Pick<RouteOptions, 'method' | 'config' | 'schema'>): ErrorCode[] {
  const access = route.config?.access;
  const methods = [route.method].flat().map((m) => String(m).toUpperCase());
  // every request: a missing Host header (400), a crash (500), a closing server (503)
  const codes: ErrorCode[] = ['VALIDATION_FAILED', 'INTERNAL', 'SERVICE_UNAVAILABLE'];
  if (methods.some((m) => !BODYLESS.has(m))) codes.push('PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE');
  if (route.config?.rateLimit !== false) codes.push('RATE_LIMITED');
  if (access && access.auth !== 'public') {
    // request-context.ts: credentials, tenant status, X-Company-Id, then the route's own checks
    codes.push('UNAUTHENTICATED', 'TENANT_UNAVAILABLE', 'TENANT_MIGRATION_FAILED', 'TENANT_MIGRATING', 'COMPANY_FORBIDDEN', 'DATABASE_UNAVAILABLE');
    if (access.auth === 'platform') codes.push('PLATFORM_ONLY');
    if (access.admin) codes.push('ROLE_REQUIRED', 'ADMIN_REQUIRED');
    if (access.company) codes.push('COMPANY_REQUIRED');
    if (access.can) codes.push('FORBIDDEN');
  }
  return [...new Set([...codes, ...(route.config?.problems ?? [])])];
}
