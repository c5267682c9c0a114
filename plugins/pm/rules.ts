// Rules the PM entities share: an archived project freezes everything in it,
// and the 422 a rule answers naming the field it is about.
import { httpError, type ModuleContext } from '../../core/plugin-api.ts';

/** 422 UNPROCESSABLE naming the field (`/statusId`) a rule refuses. */
export function unprocessable(path: string, message: string) {
  return httpError('UNPROCESSABLE', `${path} ${message}`, { errors: [{ path, message }] });
}

/**
 * 409 STATE_LOCKED when `projectId` names an archived project (null: a personal
 * task, never archived). The project stays share-locked for the write's
 * transaction, so an archive (which locks it for update) waits for the writes
 * already past this check, and the writes after it see it archived.
 */
export async function assertProjectOpen(ctx: ModuleContext, projectId: unknown): Promise<void> {
  if (typeof projectId !== 'string') return;
  // the system's view: the rule holds whatever the caller may read; an unknown project is the reference check's 400
  const projects = ctx.system().data('Project');
  if (!(await projects.count({ id: projectId }))) return;
  if ((await projects.lock(projectId, { shared: true })).archived) {
    throw httpError('STATE_LOCKED', 'the project is archived: it and everything in it are read-only until it is unarchived');
  }
}

/** 409 STATE_LOCKED when task `taskId` belongs to an archived project (its project share-locked, as above). */
export async function assertTaskOpen(ctx: ModuleContext, taskId: unknown): Promise<void> {
  if (typeof taskId !== 'string') return;
  const [task] = await ctx.system().data('Task').find({ id: taskId }, { limit: 1 });
  if (!task?.projectId) return;
  try {
    await assertProjectOpen(ctx, task.projectId);
  } catch (err) {
    if ((err as { code?: string }).code === 'STATE_LOCKED') throw httpError('STATE_LOCKED', "the task's project is archived: its tasks, comments and attachments are read-only");
    throw err;
  }
}
