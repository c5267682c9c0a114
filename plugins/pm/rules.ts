// Rules the PM entities share: an archived project freezes everything in it,
// and the 422 a rule answers naming the field it is about.
import { httpError, type ModuleContext } from '../../core/plugin-api.ts';

/** 422 UNPROCESSABLE naming the field (`/statusId`) a rule refuses. */
export function unprocessable(path: string, message: string) {
  return httpError('UNPROCESSABLE', `${path} ${message}`, { errors: [{ path, message }] });
}

/** 409 STATE_LOCKED when `projectId` names an archived project (null: a personal task, never archived). */
export async function assertProjectOpen(ctx: ModuleContext, projectId: unknown): Promise<void> {
  if (typeof projectId !== 'string') return;
  // the system's view: the rule holds whatever the caller may read
  if (await ctx.system().data('Project').count({ id: projectId, archived: true })) {
    throw httpError('STATE_LOCKED', 'the project is archived: it and everything in it are read-only until it is unarchived');
  }
}

/** 409 STATE_LOCKED when task `taskId` belongs to an archived project. */
export async function assertTaskOpen(ctx: ModuleContext, taskId: unknown): Promise<void> {
  if (typeof taskId !== 'string') return;
  const archived = await ctx
    .system()
    .data('Task')
    .count({ id: taskId, $exists: { entity: 'Project', on: { id: 'projectId' }, where: { archived: true } } });
  if (archived) throw httpError('STATE_LOCKED', "the task's project is archived: its tasks, comments and attachments are read-only");
}
