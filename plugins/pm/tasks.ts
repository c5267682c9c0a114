// Tasks: the reporter is whoever creates one; the status defaults to the
// first of the project's flow and must be one of that flow; the category
// mirrors the status and completedAt marks entering a done status; moves
// follow the project's allowed moves; a task stays in its project; its
// parent is a task of the same project, never itself or a descendant; a new
// assignee is an active user who may read the task (every write path: the
// generated routes, bulk, the AI module's assign and assistant, module code).
import { httpError, type EntityHooks, type ModuleContext, type Row } from '../../core/plugin-api.ts';
import { firstStatus, followStatus, moveRule } from './flows.ts';
import { assertProjectOpen, unprocessable } from './rules.ts';

/** Parent chains longer than this are refused rather than walked. */
const MAX_DEPTH = 100;

/** The status `statusId` names, if it is one of the flow of `projectId`; undefined when no such status exists (the kernel's reference check answers). */
async function statusOf(ctx: ModuleContext, statusId: string, projectId: string | null): Promise<Row | undefined> {
  const [status] = await ctx.system().data('TaskStatus').find({ id: statusId }, { limit: 1 });
  if (status && (status.projectId ?? null) !== projectId)
    throw unprocessable('/statusId', projectId ? "must be a status of the task's project" : 'must be a status of the default flow (the task has no project)');
  return status;
}

async function checkParent(ctx: ModuleContext, self: string | null, projectId: string | null, parentId: string): Promise<void> {
  if (parentId === self) throw unprocessable('/parentId', 'a task cannot be its own parent');
  const tasks = ctx.system().data('Task');
  const [parent] = await tasks.find({ id: parentId }, { limit: 1 });
  if (!parent) return;
  if ((parent.projectId ?? null) !== projectId) throw unprocessable('/parentId', 'must be a task of the same project');
  let up: Row | undefined = parent;
  for (let depth = 0; up?.parentId; depth++) {
    if (up.parentId === self) throw unprocessable('/parentId', 'would make a cycle: the parent is a sub-task of this task');
    if (depth >= MAX_DEPTH) throw unprocessable('/parentId', `sub-tasks nest at most ${MAX_DEPTH} deep`);
    [up] = await tasks.find({ id: up.parentId }, { limit: 1 });
  }
}

/**
 * 422 /assigneeId unless `assigneeId` names an active user who may read task `id` as it is stored now:
 * the task's row under the assignee's own grants, so the project's rules decide, not a role check here.
 */
async function checkAssignee(ctx: ModuleContext, id: string, assigneeId: string): Promise<void> {
  const assignee = await ctx.as(assigneeId);
  if (!assignee || !(await assignee.data('Task').count({ id }))) throw unprocessable('/assigneeId', 'is no active user who may read this task');
}

export const taskHooks: EntityHooks = {
  problems: { create: ['STATE_LOCKED', 'UNPROCESSABLE'], update: ['STATE_LOCKED', 'UNPROCESSABLE', 'INVALID_TRANSITION'], delete: ['STATE_LOCKED'] },
  async beforeWrite(ctx, { op, input = {}, before }) {
    if (op === 'delete') return void (await assertProjectOpen(ctx, before?.projectId));
    const out: Row = { ...input };
    if (op === 'create' || !before) {
      const projectId = (input.projectId as string | null | undefined) ?? null;
      await assertProjectOpen(ctx, projectId);
      out.reporterId = ctx.userId;
      const status = typeof input.statusId === 'string' ? await statusOf(ctx, input.statusId, projectId) : await firstStatus(ctx, projectId);
      if (status) Object.assign(out, followStatus(status));
      if (typeof input.parentId === 'string') await checkParent(ctx, null, projectId, input.parentId);
      return out;
    }
    await assertProjectOpen(ctx, before.projectId);
    const projectId = (before.projectId as string | null) ?? null;
    if (input.projectId !== undefined && input.projectId !== projectId) throw unprocessable('/projectId', 'a task stays in its project (create a new task in the other one)');
    if (input.statusId !== undefined && input.statusId !== before.statusId) {
      const status = typeof input.statusId === 'string' ? await statusOf(ctx, input.statusId, projectId) : await firstStatus(ctx, projectId);
      if (status && status.id !== before.statusId) {
        if (!(await moveRule(ctx, before))(status.id)) throw httpError('INVALID_TRANSITION', `the project's flow does not let you move this task from its status to ${status.name}`);
      }
      if (status) Object.assign(out, followStatus(status, before));
    }
    if (typeof input.parentId === 'string' && input.parentId !== before.parentId) await checkParent(ctx, before.id, projectId, input.parentId);
    return out;
  },
  // after the write: the task as stored decides (a personal task becomes readable by being assigned)
  async afterWrite(ctx, { id, before, after }) {
    const assigneeId = (after?.assigneeId as string | null | undefined) ?? null;
    if (assigneeId && assigneeId !== (before?.assigneeId ?? null)) await checkAssignee(ctx, id, assigneeId);
  },
};
