// The tenant always keeps an active administrator. Every write that can take
// one away (a role change, a deactivation, a deletion) calls this inside its
// own transaction after its changes: the per-tenant lock, held until commit,
// puts these checks in turn, so two concurrent writes cannot each remove "the
// other" administrator; each counts what the ones before it committed.
import { ADMIN_ROLE, httpError, type ModuleContext } from '../../core/plugin-api.ts';

/** 409 CONFLICT unless the transaction leaves the tenant an active administrator. */
export async function assertAdminLeft(tx: ModuleContext): Promise<void> {
  await tx.serialize('admins');
  // every administrator counts, whether or not the caller may read them
  const all = tx.system();
  const [admin] = await all.data('Role').find({ name: ADMIN_ROLE }, { limit: 1 });
  const active = admin ? await all.data('User').count({ isActive: true, $exists: { entity: 'UserRole', on: { userId: 'id' }, where: { roleId: admin.id } } }) : 0;
  if (active === 0) throw httpError('CONFLICT', 'the tenant would have no active administrator left');
}
