// Comments and attachments of a task in an archived project are read-only
// like the task (other rules of these entities live in their own files).
import type { EntityHooks } from '../../core/plugin-api.ts';
import { assertTaskOpen } from './rules.ts';

const frozenWithTask: EntityHooks = {
  problems: { create: ['STATE_LOCKED'], update: ['STATE_LOCKED'], delete: ['STATE_LOCKED'] },
  async beforeWrite(ctx, { op, input, before }) {
    await assertTaskOpen(ctx, op === 'create' ? input?.taskId : before?.taskId);
  },
};

export const commentArchiveHooks = frozenWithTask;
export const attachmentArchiveHooks = frozenWithTask;
