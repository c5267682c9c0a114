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
import { SYSTEM, type Principal } from '../access/principal.ts';

export interface RouteAccess {
  /** public: no token; user: any tenant's user; platform: platform operators only; module: a plugin's authenticator */
  auth: 'public' | 'user' | 'platform' | 'module';
  /** auth 'module': the authenticator's name */
  authenticator?: string;
  /** run requireRole then requireAdmin after authenticating */
  admin?: boolean;
  /** company: the route works on company data and needs a company context */
  company?: boolean;
  /** the CASL check every request to this route must pass */
  can?: { action: string; subject: string };
}

declare module 'fastify' {
  interface FastifyContextConfig {
    access?: RouteAccess;
  }
  interface FastifyRequest {
    /** a user's token claims; null for other principals */
    caller: Claims | null;
    /** who acts: the user, or the principal an authenticator named */
    principal: Principal | null;
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
  app.decorateRequest('principal', null);
  app.decorateRequest('tenant', null);
  app.decorateRequest('companyId', null);
  app.decorateRequest('ability', null);
  app.decorateRequest('em', null);

  app.addHook('onRequest', async (request) => {
    const access = request.routeOptions.config.access;
    if (!access || access.auth === 'public') return;
    if (access.auth === 'module') return moduleContext(request, access);
    // 1. who: a valid access token, not revoked since (a map lookup)
    const claims = authenticate(request, tokens);
    request.caller = claims; // known from here on, so even a refused request logs its tenant and user
    request.principal = { kind: 'user', id: claims.sub, roles: claims.rol, companyIds: claims.cid };
    if (kernel.revocations.isRevoked(claims)) throw httpError('UNAUTHENTICATED', 'the access token was revoked; log in again');
    // 2. which tenant: from the token, via the cached registry
    const tenant = await kernel.tenants.find(claims.tid);
    if (!tenant) throw httpError('UNAUTHENTICATED', 'the token names an unknown tenant');
    if (tenant.status !== 'active') throw httpError('TENANT_UNAVAILABLE', `tenant ${tenant.id} is ${tenant.status}`);
    if (access.auth === 'platform' && tenant.id !== PLATFORM_TENANT) throw httpError('PLATFORM_ONLY');
    request.tenant = tenant;
    if (access.admin) {
      requireRole(claims);
      requireAdmin(claims);
    }
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

  /** The same steps for a principal a plugin's authenticator names (an API-key client). */
  const system = async (tenantId: string) => {
    // credentials naming a tenant that is none are as wrong as a wrong secret
    if (typeof tenantId !== 'string' || !(await kernel.tenants.find(tenantId))) throw httpError('UNAUTHENTICATED', 'the credentials name an unknown tenant');
    return kernel.contextFor({ tenant: tenantId, principal: SYSTEM });
  };
  async function moduleContext(request: FastifyRequest, access: RouteAccess): Promise<void> {
    const found = await kernel.authenticators.get(access.authenticator!)!.authenticate(request, system);
    if (!found) throw httpError('UNAUTHENTICATED', `send the credentials of ${access.authenticator}`);
    const tenant = await kernel.tenants.find(found.tenantId);
    if (!tenant) throw httpError('UNAUTHENTICATED', 'the credentials name an unknown tenant');
    if (tenant.status !== 'active') throw httpError('TENANT_UNAVAILABLE', `tenant ${tenant.id} is ${tenant.status}`);
    request.tenant = tenant;
    request.principal = found.principal;
    const header = request.headers['x-company-id'];
    const companyId = typeof header === 'string' ? header.toLowerCase() : (found.companyId ?? found.principal.companyIds[0] ?? null);
    if (header !== undefined && (typeof header !== 'string' || !found.principal.companyIds.includes(companyId!))) throw httpError('COMPANY_FORBIDDEN');
    if (access.company && !companyId) throw httpError('COMPANY_REQUIRED');
    request.companyId = companyId;
    const ability = found.principal.kind === 'system' ? kernel.services.systemAbility : await kernel.abilities.for(tenant.id, found.principal.roles);
    if (access.can && !ability.can(access.can.action, access.can.subject)) throw httpError('FORBIDDEN', `missing permission to ${access.can.action} ${access.can.subject}`);
    request.ability = ability;
    request.em = kernel.dbs.get(tenant.connectionKey).em.fork({ schema: tenant.schema });
  }
}
