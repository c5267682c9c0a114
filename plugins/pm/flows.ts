// Status flows: each project has its statuses (the tenant's default flow,
// projectId null, serves personal tasks), optionally restricted by StatusMove
// rows: with none every move is allowed; with some, only the listed moves
// whose role is null or the mover's project role.
import { handler, httpError, Type, type EntityHooks, type ModuleContext, type Row } from '../../core/plugin-api.ts';
import { DEFAULT_FLOW } from './projects.ts';
import { assertProjectOpen, unprocessable } from './rules.ts';

const DONE = 'done';

/** The values a task takes from its status: its category, and since when it is done. */
export function followStatus(status: Row, before?: Row | null): Row {
  const done = status.category === DONE;
  const wasDone = before?.category === DONE;
  return { statusId: status.id, category: status.category, completedAt: done ? (wasDone ? before!.completedAt : new Date()) : null };
}

/**
 * The tenant's default flow, made the first time a personal task needs it
 * (under a lock: two first tasks at once make one flow).
 */
async function ensureDefaultFlow(ctx: ModuleContext): Promise<void> {
  const statuses = ctx.system().data('TaskStatus');
  if (await statuses.count({ projectId: null })) return;
  await ctx.serialize('pm:default-flow');
  if (await statuses.count({ projectId: null })) return;
  for (const status of DEFAULT_FLOW) await statuses.create(status);
}

/** The first status of a project's flow (position, then name); the tenant's default flow for null. */
export async function firstStatus(ctx: ModuleContext, projectId: string | null): Promise<Row | undefined> {
  if (projectId === null) await ensureDefaultFlow(ctx);
  const [first] = await ctx.system().data('TaskStatus').find({ projectId }, { orderBy: 'position,name', limit: 1 });
  return first;
}

/** Which statuses the caller may move `task` to (its project's moves and their project role); viewers none. */
export async function moveRule(ctx: ModuleContext, task: Row): Promise<(to: string) => boolean> {
  if (!task.projectId) return () => true;
  const sys = ctx.system();
  const [member] = ctx.userId ? await sys.data('ProjectMember').find({ projectId: task.projectId, userId: ctx.userId }, { limit: 1 }) : [];
  if (member?.role === 'viewer') return () => false;
  // a caller without membership who reaches a project's task holds the tenant-wide grant: every move
  if (!member || !(await sys.data('StatusMove').count({ projectId: task.projectId }))) return () => true;
  const moves = await sys.data('StatusMove').find({ projectId: task.projectId, fromStatusId: task.statusId }, { limit: 1000 });
  const allowed = new Set(moves.filter((m) => m.role === null || m.role === member.role).map((m) => m.toStatusId as string));
  return (to) => allowed.has(to);
}

export const statusHooks: EntityHooks = {
  problems: { create: ['STATE_LOCKED'], update: ['STATE_LOCKED', 'UNPROCESSABLE'], delete: ['STATE_LOCKED'] },
  async beforeWrite(ctx, { op, input, before }) {
    if (op === 'create' || !before) return void (await assertProjectOpen(ctx, input?.projectId));
    await assertProjectOpen(ctx, before.projectId);
    if (op === 'delete') {
      // a flow keeps a status: one delete at a time per flow counts what is left
      await ctx.serialize(`pm:flow:${before.projectId ?? 'default'}`);
      if ((await ctx.system().data('TaskStatus').count({ projectId: before.projectId })) <= 1) throw httpError('CONFLICT', 'a status flow keeps at least one status');
      return;
    }
    if (input?.projectId !== undefined && input.projectId !== before.projectId) throw unprocessable('/projectId', 'a status belongs to its project for good');
  },
  async afterWrite(ctx, { before, after }) {
    if (!before || !after || before.category === after.category) return;
    // the tasks in this status follow its new category
    const tasks = ctx.system().data('Task');
    for (;;) {
      const batch = await tasks.find({ statusId: after.id, category: { $ne: after.category } }, { limit: 500 });
      for (const task of batch) await tasks.update(task.id, {}, { set: followStatus(after, task) });
      if (batch.length < 500) break;
    }
  },
};

