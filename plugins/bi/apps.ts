// Applications and their members: the creator becomes the owner, and an
// application always keeps one (the check counts owners under a lock per
// application, so two owners demoting each other at once cannot both win).
// Who sees and changes what is the manifest's relational grants over
// BiAppMember, compiled into every statement by the kernel.
import { httpError, type EntityHooks } from '../../core/plugin-api.ts';

export const appHooks: EntityHooks = {
  async afterWrite(ctx, { op, after }) {
    if (op !== 'create' || !after || !ctx.userId) return;
    // the creator may not yet read what they are about to own: the system writes the first membership
    await ctx
      .system()
      .data('BiAppMember')
      .create({ userId: ctx.userId, role: 'owner' }, { internal: { appId: after.id } });
  },
};

export const memberHooks: EntityHooks = {
  async beforeWrite(ctx, { op, input, before }) {
    if (op === 'create' || !before) return;
    const demoted = op === 'delete' || (input?.role !== undefined && input.role !== 'owner');
    if (before.role !== 'owner' || !demoted) return;
    await ctx.serialize(`bi:owners:${before.appId}`);
    const owners = await ctx.system().data('BiAppMember').count({ appId: before.appId, role: 'owner' });
    // an application being deleted takes its members along (cascade): no owner is left behind then
    if (owners <= 1 && (await ctx.system().data('BiApp').count({ id: before.appId }))) {
      throw httpError('CONFLICT', 'the last owner of an application cannot leave or be demoted: make another member owner first', {
        errors: [{ path: '/role', message: 'the application needs an owner' }],
      });
    }
  },
};
