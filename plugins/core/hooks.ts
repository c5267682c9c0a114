// Rules around the generated Role and User writes.
//   Roles hold only permission codes the loaded modules declare; the built-in
//   roles keep their names and are never deleted; "admin" holds every code by
//   definition, so its list is not edited. Any role write drops the tenant's
//   compiled abilities.
//   Users: e-mail addresses are stored lower-case (login compares them so); an
//   administrator cannot deactivate or delete themselves; a deactivated or
//   deleted user's sessions end at once (refresh and access tokens); nobody
//   changes a user holding rights they lack (escalation.ts); inside the
//   write's transaction, a deactivation or deletion keeps the tenant an
//   active administrator (admin-guard.ts).
import type { EntityHooks } from '../../core/plugin-api.ts';
import { ADMIN_ROLE, httpError, revokeUserSessions, rolesChanged } from '../../core/plugin-api.ts';
import { entity } from './services.ts';
import { assertAdminLeft } from './admin-guard.ts';
import { assertMayChange } from './escalation.ts';

type Row = Record<string, any>;

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
  async beforeWrite(request, { op, id, body }, kernel) {
    const errors = permissionErrors(body?.permissions, (c) => kernel.permissions.has(c));
    if (errors.length) throw httpError('VALIDATION_FAILED', errors.map((e) => `${e.path} ${e.message}`).join('; '), { errors });
    if (op === 'create') return;
    const role = await request.em!.findOne(entity(kernel, 'Role'), { id: id! }) as Row | null;
    if (!role?.builtIn) return; // an unknown id is the generic route's 404
    if (op === 'delete') throw httpError('CONFLICT', `the built-in role "${role.name}" cannot be deleted`);
    if (body?.name !== undefined && body.name !== role.name) throw httpError('CONFLICT', `the built-in role "${role.name}" cannot be renamed`);
    if (role.name === ADMIN_ROLE && body?.permissions !== undefined && JSON.stringify(body.permissions) !== JSON.stringify(role.permissions)) {
      throw httpError('CONFLICT', `the built-in role "${ADMIN_ROLE}" holds every permission; its list cannot be edited`);
    }
  },
  async afterWrite(request) {
    await rolesChanged(request);
  },
};

export const userHooks: EntityHooks = {
  async beforeWrite(request, { op, id, body }, kernel) {
    const self = id === request.caller!.sub;
    if (self && (op === 'delete' || body?.isActive === false)) throw httpError('CONFLICT', 'you cannot deactivate or delete yourself');
    if (op !== 'create') await assertMayChange(request, kernel, id!);
    if (typeof body?.email === 'string') return { ...body, email: body.email.trim().toLowerCase() };
  },
  async inTransaction(request, { em, before, after }, kernel) {
    if (before?.isActive === true && after?.isActive !== true) await assertAdminLeft(em, kernel, request.tenant!.schema);
  },
  async afterWrite(request, { op, id, body }) {
    // refresh and access tokens, in every process
    if (op === 'delete' || body?.isActive === false) await revokeUserSessions(request, id);
  },
};
