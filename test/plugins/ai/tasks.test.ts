// AI task routes: the project module's tasks under /api/ai, with PM's grants
// and hooks; my-tasks; assign/reassign/unassign with history, including
// changes made through PM's routes, never doubled; an assignee who may read
// the task on every AI path (PM's rule); bad input.
import t from 'tap';
import { build } from '../../helper.ts';
import { expectFieldProblem, expectProblem, expectStatus, pmApi, UNKNOWN_ID, type PmUser } from '../pm/pm-api.ts';

const ctx = await build(t);
const tenant = await ctx.tenant();
const pm = pmApi(ctx, tenant);
const AI_PM = ['erp:pm:view', 'erp:ai:view'];
const aiUser = () => pm.user(AI_PM);
const history = async (as: PmUser, taskId: string) => expectStatus(await as.api('GET', `/api/ai/tasks/${taskId}/assignments`), 200, 'history').items as Record<string, any>[];

t.test('the same rows and rules as /api/pm/tasks', async (t) => {
  const owner = await aiUser();
  const outsider = await aiUser();
  const p = await pm.project(owner);
  const created = expectStatus(await owner.api('POST', '/api/ai/tasks', { title: 'From AI', projectId: p.id, priority: 'high' }), 201, 'create');
  t.match(created, { reporterId: owner.id, category: 'todo', number: 1, priority: 'high' }, 'PM hooks applied');
  t.equal(created.id, expectStatus(await owner.api('GET', `/api/pm/tasks/${created.id}`), 200, 'read via PM').id);
  const res = await owner.api('GET', `/api/ai/tasks/${created.id}`);
  t.ok(res.headers.etag, 'ETag');
  expectProblem(t, await outsider.api('GET', `/api/ai/tasks/${created.id}`), 404, 'NOT_FOUND', 'non-member');
  expectProblem(t, await outsider.api('PATCH', `/api/ai/tasks/${created.id}`, { title: 'x' }), 404, 'NOT_FOUND', 'non-member write');
  t.equal(expectStatus(await outsider.api('GET', `/api/ai/tasks?projectId=${p.id}`), 200, 'list').total, 0, 'non-member lists nothing');
  const [, doing] = await pm.statuses(owner, p.id);
  const moved = expectStatus(await owner.api('PATCH', `/api/ai/tasks/${created.id}`, { statusId: doing.id }), 200, 'move');
  t.equal(moved.category, 'in_progress');
  expectProblem(t, await owner.api('PATCH', `/api/ai/tasks/${created.id}`, { title: 'y' }, { 'if-match': '"1"' }), 412, 'PRECONDITION_FAILED', 'stale If-Match');
  expectProblem(t, await owner.api('PUT', `/api/ai/tasks/${created.id}`, { title: 'y' }), 400, 'VALIDATION_FAILED', 'PUT needs every field');
  expectProblem(t, await owner.api('POST', '/api/ai/tasks', { title: 'x', bogus: 1 }), 400, 'VALIDATION_FAILED', 'unknown field');
  expectProblem(t, await owner.api('POST', '/api/ai/tasks', { title: 'x'.repeat(501) }), 400, 'VALIDATION_FAILED', 'too long');
  expectProblem(t, await owner.api('POST', '/api/ai/tasks', { title: 5 }), 400, 'VALIDATION_FAILED', 'wrong type');
  expectProblem(t, await owner.api('GET', '/api/ai/tasks?bogus=1'), 400, 'VALIDATION_FAILED', 'unknown query parameter');
  const personal = expectStatus(await owner.api('POST', '/api/ai/tasks', { title: 'Mine' }), 201, 'personal');
  t.match(personal, { projectId: null, category: 'todo' }, 'personal task in the default flow');
  expectProblem(t, await outsider.api('DELETE', `/api/ai/tasks/${personal.id}`), 404, 'NOT_FOUND', 'not their personal task');
  expectStatus(await owner.api('DELETE', `/api/ai/tasks/${personal.id}`), 204, 'delete');
  expectProblem(t, await owner.api('GET', `/api/pm/tasks/${personal.id}`), 404, 'NOT_FOUND', 'gone from PM too');
  const roleless = await pm.user(['erp:ai:view']);
  expectProblem(t, await roleless.api('GET', '/api/ai/tasks'), 403, 'FORBIDDEN', 'no task permission');
  expectProblem(t, await ctx.app.inject({ method: 'GET', url: '/api/ai/tasks' }), 401, 'UNAUTHENTICATED');
});

