// Nobody changes a user who holds rights they do not hold themselves (OWASP
// API5, broken function-level authorization): the target's effective
// permission codes must all be the caller's too, and only administrators
// change administrators. Changing yourself is left to what the routes allow.
import type { FastifyRequest } from 'fastify';
import type { Kernel } from '../../core/kernel.ts';
import { ADMIN_ROLE, httpError } from '../../core/plugin-api.ts';
import { rolesOf } from './assignments.ts';

/** 403 FORBIDDEN unless the caller may change user `userId`. */
export async function assertMayChange(request: FastifyRequest, kernel: Kernel, userId: string): Promise<void> {
  const caller = request.caller!;
  if (userId === caller.sub || caller.rol.includes(ADMIN_ROLE)) return;
  // read in a fork: role links loaded into request.em would join the write's unit of work
  // (removing the user would then delete them a second time)
  const roles = (await rolesOf(request.em!.fork(), kernel, userId)).items.map((r) => r.name);
  if (roles.includes(ADMIN_ROLE)) throw httpError('FORBIDDEN', 'only an administrator may change an administrator');
  const tenantId = request.tenant!.id;
  const mine = new Set(await request.server.abilities.codes(tenantId, caller.rol));
  // codes no loaded module declares grant nothing, so they are no rights to guard
  const missing = (await request.server.abilities.codes(tenantId, roles)).filter((c) => kernel.permissions.has(c) && !mine.has(c));
  if (missing.length) throw httpError('FORBIDDEN', `this user holds permissions you do not: ${missing.join(', ')}`);
}
