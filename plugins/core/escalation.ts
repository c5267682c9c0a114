// Nobody changes a user who holds rights they do not hold themselves (OWASP
// API5, broken function-level authorization): the target's effective
// permission codes must all be the caller's too, and only administrators
// change administrators. Changing yourself is left to what the routes allow.
import { ADMIN_ROLE, httpError, type ModuleContext } from '../../core/plugin-api.ts';
import { rolesOf } from './assignments.ts';

/** 403 FORBIDDEN unless the caller may change user `userId`. */
export async function assertMayChange(ctx: ModuleContext, userId: string): Promise<void> {
  const caller = ctx.principal;
  if (caller.kind === 'system' || userId === caller.id || caller.roles.includes(ADMIN_ROLE)) return;
  // every role the target holds, whether or not the caller may read roles
  const roles = (await rolesOf(ctx.system(), userId)).items.map((r) => r.name);
  if (roles.includes(ADMIN_ROLE)) throw httpError('FORBIDDEN', 'only an administrator may change an administrator');
  const mine = new Set(await ctx.codesOf(caller.roles));
  // codes no loaded module declares grant nothing, so they are no rights to guard
  const missing = (await ctx.codesOf(roles)).filter((c) => ctx.isKnownCode(c) && !mine.has(c));
  if (missing.length) throw httpError('FORBIDDEN', `this user holds permissions you do not: ${missing.join(', ')}`);
}
