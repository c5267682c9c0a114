// The kernel's own write hooks on the entities a user's roles and companies are
// read from (access/memberships.ts). Whatever writes them, a generated route or
// module code, every process drops the tenant's memberships and role codes once
// the transaction commits: a right taken away stops at the next request.
import type { EntityHooks, WriteEvent } from './hooks.ts';

const DROPPED = 'plinth:memberships-changed';
const changed = (e: WriteEvent, fields: string[]) => e.op === 'delete' || fields.some((f) => e.before?.[f] !== e.after?.[f]);

/** Which writes change memberships: any of roles and links; a user's or company's status (or primary company). */
const RELEVANT: Record<string, (e: WriteEvent) => boolean> = {
  Role: () => true,
  UserRole: () => true,
  UserCompany: () => true,
  User: (e) => e.op !== 'create' && changed(e, ['isActive', 'primaryCompanyId']),
  Company: (e) => e.op !== 'create' && changed(e, ['isActive']),
};

/** The hooks by entity, for the identity entities the loaded manifests declare. */
export function membershipHooks(declared: (entity: string) => boolean): Map<string, EntityHooks> {
  const out = new Map<string, EntityHooks>();
  for (const [entity, relevant] of Object.entries(RELEVANT)) {
    if (!declared(entity)) continue;
    out.set(entity, {
      async afterWrite(tx, event) {
        const state = tx.transactionState;
        // once per transaction, however many links it replaced
        if (!relevant(event) || state?.has(DROPPED)) return;
        state?.set(DROPPED, true);
        await tx.rolesChanged();
      },
    });
  }
  return out;
}
