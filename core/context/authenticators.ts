// Pluggable authenticators: principals other than signed-in users (a module's
// API-key clients) come from an authenticator a module's plugin exports, and
// a custom route names the one it accepts (`"auth": "<name>"` in the
// manifest). Such a route accepts only that authenticator's credentials, and
// user tokens are refused there, as the authenticator's credentials are on
// every other route. Core knows no authenticator by name.
import type { FastifyRequest } from 'fastify';
import type { Principal } from '../access/principal.ts';
import type { ModuleContext } from './module-context.ts';

export interface Authentication {
  /** the tenant the credentials belong to */
  tenantId: string;
  /** who they name: usually a module's client, with the permission codes it holds */
  principal: Principal;
  /** the company the principal works in when the request names none */
  companyId?: string | null;
}

export interface Authenticator {
  /** how the credentials travel, for the OpenAPI document (components.securitySchemes) */
  scheme: { type: 'apiKey'; in: 'header'; name: string; description?: string } | { type: 'http'; scheme: 'bearer'; bearerFormat?: string; description?: string };
  /**
   * The principal the request's credentials name; null when it carries none of
   * this kind. Throw httpError('UNAUTHENTICATED', …) for credentials that are
   * wrong, expired or revoked. `system(tenantId)` gives a system context of a
   * tenant to look credentials up in its tables.
   */
  authenticate(request: FastifyRequest, system: (tenantId: string) => Promise<ModuleContext>): Promise<Authentication | null>;
}
