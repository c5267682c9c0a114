// POST /api/users (a user with a password) and PUT /api/users/:id/password.
// The password is hashed (scrypt) into the internal passwordHash field; no
// response ever carries either. Both writes go through the User entity's
// scoped data access, so its hooks (escalation, e-mail case), the version
// and the audit trail apply as on the generated routes.
import { etag, handler, hashPassword, Type } from '../../core/plugin-api.ts';
import { assertMayChange } from './escalation.ts';
import { NewPassword, NewUser, UserParams } from './schemas.ts';

export const createUser = handler({ body: NewUser, response: { 201: Type.Ref('CoreUser', { description: 'The user created', headers: ['Location', 'ETag'] }) } }, async (ctx, request, reply) => {
  const { password, ...fields } = request.body;
  const passwordHash = await hashPassword(password);
  const users = ctx.data('User');
  const row = await ctx.transaction(async (tx) => {
    const created = await tx.data('User').create(fields, { internal: { passwordHash } });
    // a primary company the user did not belong to would be ignored at login: membership comes with it
    if (fields.primaryCompanyId) await tx.system().data('UserCompany').create({ userId: created.id, companyId: fields.primaryCompanyId });
    return created;
  });
  reply.header('location', `/api/users/${row.id}`).header('etag', etag(row.version));
  return reply.code(201).send(users.toDto(row));
});

export const setUserPassword = handler({ params: UserParams, body: NewPassword, response: { 204: Type.Null({ description: 'Password set' }) } }, async (ctx, request, reply) => {
  const { id } = request.params;
  const { password } = request.body;
  await ctx.data('User').read(id); // 404 before the costly hash
  await assertMayChange(ctx, id);
  const passwordHash = await hashPassword(password);
  await ctx.transaction(async (tx) => {
    // a new version and an audit record, refused unless the caller may update this user
    await tx.data('User').update(id, {}, { set: { passwordHash }, auditAction: 'set-password' });
    // whoever held the old password loses their sessions: refresh tokens in this transaction, access tokens in every process
    await tx.revokeUserSessions(id);
  });
  return reply.code(204).send();
});
