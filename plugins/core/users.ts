// POST /api/users (a user with a password) and PUT /api/users/:id/password.
// The password is hashed (scrypt) into the internal passwordHash field; no
// response ever carries either.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { subject } from '@casl/ability';
import type { Kernel } from '../../core/kernel.ts';
import { crudContext, etag, hashPassword, httpError, revokeUserSessions } from '../../core/plugin-api.ts';
import { entity, serviceOf } from './services.ts';
import { assertMayChange } from './escalation.ts';

interface NewUser { email: string; name: string; password: string; primaryCompanyId?: string | null; [field: string]: unknown }

export async function createUser(request: FastifyRequest, reply: FastifyReply, kernel: Kernel): Promise<unknown> {
  const { password, ...fields } = request.body as NewUser;
  const service = serviceOf(kernel, 'User');
  const ctx = crudContext(request, kernel);
  const passwordHash = await hashPassword(password);
  const row = await ctx.em.transactional(async (em) => {
    const created = await service.create({ ...ctx, em }, { ...fields, email: fields.email.trim().toLowerCase() }, { passwordHash });
    // a primary company the user did not belong to would be ignored at login
    if (fields.primaryCompanyId) em.create(entity(kernel, 'UserCompany'), { userId: created.id, companyId: fields.primaryCompanyId } as never);
    await em.flush();
    return created;
  });
  reply.header('location', `/api/users/${row.id}`).header('etag', etag(row.version));
  return reply.code(201).send(service.toDto(row, ctx.read));
}

export async function setUserPassword(request: FastifyRequest, reply: FastifyReply, kernel: Kernel): Promise<unknown> {
  const { id } = request.params as { id: string };
  const { password } = request.body as { password: string };
  const ctx = crudContext(request, kernel);
  const user = await serviceOf(kernel, 'User').read(ctx, id);
  if (!ctx.ability.can('update', subject('User', { ...user }))) throw httpError('FORBIDDEN', 'not allowed to update this User');
  await assertMayChange(request, kernel, id);
  const passwordHash = await hashPassword(password);
  await ctx.em.transactional(async (em) => {
    await em.nativeUpdate(entity(kernel, 'User'), { id }, { passwordHash } as never);
    // whoever held the old password loses their sessions
    await em.nativeUpdate(entity(kernel, 'RefreshToken'), { userId: id, revokedAt: null }, { revokedAt: new Date() } as never);
  });
  // once committed: every access token so far, in every process, and a refresh token a racing refresh stored
  await revokeUserSessions(request, id);
  return reply.code(204).send();
}
