// ctx.as(userId): a context acting as a user, for work done on their behalf
// without their request (a scheduled report). It sees what the user could
// see themselves, with the roles they hold now (not a token's), joins the
// caller's transaction (reading the user on its connection), and is null for
// users who are unknown or inactive.
import t from 'tap';
import { build } from '../../helper.ts';
import { SYSTEM } from '../../../core/access/principal.ts';

const ctx = await build(t);
const tenant = await ctx.tenant();
const system = await ctx.kernel.contextFor({ tenant: tenant.id, principal: SYSTEM, companyId: tenant.companyId });
const member = await ctx.user(tenant, { codes: ['erp:pm:view'] });
const bystander = await ctx.user(tenant, { codes: ['erp:pm:view'] });
const project = await system.data('Project').create({ key: 'ASX', name: 'Acting' });
await system.data('ProjectMember').create({ userId: member.id, role: 'member' }, { internal: { projectId: project.id } });
const inside = await system.data('Task').create({ title: 'in the project', projectId: project.id });
await system.data('Task').create({ title: 'elsewhere', projectId: (await system.data('Project').create({ key: 'ASY', name: 'Other' })).id });

t.test('sees what the user sees, as the user', async (t) => {
  const as = (await system.as(member.id))!;
  t.equal(as.userId, member.id);
  t.equal(as.principal.kind, 'user');
  t.same(as.principal.companyIds, [tenant.companyId]);
  t.equal(as.companyId, tenant.companyId);
  t.same(
    (await as.data('Task').find()).map((r) => r.id),
    [inside.id],
    'their project only',
  );
  t.equal(await (await system.as(bystander.id))!.data('Task').count(), 0, 'a user in no project: nothing');
  t.ok(as.can('read', 'Task'));
  t.notOk(as.can('read', 'Role'), 'no codes beyond their roles');
  const elsewhere = (await system.data('Task').find({ title: 'elsewhere' }))[0].id as string;
  t.equal(
    (
      await as
        .data('Task')
        .read(elsewhere)
        .catch((e: { statusCode: number }) => e)
    ).statusCode,
    404,
    'a row they cannot read is not found',
  );
});

t.test('the roles held now, not those of a token', async (t) => {
  const user = await ctx.user(tenant, { codes: [] });
  t.equal(await (await system.as(user.id))!.data('Task').count(), 0);
  const role = await system.data('Role').create({ name: 'pm-admins', permissions: ['erp:pm:admin'] });
  await system.data('UserRole').create({ userId: user.id, roleId: role.id });
  t.equal(await (await system.as(user.id))!.data('Task').count(), 2, 'a role given since counts');
});

t.test('joins the transaction it is asked in', async (t) => {
  await system
    .transaction(async (tx) => {
      const fresh = await tx.data('Task').create({ title: 'uncommitted', projectId: project.id });
      t.equal(await (await tx.as(member.id))!.data('Task').count({ id: fresh.id }), 1, 'sees the uncommitted row');
      throw new Error('roll back');
    })
    .catch(() => undefined);
  t.equal(await system.data('Task').count({ title: 'uncommitted' }), 0);
});

t.test('inside a transaction: the user and their roles as the transaction sees them, on its connection', async (t) => {
  // embedded PGlite has one connection, which the transaction holds: a read on another would wait for ever
  const user = await ctx.user(tenant, { codes: [] });
  const [role] = await system.data('Role').find({ name: 'pm-admins' });
  await system
    .transaction(async (tx) => {
      await tx.data('UserRole').create({ userId: user.id, roleId: role.id });
      t.equal(await (await tx.as(user.id))!.data('Task').count(), 2, 'a role given in the transaction counts in it');
      throw new Error('roll back');
    })
    .catch(() => undefined);
  t.equal(await (await system.as(user.id))!.data('Task').count(), 0, 'and is not remembered once it rolled back');
});

t.test('null for unknown, malformed and inactive users', async (t) => {
  t.equal(await system.as('01900000-0000-7000-8000-000000000000'), null);
  t.equal(await system.as('not-a-uuid'), null);
  const gone = await ctx.user(tenant, { codes: ['erp:pm:view'] });
  await system.data('User').update(gone.id, { isActive: false });
  t.equal(await system.as(gone.id), null);
  const other = await ctx.tenant();
  const stranger = await ctx.user(other, { codes: ['erp:pm:view'] });
  t.equal(await system.as(stranger.id), null, "another tenant's user");
});
