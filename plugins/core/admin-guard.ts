// The tenant always keeps an active administrator. Every write that can take
// one away (a role change, a deactivation, a deletion) calls this inside its
// own transaction after its changes: the per-tenant lock, held until commit,
// puts these checks in turn, so two concurrent writes cannot each remove "the
// other" administrator; each counts what the ones before it committed.
import type { EntityManager } from '@mikro-orm/core';
import type { Kernel } from '../../core/kernel.ts';
import { ADMIN_ROLE, httpError } from '../../core/plugin-api.ts';
import { entity } from './services.ts';

type Row = Record<string, any>;

/** 409 CONFLICT unless the transaction leaves the tenant (schema) an active administrator. */
export async function assertAdminLeft(em: EntityManager, kernel: Kernel, schema: string): Promise<void> {
  await em.getConnection().execute('select pg_advisory_xact_lock(hashtext(?))', [`plinth:admins:${schema}`], 'all', em.getTransactionContext());
  const admin = await em.findOne(entity(kernel, 'Role'), { name: ADMIN_ROLE }) as Row | null;
  const links = admin ? await em.find(entity(kernel, 'UserRole'), { roleId: admin.id }) as Row[] : [];
  const active = links.length ? await em.count(entity(kernel, 'User'), { id: { $in: links.map((l) => l.userId) }, isActive: true }) : 0;
  if (active === 0) throw httpError('CONFLICT', 'the tenant would have no active administrator left');
}
