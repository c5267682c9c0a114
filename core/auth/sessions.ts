// Ending sessions: the refresh tokens in the tenant schema and the access
// tokens through the revocation list, refresh tokens first, so a refresh
// racing the revocation cannot mint an access token the list would miss.
import type { EntityManager } from '@mikro-orm/core';
import { Identity, type IdentityDeps } from './identity.ts';
import type { Revocations } from './revocations.ts';

/** What ending sessions needs of the kernel. */
export interface SessionDeps extends IdentityDeps {
  revocations: Pick<Revocations, 'revokeSession' | 'revokeUser'>;
}

/** One session: a refresh-token family and every access token issued for it. */
export async function endSession(kernel: SessionDeps, em: EntityManager, tenantId: string, family: string): Promise<void> {
  await new Identity(kernel).revokeFamily(em, family);
  await kernel.revocations.revokeSession(tenantId, family);
}

/** Every session of a user: all refresh tokens, and every access token issued until now. */
export async function endUserSessions(kernel: SessionDeps, em: EntityManager, tenantId: string, userId: string): Promise<void> {
  await new Identity(kernel).revokeAllOf(em, userId);
  await kernel.revocations.revokeUser(tenantId, userId);
}
