// Rules around every Role and User write (generated routes and module code).
//   Roles hold only permission codes the loaded modules declare; the built-in
//   roles keep their names and are never deleted; "admin" holds every code by
//   definition, so its list is not edited. (The kernel itself drops the
//   tenant's cached roles in every process once a role write commits.)
//   Companies: their creator becomes a member.
//   Users: e-mail addresses are stored lower-case (login compares them so); an
//   administrator cannot deactivate or delete themselves; nobody changes a user
//   holding rights they lack (escalation.ts); a deactivation or deletion keeps
//   the tenant an active administrator (admin-guard.ts, inside the write's
//   transaction) and, once committed, ends the user's sessions.
import { ADMIN_ROLE, httpError, validationError, type EntityHooks } from '../../core/plugin-api.ts';
import { assertAdminLeft } from './admin-guard.ts';
import { assertMayChange } from './escalation.ts';

function permissionErrors(value: unknown, known: (code: string) => boolean) {
  if (value === null || value === undefined) return [];
  if (!Array.isArray(value)) return [{ path: '/permissions', message: 'must be a list of permission codes' }];
  if (value.length > 500) return [{ path: '/permissions', message: 'must hold at most 500 codes' }];
  return value.flatMap((code, i) => {
    if (typeof code !== 'string' || !known(code)) return [{ path: `/permissions/${i}`, message: 'is not a permission code of the loaded modules' }];
    return value.indexOf(code) === i ? [] : [{ path: `/permissions/${i}`, message: 'is listed twice' }];
  });
}

export const roleHooks: EntityHooks = {
  async beforeWrite(ctx, { op, input, before }) {
    const errors = permissionErrors(input?.permissions, (c) => ctx.isKnownCode(c));
    if (errors.length) throw validationError(errors);
    if (!before?.builtIn) return;
    if (op === 'delete') throw httpError('CONFLICT', `the built-in role "${before.name}" cannot be deleted`);
    if (input?.name !== undefined && input.name !== before.name) throw httpError('CONFLICT', `the built-in role "${before.name}" cannot be renamed`);
    if (before.name === ADMIN_ROLE && input?.permissions !== undefined && JSON.stringify(input.permissions) !== JSON.stringify(before.permissions)) {
      throw httpError('CONFLICT', `the built-in role "${ADMIN_ROLE}" holds every permission; its list cannot be edited`);
    }
  },
};

// Whoever creates a company belongs to it: an administrator can work in it at
// once (X-Company-Id), as the request context reads memberships its token lacks.
export const companyHooks: EntityHooks = {
  async afterWrite(tx, { op, id }) {
    if (op === 'create' && tx.userId) await tx.system().data('UserCompany').create({ userId: tx.userId, companyId: id });
  },
};

export const userHooks: EntityHooks = {
  async beforeWrite(ctx, { op, id, input }) {
    if (id !== undefined && id === ctx.userId && (op === 'delete' || input?.isActive === false)) throw httpError('CONFLICT', 'you cannot deactivate or delete yourself');
    if (op !== 'create') await assertMayChange(ctx, id!);
    if (typeof input?.email === 'string') return { ...input, email: input.email.trim().toLowerCase() };
  },
  async afterWrite(tx, { before, after }) {
    if (before?.isActive === true && after?.isActive !== true) await assertAdminLeft(tx);
  },
  async afterCommit(ctx, { op, id, before, after }) {
    // refresh and access tokens, in every process
    if (op === 'delete' || (before?.isActive === true && after?.isActive === false)) await ctx.revokeUserSessions(id);
  },
};
