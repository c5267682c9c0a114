// Every step of an authenticated request, in order, in one place:
//   authenticate (a user's token, or a module authenticator's credentials) → tenant
//   → (a user's current roles and companies)
//   → (requireRole → requireAdmin) → company → ability → forked EntityManager
// A route says what it needs in config.access; handlers then find request.principal
// (and request.caller for users), request.tenant, request.companyId, request.ability
// and request.em ready. Work without a request gets the same from kernel.contextFor().
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { EntityManager } from '@mikro-orm/core';
import type { Kernel } from '../kernel.ts';
import type { Claims, TokenService } from '../auth/tokens.ts';
import { authenticate, requireAdmin, requireRole } from '../auth/guards.ts';
import type { AbilityFactory, Ability } from '../access/abilities.ts';
import { assertServing, PLATFORM_TENANT, type Tenant } from '../tenancy/registry.ts';
import { httpError } from '../errors.ts';
import { SYSTEM, type Principal } from '../access/principal.ts';
import type { Authentication } from '../context/authenticators.ts';
import { UUID } from '../ids.ts';

export interface RouteAccess {
  /** public: no token; user: any tenant's user; platform: platform operators only; module: a plugin's authenticator */
  auth: 'public' | 'user' | 'platform' | 'module';
  /** auth 'module': the authenticator's name */
  authenticator?: string;
  /** auth 'user': a request without an Authorization header goes on unauthenticated (caller null); the handler decides */
  optional?: boolean;
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

/** The company X-Company-Id names, if any. */
function companyHeader(request: FastifyRequest): string | undefined {
  const header = request.headers['x-company-id'];
  if (header === undefined) return undefined;
  if (typeof header !== 'string' || !UUID.test(header)) {
    throw httpError('VALIDATION_FAILED', 'X-Company-Id must be a company id (UUID)', { errors: [{ path: '/headers/x-company-id', message: 'must be a UUID' }] });
  }
  return header.toLowerCase();
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
    if (access.optional && request.headers.authorization === undefined) return;
    // 1. who: a user's access token, not revoked since (a map lookup), or a module authenticator's principal
    const who = access.auth === 'module' ? await byAuthenticator(request, access.authenticator!) : byToken(request);
    request.principal = who.principal; // known from here on, so even a refused request logs its tenant and user
    await enter(request, access, who);
  });

  // the token names who and which session only; what they may do is read when the tenant is known (step 2)
  function byToken(request: FastifyRequest): Authentication {
    const claims = authenticate(request, tokens);
    request.caller = claims;
    if (kernel.revocations.isRevoked(claims)) throw httpError('UNAUTHENTICATED', 'the access token was revoked; log in again');
    return { tenantId: claims.tid, principal: { kind: 'user', id: claims.sub, roles: [], companyIds: [] } };
  }

  // an authenticator looks credentials up in its tenant's tables with system access
  const system = async (tenantId: string) => {
    // credentials naming a tenant that is none are as wrong as a wrong secret
    const tenant = typeof tenantId === 'string' ? await kernel.tenants.find(tenantId) : undefined;
    if (!tenant) throw httpError('UNAUTHENTICATED', 'the credentials name an unknown tenant');
    // its tables may not fit the loaded modules yet
    kernel.migrations.assertMigrated(tenant);
    return kernel.contextFor({ tenant: tenantId, principal: SYSTEM });
  };
  async function byAuthenticator(request: FastifyRequest, name: string): Promise<Authentication> {
    const found = await kernel.authenticators.get(name)!.authenticate(request, system);
    if (!found) throw httpError('UNAUTHENTICATED', `send the credentials of ${name}`);
    return { ...found, companyId: found.companyId ?? found.principal.companyIds[0] ?? null };
  }

  /** A signed-in user's roles and companies as they are now, not as when the token was issued (access/memberships.ts). */
  async function current(tenant: Tenant, userId: string): Promise<Authentication> {
    const principal = await kernel.memberships.principal(tenant, userId);
    if (!principal) throw httpError('UNAUTHENTICATED', 'the user is no longer active; log in again');
    return { tenantId: tenant.id, principal, companyId: principal.companyIds[0] ?? null };
  }

  /** Steps 2-5, the same for every principal. */
  async function enter(request: FastifyRequest, access: RouteAccess, who: Authentication): Promise<void> {
    // 2. which tenant: from the credentials, via the cached registry
    const tenant = await kernel.tenants.find(who.tenantId);
    if (!tenant) throw httpError('UNAUTHENTICATED', 'the credentials name an unknown tenant');
    assertServing(tenant);
    kernel.migrations.assertMigrated(tenant);
    if (access.auth === 'platform' && tenant.id !== PLATFORM_TENANT) throw httpError('PLATFORM_ONLY');
    request.tenant = tenant;
    // a user's roles and companies now (a cached map lookup), whatever the token was issued with
    const { principal, companyId } = request.caller ? await current(tenant, request.caller.sub) : who;
    request.principal = principal;
    if (access.admin) {
      requireRole(principal.roles);
      requireAdmin(principal.roles);
    }
    // where: an EntityManager forked for the tenant's connection and schema (handed on in step 5)
    const em = kernel.dbs.get(tenant.connectionKey).em.fork({ schema: tenant.schema });
    // 3. which company: X-Company-Id, one of the principal's companies, else their primary one
    const wanted = companyHeader(request);
    if (wanted !== undefined) {
      if (!principal.companyIds.includes(wanted)) throw httpError('COMPANY_FORBIDDEN');
    } else if (access.company && !companyId) {
      throw httpError('COMPANY_REQUIRED');
    }
    request.companyId = wanted ?? companyId ?? null;
    // 4. what may they do: the CASL ability for their roles, or the codes they hold directly (its conditions become SQL in data/scope.ts)
    const ability = principal.kind === 'system' ? kernel.services.systemAbility : await abilities.of(tenant.id, principal);
    if (access.can && !ability.can(access.can.action, access.can.subject)) {
      throw httpError('FORBIDDEN', `missing permission to ${access.can.action} ${access.can.subject}`);
    }
    request.ability = ability;
    // 5. the EntityManager of step 3
    request.em = em;
  }
}