t.test('my-tasks: assigned to the caller and their personal tasks, with list parameters', async (t) => {
  const me = await aiUser();
  const other = await aiUser();
  const p = await pm.project(other);
  await pm.member(other, p.id, me.id, 'member');
  const assigned = await pm.task(other, { projectId: p.id, assigneeId: me.id, priority: 'critical' });
  await pm.task(other, { projectId: p.id }); // readable, not mine
  await pm.task(other, { projectId: p.id, assigneeId: other.id });
  const personal = await pm.task(me, { title: 'Personal one' });
  await pm.task(other, { title: 'Their personal one' });
  const mine = expectStatus(await me.api('GET', '/api/ai/tasks/my-tasks'), 200, 'my tasks');
  t.same(mine.items.map((i: { id: string }) => i.id).sort(), [assigned.id, personal.id].sort());
  t.equal(mine.total, 2);
  const critical = expectStatus(await me.api('GET', '/api/ai/tasks/my-tasks?priority=critical&size=1'), 200, 'filtered');
  t.same(
    critical.items.map((i: { id: string }) => i.id),
    [assigned.id],
  );
  const theirs = expectStatus(await other.api('GET', '/api/ai/tasks/my-tasks'), 200, 'theirs');
  t.equal(theirs.total, 2, 'the other user sees their own');
  expectProblem(t, await me.api('GET', '/api/ai/tasks/my-tasks?size=5000'), 400, 'VALIDATION_FAILED', 'size too big');
  expectProblem(t, await me.api('GET', '/api/ai/tasks/my-tasks?nope=1'), 400, 'VALIDATION_FAILED', 'unknown parameter');
  expectProblem(t, await me.api('POST', '/api/ai/tasks/my-tasks', {}), 405, 'METHOD_NOT_ALLOWED');
});

t.test('assign, reassign, unassign: history with notes; assignee must read the task', async (t) => {
  const owner = await aiUser();
  const member = await aiUser();
  const viewer = await aiUser();
  const outsider = await aiUser();
  const p = await pm.project(owner);
  await pm.member(owner, p.id, member.id, 'member');
  await pm.member(owner, p.id, viewer.id, 'viewer');
  const task = await pm.task(owner, { projectId: p.id });
  const first = expectStatus(await owner.api('POST', '/api/ai/tasks/assign', { taskId: task.id, assigneeId: member.id, note: 'you know it best' }), 200, 'assign');
  t.equal(first.task.assigneeId, member.id);
  t.match(first.assignment, { taskId: task.id, fromId: null, toId: member.id, byId: owner.id, note: 'you know it best' });
  const again = expectStatus(await owner.api('POST', '/api/ai/tasks/assign', { taskId: task.id, assigneeId: member.id }), 200, 'same again');
  t.equal(again.assignment, null, 'no change, no entry');
  expectProblem(t, await owner.api('POST', '/api/ai/tasks/assign', { taskId: task.id, assigneeId: outsider.id }), 422, 'UNPROCESSABLE', 'outsider cannot read it');
  expectStatus(await owner.api('POST', '/api/ai/tasks/assign', { taskId: task.id, assigneeId: viewer.id }), 200, 'reassign to a viewer (reads)');
  expectStatus(await owner.api('POST', '/api/ai/tasks/assign', { taskId: task.id, assigneeId: null, note: 'nobody for now' }), 200, 'unassign');
  const h = await history(owner, task.id);
  t.same(
    h.map((e) => [e.fromId, e.toId, e.note]),
    [
      [null, member.id, 'you know it best'],
      [member.id, viewer.id, null],
      [viewer.id, null, 'nobody for now'],
    ],
  );
  t.equal(expectStatus(await owner.api('GET', `/api/pm/tasks/${task.id}`), 200, 'task').assigneeId, null, 'the refused assignment rolled back');
  t.equal((await history(member, task.id)).length, 3, 'a member reads the history');
  expectProblem(t, await outsider.api('GET', `/api/ai/tasks/${task.id}/assignments`), 404, 'NOT_FOUND', 'an outsider does not');
  expectProblem(t, await viewer.api('POST', '/api/ai/tasks/assign', { taskId: task.id, assigneeId: viewer.id }), 403, 'FORBIDDEN', 'a viewer cannot assign');
  expectProblem(t, await outsider.api('POST', '/api/ai/tasks/assign', { taskId: task.id, assigneeId: outsider.id }), 404, 'NOT_FOUND', 'an outsider cannot');
});

t.test('personal tasks: assigning makes them readable by the assignee', async (t) => {
  const me = await aiUser();
  const colleague = await aiUser();
  const task = await pm.task(me, { title: 'Personal' });
  expectStatus(await me.api('POST', '/api/ai/tasks/assign', { taskId: task.id, assigneeId: colleague.id }), 200, 'assign personal');
  t.equal(expectStatus(await colleague.api('GET', `/api/ai/tasks/${task.id}`), 200, 'assignee reads').id, task.id);
  const noPm = await pm.user(['erp:ai:view']);
  expectProblem(t, await me.api('POST', '/api/ai/tasks/assign', { taskId: task.id, assigneeId: noPm.id }), 422, 'UNPROCESSABLE', 'a user without task access');
});

