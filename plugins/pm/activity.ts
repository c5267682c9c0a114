// The activity flow: every created, changed or deleted project, member,
// status, allowed move, task, comment and attachment becomes ProjectActivity
// rows, from the events the kernel writes with each change (so changes made
// through any route or module code count): one row per changed field of an
// update (its before and after), one per create or delete; who did it (null:
// the system) and when the event says; the project and task derived from the row.
import type { ModuleContext, PlinthEvent, Row, Subscriber } from '../../core/plugin-api.ts';

const ACTIONS = new Set(['created', 'updated', 'deleted']);
/** bookkeeping every write changes: no news of its own */
const SKIPPED = new Set(['createdAt', 'updatedAt', 'version']);

type Change = { before: unknown; after: unknown };

export const activitySubscriber: Subscriber = {
  events: ['pm.project.*', 'pm.project-member.*', 'pm.task-status.*', 'pm.status-move.*', 'pm.task.*', 'pm.comment.*', 'pm.attachment.*'],
  async handleMany(ctx, events) {
    // a move along a state flow (pm.project.active) is an "updated" event too: counted once
    const news = events.filter((e) => ACTIONS.has(e.type.slice(e.type.lastIndexOf('.') + 1)) && e.entity);
    if (!news.length) return;
    const tasks = await taskProjects(ctx, news);
    const alive = await existing(ctx, news, tasks);
    const rows: Row[] = [];
    for (const event of news) {
      const row = (event.payload.row ?? {}) as Row;
      const action = event.type.slice(event.type.lastIndexOf('.') + 1);
      const taskId = event.entity === 'Task' ? event.entityId : ((row.taskId as string | undefined) ?? null);
      const projectId = event.entity === 'Project' ? event.entityId : ((row.projectId as string | undefined) ?? (taskId ? tasks.get(taskId) : null) ?? null);
      const base = {
        // a row gone since (a deleted project or task) is named by entity and id only
        projectId: projectId && alive.projects.has(projectId) ? projectId : null,
        taskId: taskId && alive.tasks.has(taskId) ? taskId : null,
        entity: event.entity,
        entityId: event.entityId,
        actorId: event.actor.kind === 'user' ? event.actor.id : null,
        at: event.occurredAt,
      };
      if (action !== 'updated') {
        rows.push({ ...base, action });
        continue;
      }
      const changes = (event.payload.changes ?? {}) as Record<string, Change>;
      for (const [field, change] of Object.entries(changes)) {
        if (!SKIPPED.has(field)) rows.push({ ...base, action, field, before: change.before ?? null, after: change.after ?? null });
      }
    }
    const activity = ctx.data('ProjectActivity');
    for (const r of rows) await activity.create(r);
  },
};

/** The project of each task a comment or attachment event names (their rows carry the task only). */
async function taskProjects(ctx: ModuleContext, events: PlinthEvent[]): Promise<Map<string, string | null>> {
  const ids = [...new Set(events.map((e) => (e.payload.row as Row | undefined)?.taskId).filter((id): id is string => typeof id === 'string'))];
  const out = new Map<string, string | null>();
  if (!ids.length) return out;
  for (const t of await ctx
    .system()
    .data('Task')
    .find({ id: { $in: ids } }, { limit: ids.length }))
    out.set(t.id as string, (t.projectId as string | null) ?? null);
  return out;
}

/** Which of the projects and tasks the events name still exist (an activity row may only point at one that does). */
async function existing(ctx: ModuleContext, events: PlinthEvent[], tasks: Map<string, string | null>): Promise<{ projects: Set<string>; tasks: Set<string> }> {
  const projectIds = new Set<string>();
  const taskIds = new Set<string>(tasks.keys());
  for (const e of events) {
    const row = (e.payload.row ?? {}) as Row;
    if (e.entity === 'Project' && e.entityId) projectIds.add(e.entityId);
    if (typeof row.projectId === 'string') projectIds.add(row.projectId);
    if (e.entity === 'Task' && e.entityId) taskIds.add(e.entityId);
  }
  for (const p of tasks.values()) if (p) projectIds.add(p);
  const sys = ctx.system();
  const found = async (entity: string, ids: Set<string>) =>
    ids.size ? new Set((await sys.data(entity).find({ id: { $in: [...ids] } }, { limit: ids.size })).map((r) => r.id as string)) : new Set<string>();
  return { projects: await found('Project', projectIds), tasks: await found('Task', taskIds) };
}
