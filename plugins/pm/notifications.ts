// Notifications, made from the events of task and comment changes (so a
// change through any route or module code notifies): "assigned" to a new
// assignee who did not assign themselves; "comment" to a task's watchers but
// the author; "mention" to the users a comment mentions, instead of the plain
// comment notice; "due_soon" and "overdue" from a daily job, once per task,
// kind and day. Nobody is notified about a task they cannot read. The same
// subscriber makes the reporter, assignee and commenters watchers first, so a
// comment reaches whoever the earlier events made one.
import { addDays, handler, Type, type JobDefinition, type ModuleContext, type PlinthEvent, type Row, type Subscriber } from '../../core/plugin-api.ts';
import { readersOf, taskOf, watchTask } from './watchers.ts';

type Kind = 'assigned' | 'comment' | 'mention' | 'due_soon' | 'overdue';

interface Notice {
  userId: string;
  kind: Kind;
  task: Row;
  commentId?: string | null;
  actorId?: string | null;
  day?: string;
}

const TITLE_MAX = 500;

function titleOf(kind: Kind, task: Row): string {
  const what = String(task.title ?? '');
  const text = {
    assigned: `Assigned to you: ${what}`,
    comment: `New comment on ${what}`,
    mention: `You were mentioned on ${what}`,
    due_soon: `Due tomorrow: ${what}`,
    overdue: `Overdue: ${what}`,
  }[kind];
  return text.length > TITLE_MAX ? `${text.slice(0, TITLE_MAX - 1)}…` : text;
}

/** Writes notices for readers of their task only (as the system: users create none themselves). */
async function notify(ctx: ModuleContext, notices: Notice[], readers: Set<string>): Promise<void> {
  const notifications = ctx.system().data('Notification');
  for (const n of notices) {
    if (!readers.has(n.userId)) continue;
    await notifications.create({
      userId: n.userId,
      kind: n.kind,
      taskId: n.task.id,
      commentId: n.commentId ?? null,
      actorId: n.actorId ?? null,
      title: titleOf(n.kind, n.task),
      day: n.day ?? null,
    });
  }
}

const actorOf = (e: PlinthEvent) => (e.actor.kind === 'user' ? e.actor.id : null);
type Changes = Record<string, { before: unknown; after: unknown }>;

async function onTask(ctx: ModuleContext, event: PlinthEvent): Promise<void> {
  if (!event.type.endsWith('.created') && !event.type.endsWith('.updated')) return;
  const task = await taskOf(ctx, event.entityId);
  if (!task) return;
  const readers = await readersOf(ctx, task);
  await watchTask(ctx, task, [task.reporterId as string, task.assigneeId as string], readers);
  const changes = (event.payload.changes ?? {}) as Changes;
  const assignee = event.type.endsWith('.created') ? (event.payload.row as Row).assigneeId : changes.assigneeId?.after;
  const actor = actorOf(event);
  if (typeof assignee === 'string' && assignee !== actor) await notify(ctx, [{ userId: assignee, kind: 'assigned', task, actorId: actor }], readers);
}

async function onComment(ctx: ModuleContext, event: PlinthEvent): Promise<void> {
  const created = event.type.endsWith('.created');
  if (!created && !event.type.endsWith('.updated')) return;
  const comment = event.payload.row as Row;
  if (comment.deletedAt) return;
  const task = await taskOf(ctx, comment.taskId);
  if (!task) return;
  const readers = await readersOf(ctx, task);
  const author = (comment.authorId as string | null) ?? actorOf(event);
  const mentioned = new Set((comment.mentions as string[] | null) ?? []);
  const base = { task, commentId: comment.id as string, actorId: author };
  if (!created) {
    // an edit notifies only the users it newly mentions; an edit that kept the mentions lists no change of them
    const changed = ((event.payload.changes ?? {}) as Changes).mentions;
    const before = new Set(changed ? ((changed.before as string[] | null) ?? []) : mentioned);
    const fresh = [...mentioned].filter((u) => !before.has(u) && u !== author);
    return notify(
      ctx,
      fresh.map((userId) => ({ ...base, userId, kind: 'mention' as const })),
      readers,
    );
  }
  const watchers = await watchTask(ctx, task, [author], readers);
  const notices: Notice[] = [];
  for (const userId of mentioned) if (userId !== author) notices.push({ ...base, userId, kind: 'mention' });
  for (const userId of watchers) if (userId !== author && !mentioned.has(userId)) notices.push({ ...base, userId, kind: 'comment' });
  await notify(ctx, notices, readers);
}

