// Every step of an authenticated request, in order, in one place:
//   authenticate → tenant → (requireRole → requireAdmin) → company → ability → forked EntityManager
// A route says what it needs in config.access; handlers then find request.caller,
// request.tenant, request.companyId, request.ability and request.em ready.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { EntityManager } from '@mikro-orm/core';
import type { Kernel } from '../kernel.ts';
import type { Claims, TokenService } from '../auth/tokens.ts';
import { authenticate, requireAdmin, requireRole } from '../auth/guards.ts';
import type { AbilityFactory, Ability } from '../access/abilities.ts';
import { PLATFORM_TENANT, type Tenant } from '../tenancy/registry.ts';
import { httpError } from '../errors.ts';

export interface RouteAccess {
  /** public: no token; user: any tenant's user; platform: platform operators only */
  auth: 'public' | 'user' | 'platform';
  /** run requireRole then requireAdmin after authenticating */
  admin?: boolean;
  /** company: the route works on company data and needs a company context */
  company?: boolean;
  /** the CASL check every request to this route must pass */
  can?: { action: string; subject: string };
}

declare module 'fastify' {
  interface FastifyContextConfig { access?: RouteAccess }
  interface FastifyRequest {
    caller: Claims | null;
    tenant: Tenant | null;
    companyId: string | null;
    ability: Ability | null;
    em: EntityManager | null;
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function resolveCompany(request: FastifyRequest, claims: Claims, needed: boolean): string | null {
  const header = request.headers['x-company-id'];
  if (header !== undefined) {
    if (typeof header !== 'string' || !UUID.test(header)) {
      throw httpError('VALIDATION_FAILED', 'X-Company-Id must be a company id (UUID)', { errors: [{ path: '/headers/x-company-id', message: 'must be a UUID' }] });
    }
    const id = header.toLowerCase();
    if (!claims.cid.includes(id)) throw httpError('COMPANY_FORBIDDEN');
    return id;
  }
  const fallback = claims.pc ?? claims.cid[0] ?? null;
  if (needed && !fallback) throw httpError('COMPANY_REQUIRED');
  return fallback;
}

export function installRequestContext(app: FastifyInstance, kernel: Kernel, tokens: TokenService, abilities: AbilityFactory): void {
  app.decorateRequest('caller', null);
  app.decorateRequest('tenant', null);
  app.decorateRequest('companyId', null);
  app.decorateRequest('ability', null);
  app.decorateRequest('em', null);

  app.addHook('onRequest', async (request) => {
    const access = request.routeOptions.config.access;
    if (!access || access.auth === 'public') return;
    // 1. who: a valid access token, not revoked since (a map lookup)
    const claims = authenticate(request, tokens);
    request.caller = claims; // known from here on, so even a refused request logs its tenant and user
    if (kernel.revocations.isRevoked(claims)) throw httpError('UNAUTHENTICATED', 'the access token was revoked; log in again');
    // 2. which tenant: from the token, via the cached registry
    const tenant = await kernel.tenants.find(claims.tid);
    if (!tenant) throw httpError('UNAUTHENTICATED', 'the token names an unknown tenant');
    if (tenant.status !== 'active') throw httpError('TENANT_UNAVAILABLE', `tenant ${tenant.id} is ${tenant.status}`);
    if (access.auth === 'platform' && tenant.id !== PLATFORM_TENANT) throw httpError('PLATFORM_ONLY');
    request.tenant = tenant;
    if (access.admin) { requireRole(claims); requireAdmin(claims); }
    // 3. which company: X-Company-Id, one of the caller's companies
    request.companyId = resolveCompany(request, claims, access.company === true);
    // 4. what may they do: the CASL ability for their roles (its conditions become SQL in data/scope.ts)
    const ability = await abilities.for(tenant.id, claims.rol);
    if (access.can && !ability.can(access.can.action, access.can.subject)) {
      throw httpError('FORBIDDEN', `missing permission to ${access.can.action} ${access.can.subject}`);
    }
    request.ability = ability;
    // 5. where: an EntityManager forked for the tenant's connection and schema
    request.em = kernel.dbs.get(tenant.connectionKey).em.fork({ schema: tenant.schema });
  });
}
