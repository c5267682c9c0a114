// Assignment history: every change of a task's assignee, through any route
// (PM's or AI's) or module code, is recorded by a write hook on Task, in the
// change's own transaction: it commits or rolls back with the change, and a
// write runs its hooks once, so nothing is missed and nothing is counted twice
// (an event subscriber, at least once, would need receipts to dedupe).
// POST /api/ai/tasks/assign adds a note; that the assignee can read the task
// is the project module's rule on every Task write (plugins/pm/tasks.ts), so
// this route answers its 422 /assigneeId as PM's routes do.
import { etag, handler, httpError, Type, type EntityHooks } from '../../core/plugin-api.ts';

export const assignmentHooks: EntityHooks = {
  async afterWrite(ctx, { op, id, before, after }) {
    if (op === 'delete' || !after) return;
    const from = (before?.assigneeId as string | null | undefined) ?? null;
    const to = (after.assigneeId as string | null | undefined) ?? null;
    if (from === to) return;
    // the history is bookkeeping of a write the caller was allowed to make: recorded whatever they may read
    await ctx
      .system()
      .data('AiTaskAssignment')
      .create({}, { internal: { taskId: id, fromId: from, toId: to, byId: ctx.userId, at: ctx.now().toISOString() } });
  },
};

const Uuid = Type.String({ format: 'uuid' });

export const setTaskAssignee = handler(
  {
    body: Type.Object(
      {
        taskId: Uuid,
        assigneeId: Type.Union([Uuid, Type.Null()], { description: 'the new assignee; null unassigns' }),
        note: Type.Optional(Type.String({ maxLength: 1000, description: 'why, kept in the assignment history' })),
      },
      { additionalProperties: false },
    ),
    response: {
      200: Type.Object(
        {
          task: Type.Ref('PmTask'),
          assignment: Type.Union([Type.Ref('AiTaskAssignment'), Type.Null()], { description: 'the history entry; null when the assignee was already the one asked for' }),
        },
        { additionalProperties: false, description: 'The task as stored, and its new assignment' },
      ),
    },
    problems: ['PRECONDITION_FAILED', 'UNPROCESSABLE'],
  },
  async (ctx, request) => {
    const { taskId, assigneeId, note } = request.body;
    // If-Match: the task's ETag as read; 412 when it changed since
    const ifMatch = request.headers['if-match'];
    const done = await ctx.transaction(async (tx) => {
      const tasks = tx.data('Task');
      // 404 unless the caller can read it; locked, so the history entry found below is this change's
      const current = await tasks.lock(taskId);
      if (ifMatch !== undefined && ifMatch !== etag(current.version)) throw httpError('PRECONDITION_FAILED', 'the task changed since it was read');
      if ((current.assigneeId ?? null) === assigneeId) return { task: current, assignment: null };
      const task = await tasks.update(taskId, { assigneeId });
      const history = tx.system().data('AiTaskAssignment');
      const [entry] = await history.find({ taskId, toId: assigneeId }, { limit: 1, orderBy: '-at' });
      const assignment = note !== undefined && entry ? await history.update(entry.id, {}, { set: { note } }) : entry;
      return { task, assignment };
    });
    return { task: ctx.data('Task').toDto(done.task), assignment: done.assignment ? ctx.data('AiTaskAssignment').toDto(done.assignment) : null };
  },
);
