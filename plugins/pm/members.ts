// Project members: a project always keeps an owner. The check counts owners
// under a per-project lock, so two owners demoting each other at once cannot
// both succeed. A user is a member once (the manifest's unique key: 409).
import { httpError, type EntityHooks } from '../../core/plugin-api.ts';
import { assertProjectOpen } from './rules.ts';

export const memberHooks: EntityHooks = {
  problems: { create: ['STATE_LOCKED'], update: ['STATE_LOCKED'], delete: ['STATE_LOCKED'] },
  async beforeWrite(ctx, { op, input, before }) {
    if (op === 'create' || !before) return;
    const demoted = op === 'delete' || (input?.role !== undefined && input.role !== 'owner');
    if (before.role !== 'owner' || !demoted) return;
    await ctx.serialize(`pm:owners:${before.projectId}`);
    const owners = await ctx.system().data('ProjectMember').count({ projectId: before.projectId, role: 'owner' });
    if (owners <= 1) {
      throw httpError('CONFLICT', 'the last owner of a project cannot be removed or demoted: make another member owner first', {
        errors: [{ path: '/role', message: 'the project needs an owner' }],
      });
    }
  },
  // the project is checked once the kernel holds it locked (a member's parent in the path), so an archive
  // cannot slip in between; a lock taken earlier, shared, would deadlock with that one
  async afterWrite(ctx, { before, after }) {
    await assertProjectOpen(ctx, (after ?? before)?.projectId);
  },
};
