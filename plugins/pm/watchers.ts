// Who follows a task, and who may read it. The reporter, the assignee and
// every commenter follow a task automatically (watchTask, called by the
// notifications subscriber before it notifies, so a comment's notices reach
// who the same events made watchers); users watch and unwatch through the
// generated routes (/api/pm/tasks/:taskId/watchers).
import type { ModuleContext, Row } from '../../core/plugin-api.ts';

/** The task, whoever may read it (null when gone). */
export async function taskOf(ctx: ModuleContext, taskId: unknown): Promise<Row | null> {
  if (typeof taskId !== 'string') return null;
  const [task] = await ctx.system().data('Task').find({ id: taskId }, { limit: 1 });
  return task ?? null;
}

/**
 * The users who can read `task` by its project role, as the manifest's
 * erp:pm:view grant says: the project's members, or for a personal task its
 * reporter and assignee. Nobody is notified, mentioned or made a watcher
 * outside this set.
 */
export async function readersOf(ctx: ModuleContext, task: Row): Promise<Set<string>> {
  if (!task.projectId) return new Set([task.reporterId, task.assigneeId].filter((id): id is string => typeof id === 'string'));
  const members = await ctx.system().data('ProjectMember').find({ projectId: task.projectId }, { limit: 10_000 });
  return new Set(members.map((m) => m.userId as string));
}

/** Makes `users` (those who can read the task) watchers of it; idempotent. Returns the task's watchers now. */
export async function watchTask(ctx: ModuleContext, task: Row, users: (string | null | undefined)[], readers?: Set<string>): Promise<Set<string>> {
  const watchers = ctx.system().data('TaskWatcher');
  const now = new Set((await watchers.find({ taskId: task.id }, { limit: 10_000 })).map((w) => w.userId as string));
  const wanted = [...new Set(users.filter((u): u is string => typeof u === 'string' && !now.has(u)))];
  if (!wanted.length) return now;
  const allowed = readers ?? (await readersOf(ctx, task));
  for (const userId of wanted) {
    if (!allowed.has(userId)) continue;
    // taskId comes from the route's path (/tasks/:taskId/watchers), never from a body: module code sets it as such
    await watchers.create({ userId }, { internal: { taskId: task.id } });
    now.add(userId);
  }
  return now;
}