export const notificationSubscriber: Subscriber = {
  events: ['pm.task.created', 'pm.task.updated', 'pm.comment.created', 'pm.comment.updated'],
  // oldest first, in one transaction: a task's watchers exist before a comment on it notifies them
  async handleMany(ctx, events) {
    for (const event of events) {
      if (event.entity === 'Task') await onTask(ctx, event);
      else if (event.entity === 'Comment') await onComment(ctx, event);
    }
  },
};

const OPEN = { $or: [{ category: null }, { category: { $nin: ['done', 'cancelled'] } }] };
const BATCH = 1000;

/**
 * Daily, in the tenant's time zone: the assignee of every open task due
 * tomorrow hears "due_soon", of every open task past its due date "overdue";
 * once per task, kind and day however often the job runs. `data.on`: the day
 * to remind for (default today on the tenant's clock).
 */
export const dueReminders: JobDefinition<{ on?: string }> = {
  cron: '0 7 * * *',
  attempts: 3,
  async handle(ctx, data) {
    const on = typeof data?.on === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(data.on) ? data.on : ctx.today();
    const tomorrow = addDays(on, 1);
    await ctx.transaction(async (tx) => {
      const tasks = tx.system().data('Task');
      const due = [
        ...(await tasks.find({ ...OPEN, assigneeId: { $ne: null }, dueDate: tomorrow }, { limit: BATCH })).map((task) => ({ task, kind: 'due_soon' as const })),
        ...(await tasks.find({ ...OPEN, assigneeId: { $ne: null }, dueDate: { $lt: on } }, { limit: BATCH, orderBy: 'dueDate' })).map((task) => ({ task, kind: 'overdue' as const })),
      ];
      if (!due.length) return;
      const sent = await tx
        .system()
        .data('Notification')
        .find({ day: on, kind: { $in: ['due_soon', 'overdue'] }, taskId: { $in: due.map((d) => d.task.id) } }, { limit: due.length * 2 });
      const done = new Set(sent.map((n) => `${n.taskId}/${n.kind}/${n.userId}`));
      for (const { task, kind } of due) {
        const userId = task.assigneeId as string;
        if (done.has(`${task.id}/${kind}/${userId}`)) continue;
        await notify(tx, [{ userId, kind, task, day: on }], await readersOf(tx, task));
      }
    });
  },
};

const Count = (description: string) => Type.Object({ count: Type.Integer({ minimum: 0 }) }, { additionalProperties: false, description });

export const setAllNotificationsRead = handler({ response: { 200: Count("How many of the caller's notifications were unread and are read now") } }, async (ctx) => {
  return ctx.transaction(async (tx) => {
    const notifications = tx.data('Notification');
    let count = 0;
    for (;;) {
      // the caller's own, whatever else their grants let them read
      const unread = await notifications.find({ userId: tx.userId, read: false }, { limit: BATCH });
      for (const n of unread) await notifications.update(n.id as string, { read: true });
      count += unread.length;
      if (unread.length < BATCH) return { count };
    }
  });
});

export const getUnreadNotificationCount = handler({ response: { 200: Count("How many of the caller's notifications are unread") } }, async (ctx) => ({
  count: await ctx.data('Notification').count({ userId: ctx.userId, read: false }),
}));