export const statusMoveHooks: EntityHooks = {
  problems: { create: ['STATE_LOCKED', 'UNPROCESSABLE'], update: ['STATE_LOCKED', 'UNPROCESSABLE'], delete: ['STATE_LOCKED'] },
  // checked once the kernel holds the project locked (the move's parent in the path), as for members
  async afterWrite(ctx, { before, after }) {
    await assertProjectOpen(ctx, (after ?? before)?.projectId);
    if (!after) return;
    const statuses = ctx.system().data('TaskStatus');
    for (const field of ['fromStatusId', 'toStatusId']) {
      if (!(await statuses.count({ id: after[field], projectId: after.projectId }))) throw unprocessable(`/${field}`, "must be a status of the move's project");
    }
  },
};

const StatusParams = Type.Object({ id: Type.String({ format: 'uuid' }) }, { additionalProperties: false });

/** DELETE /api/pm/status/:id?replacement=: the tasks still in the status move to the replacement first. */
export const deleteStatus = handler(
  {
    params: StatusParams,
    querystring: Type.Object(
      { replacement: Type.Optional(Type.String({ format: 'uuid', description: 'a status of the same flow the tasks still in this one move to (needed while tasks use it: 409 otherwise)' })) },
      { additionalProperties: false },
    ),
    response: { 204: Type.Null({ description: 'Status deleted (its tasks moved to the replacement)' }) },
  },
  async (ctx, request, reply) => {
    const { id } = request.params;
    const { replacement } = request.query;
    await ctx.transaction(async (tx) => {
      const status = await tx.data('TaskStatus').lock(id);
      const tasks = tx.system().data('Task');
      const using = await tasks.count({ statusId: id });
      if (replacement !== undefined) {
        const [target] = replacement === id ? [] : await tx.data('TaskStatus').find({ id: replacement }, { limit: 1 });
        if (!target || (target.projectId ?? null) !== (status.projectId ?? null)) throw unprocessable('/replacement', 'must be another status of the same flow');
        await assertProjectOpen(tx, status.projectId);
        for (;;) {
          const batch = await tasks.find({ statusId: id }, { limit: 500 });
          for (const task of batch) await tasks.update(task.id, {}, { set: followStatus(target, task) });
          if (batch.length < 500) break;
        }
      } else if (using) {
        throw httpError('CONFLICT', `${using} task(s) still use this status: name a replacement`, {
          errors: [{ path: '/replacement', message: `${using} task(s) use this status; pass ?replacement=<statusId>` }],
        });
      }
      await tx.data('TaskStatus').remove(id, { ifMatch: request.headers['if-match'] });
    });
    return reply.code(204).send();
  },
);

const TaskParams = Type.Object({ id: Type.String({ format: 'uuid' }) }, { additionalProperties: false });

/** GET /api/pm/tasks/:id/transitions: the statuses the caller may move the task to, in flow order. */
export const listTaskTransitions = handler(
  {
    params: TaskParams,
    response: {
      200: Type.Object(
        { items: Type.Array(Type.Ref('PmTaskStatus')), page: Type.Integer(), size: Type.Integer(), total: Type.Integer() },
        { additionalProperties: false, description: "The statuses of the task's flow the caller may move it to (its current one left out)" },
      ),
    },
  },
  async (ctx, request) => {
    const task = await ctx.data('Task').read(request.params.id);
    const may = await moveRule(ctx, task);
    const statuses = await ctx.data('TaskStatus').find({ projectId: task.projectId ?? null }, { orderBy: 'position,name', limit: 1000 });
    const items = statuses.filter((s) => s.id !== task.statusId && may(s.id)).map((s) => ctx.data('TaskStatus').toDto(s));
    return { items, page: 1, size: items.length, total: items.length };
  },
);