t.test("an assignee who cannot read the task: PM's 422 /assigneeId on every AI path", async (t) => {
  const owner = await aiUser();
  const outsider = await aiUser();
  const p = await pm.project(owner);
  const task = await pm.task(owner, { projectId: p.id });
  const refused = (res: Awaited<ReturnType<typeof owner.api>>, what: string) => expectFieldProblem(t, res, 422, 'UNPROCESSABLE', ['/assigneeId'], what);
  refused(await owner.api('POST', '/api/ai/tasks', { title: 'x', projectId: p.id, assigneeId: outsider.id }), 'create');
  refused(await owner.api('PATCH', `/api/ai/tasks/${task.id}`, { assigneeId: outsider.id }), 'PATCH');
  refused(await owner.api('POST', '/api/ai/assistant/confirm', { title: 'x', projectId: p.id, assigneeId: outsider.id }), 'assistant confirm');
  refused(await owner.api('POST', '/api/ai/tasks/assign', { taskId: task.id, assigneeId: outsider.id }), 'assign');
  t.equal(expectStatus(await owner.api('GET', `/api/ai/tasks?projectId=${p.id}`), 200, 'list').total, 1, 'nothing created');
  t.match(expectStatus(await owner.api('GET', `/api/ai/tasks/${task.id}`), 200, 'task'), { assigneeId: null, version: task.version }, 'nothing changed');
  t.same(await history(owner, task.id), [], 'no history entry');
});

t.test("changes through PM's routes and module code are recorded once", async (t) => {
  const owner = await aiUser();
  const a = await aiUser();
  const b = await aiUser();
  const p = await pm.project(owner);
  await pm.member(owner, p.id, a.id, 'member');
  await pm.member(owner, p.id, b.id, 'member');
  const task = await pm.task(owner, { projectId: p.id, assigneeId: a.id });
  expectStatus(await owner.api('PATCH', `/api/pm/tasks/${task.id}`, { title: 'renamed' }), 200, 'no assignee change');
  expectStatus(await a.api('PATCH', `/api/pm/tasks/${task.id}`, { assigneeId: b.id }), 200, 'reassign via PM');
  expectStatus(await owner.api('PATCH', `/api/pm/tasks/${task.id}`, { assigneeId: b.id }), 200, 'same assignee again');
  expectStatus(await owner.api('PATCH', `/api/pm/tasks/${task.id}`, { assigneeId: 'not-a-uuid' }), 400, 'refused write');
  const bulk = await owner.api('POST', '/api/pm/tasks/bulk', { update: [{ id: task.id, assigneeId: null }] });
  t.ok(bulk.statusCode < 300, `bulk update ${bulk.statusCode} ${bulk.body.slice(0, 200)}`);
  const h = await history(owner, task.id);
  t.same(
    h.map((e) => [e.fromId, e.toId, e.byId]),
    [
      [null, a.id, owner.id],
      [a.id, b.id, a.id],
      [b.id, null, owner.id],
    ],
  );
  // the outbox's events, delivered (at least once) to every subscriber, add nothing: the history is written by the write itself
  await ctx.kernel.eventRuntime.dispatchNow();
  await ctx.kernel.eventRuntime.dispatchNow();
  t.equal((await history(owner, task.id)).length, 3, 'once, after delivery');
  expectStatus(await owner.api('DELETE', `/api/pm/tasks/${task.id}`), 204, 'delete task');
  expectProblem(t, await owner.api('GET', `/api/ai/tasks/${task.id}/assignments`), 404, 'NOT_FOUND', 'history gone with the task');
});

t.test('assign: bad input, wrong tenant', async (t) => {
  const owner = await aiUser();
  const task = await pm.task(owner);
  const bad: [unknown, string][] = [
    [{}, 'missing fields'],
    [{ taskId: task.id }, 'missing assigneeId'],
    [{ taskId: task.id, assigneeId: owner.id, bogus: 1 }, 'unknown field'],
    [{ taskId: 'x', assigneeId: owner.id }, 'malformed id'],
    [{ taskId: task.id, assigneeId: 5 }, 'wrong type'],
    [{ taskId: task.id, assigneeId: owner.id, note: 'x'.repeat(1001) }, 'note too long'],
  ];
  for (const [body, what] of bad) expectProblem(t, await owner.api('POST', '/api/ai/tasks/assign', body as object), 400, 'VALIDATION_FAILED', what);
  expectProblem(t, await owner.api('POST', '/api/ai/tasks/assign', { taskId: UNKNOWN_ID, assigneeId: owner.id }), 404, 'NOT_FOUND', 'unknown task');
  expectProblem(t, await owner.api('POST', '/api/ai/tasks/assign', { taskId: task.id, assigneeId: UNKNOWN_ID }), 400, 'VALIDATION_FAILED', 'unknown assignee (the reference check)');
  expectProblem(t, await owner.api('POST', '/api/ai/tasks/assign', { taskId: task.id, assigneeId: owner.id }, { 'if-match': '"999"' }), 412, 'PRECONDITION_FAILED', 'stale If-Match');
  const other = await ctx.tenant();
  const stranger = await pmApi(ctx, other).user(AI_PM);
  expectProblem(t, await stranger.api('POST', '/api/ai/tasks/assign', { taskId: task.id, assigneeId: stranger.id }), 404, 'NOT_FOUND', 'wrong tenant');
  expectProblem(t, await stranger.api('GET', `/api/ai/tasks/${task.id}`), 404, 'NOT_FOUND', 'wrong tenant read');
  expectProblem(t, await stranger.api('GET', `/api/ai/tasks/${task.id}/assignments`), 404, 'NOT_FOUND', 'wrong tenant history');
});
