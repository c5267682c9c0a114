// Tasks: reporter, default status, status of the project's flow, category and
// completedAt, moves, fixed project, parents; priorities; list filters and
// sorts (assigneeId=me, overdue, priority order, due dates); bad input; an
// assignee who may read the task, on every write path.
import t from 'tap';
import { build } from '../../helper.ts';
import { expectFieldProblem, expectProblem, expectStatus, pmApi, UNKNOWN_ID } from './pm-api.ts';

const ctx = await build(t);
const tenant = await ctx.tenant();
const pm = pmApi(ctx, tenant);

t.test('create: reporter, default status, category; completedAt follows done', async (t) => {
  const owner = await pm.user();
  const p = await pm.project(owner);
  const [todo, doing, done] = await pm.statuses(owner, p.id);
  t.same([todo.name, doing.name, done.name], ['To Do', 'In Progress', 'Completed']);
  const task = await pm.task(owner, { projectId: p.id });
  t.match(task, { reporterId: owner.id, statusId: todo.id, category: 'todo', completedAt: null, priority: 'normal', number: 1 });
  const moved = expectStatus(await owner.api('PATCH', `/api/pm/tasks/${task.id}`, { statusId: done.id }), 200, 'to done');
  t.equal(moved.category, 'done');
  t.ok(moved.completedAt, 'completedAt set on entering done');
  const again = expectStatus(await owner.api('PATCH', `/api/pm/tasks/${task.id}`, { title: 'renamed' }), 200, 'rename');
  t.equal(again.completedAt, moved.completedAt, 'kept while done');
  const back = expectStatus(await owner.api('PATCH', `/api/pm/tasks/${task.id}`, { statusId: doing.id }), 200, 'back');
  t.match(back, { category: 'in_progress', completedAt: null });
  const born = await pm.task(owner, { projectId: p.id, statusId: done.id });
  t.match(born, { category: 'done' });
  t.ok(born.completedAt);
  expectProblem(t, await owner.api('POST', '/api/pm/tasks', { title: 'x', reporterId: owner.id }), 400, 'VALIDATION_FAILED', 'reporter is read-only');
  expectProblem(t, await owner.api('POST', '/api/pm/tasks', { title: 'x', category: 'done' }), 400, 'VALIDATION_FAILED', 'category is read-only');
});

t.test('personal tasks follow the tenant default flow, made on first use', async (t) => {
  const u = await pm.user();
  const task = await pm.task(u);
  t.equal(task.projectId, null);
  t.equal(task.category, 'todo');
  const flow = expectStatus(await u.api('GET', '/api/pm/status?projectId[isNull]=true'), 200, 'default flow');
  t.same(
    flow.items.map((s: { name: string }) => s.name),
    ['To Do', 'In Progress', 'Completed'],
  );
  t.equal(flow.items[0].id, task.statusId);
  const second = await pm.task(u);
  t.equal(second.statusId, task.statusId, 'one default flow');
  const p = await pm.project(u);
  const [projectTodo] = await pm.statuses(u, p.id);
  expectProblem(t, await u.api('POST', '/api/pm/tasks', { title: 'x', statusId: projectTodo.id }), 422, 'UNPROCESSABLE', 'project status on a personal task');
});

t.test('status of another project: 422 /statusId; project fixed; parent rules', async (t) => {
  const owner = await pm.user();
  const a = await pm.project(owner);
  const b = await pm.project(owner);
  const [bTodo] = await pm.statuses(owner, b.id);
  const res = await owner.api('POST', '/api/pm/tasks', { title: 'x', projectId: a.id, statusId: bTodo.id });
  expectProblem(t, res, 422, 'UNPROCESSABLE');
  t.equal(res.json().errors[0].path, '/statusId');
  const task = await pm.task(owner, { projectId: a.id });
  const moved = await owner.api('PATCH', `/api/pm/tasks/${task.id}`, { projectId: b.id });
  expectProblem(t, moved, 422, 'UNPROCESSABLE');
  t.equal(moved.json().errors[0].path, '/projectId');
  expectProblem(t, await owner.api('PATCH', `/api/pm/tasks/${task.id}`, { statusId: bTodo.id }), 422, 'UNPROCESSABLE', 'moving to a foreign status');

  expectProblem(t, await owner.api('PATCH', `/api/pm/tasks/${task.id}`, { parentId: task.id }), 422, 'UNPROCESSABLE', 'own parent');
  const inB = await pm.task(owner, { projectId: b.id });
  expectProblem(t, await owner.api('PATCH', `/api/pm/tasks/${task.id}`, { parentId: inB.id }), 422, 'UNPROCESSABLE', 'parent in another project');
  const child = await pm.task(owner, { projectId: a.id, parentId: task.id });
  const grandchild = await pm.task(owner, { projectId: a.id, parentId: child.id });
  const cycle = await owner.api('PATCH', `/api/pm/tasks/${task.id}`, { parentId: grandchild.id });
  expectProblem(t, cycle, 422, 'UNPROCESSABLE', 'cycle');
  t.equal(cycle.json().errors[0].path, '/parentId');
  expectProblem(t, await owner.api('POST', '/api/pm/tasks', { title: 'x', parentId: UNKNOWN_ID }), 400, 'VALIDATION_FAILED', 'unknown parent');
});

t.test('an assignee may read the task: 422 /assigneeId on create, PATCH, PUT and bulk', async (t) => {
  const { project: p, owner, member, viewer, outsider } = await pm.team();
  const noPm = await pm.user(['core:user:view']);
  const refused = (res: Awaited<ReturnType<typeof owner.api>>, what: string) => expectFieldProblem(t, res, 422, 'UNPROCESSABLE', ['/assigneeId'], what);
  const count = async () => expectStatus(await owner.api('GET', `/api/pm/tasks?projectId=${p.id}`), 200, 'list').total as number;
  refused(await owner.api('POST', '/api/pm/tasks', { title: 'x', projectId: p.id, assigneeId: outsider.id }), 'create for a non-member');
  refused(await owner.api('POST', '/api/pm/tasks', { title: 'x', assigneeId: noPm.id }), 'a personal task for a user without task access');
  t.equal(await count(), 0, 'nothing created');
  t.equal(expectStatus(await outsider.api('GET', '/api/pm/reports/workload'), 200, 'workload').items.length, 0, 'nothing in their workload');
  const task = await pm.task(owner, { projectId: p.id, assigneeId: viewer.id });
  t.equal(task.assigneeId, viewer.id, 'a viewer reads the task');
  t.equal((await pm.task(owner, { title: 'mine', assigneeId: outsider.id })).assigneeId, outsider.id, 'a personal task becomes readable by its assignee');

  refused(await owner.api('PATCH', `/api/pm/tasks/${task.id}`, { assigneeId: outsider.id }), 'PATCH');
  const { id, number, category, reporterId, completedAt, createdAt, updatedAt, version, ...fields } = task;
  t.ok(id && number && category && reporterId && createdAt && updatedAt && version && completedAt === null, 'the read-only fields left out of PUT');
  refused(await owner.api('PUT', `/api/pm/tasks/${task.id}`, { ...fields, assigneeId: outsider.id }), 'PUT');
  const bulk = await owner.api('POST', '/api/pm/tasks/bulk', {
    create: [{ title: 'y', projectId: p.id, assigneeId: outsider.id }],
    update: [{ id: task.id, assigneeId: noPm.id }],
  });
  expectProblem(t, bulk, 422, 'BULK_FAILED', 'bulk');
  t.same(
    bulk.json().failures.map((f: { op: string; problem: { code: string; errors: { path: string }[] } }) => [f.op, f.problem.code, f.problem.errors[0].path]),
    [
      ['create', 'UNPROCESSABLE', '/assigneeId'],
      ['update', 'UNPROCESSABLE', '/assigneeId'],
    ],
  );
  const now = expectStatus(await owner.api('GET', `/api/pm/tasks/${task.id}`), 200, 'task');
  t.match(now, { assigneeId: viewer.id, version: task.version }, 'every refused write left the task as it was');
  t.equal(await count(), 1, 'the refused bulk created nothing');

  expectStatus(await member.api('PUT', `/api/pm/tasks/${task.id}`, { ...fields, assigneeId: member.id }), 200, 'PUT to a member');
  expectStatus(await owner.api('PATCH', `/api/pm/tasks/${task.id}`, { assigneeId: null }), 200, 'unassign');
  // only a new assignee is asked: one who left the project since does not block other changes
  expectStatus(await owner.api('PATCH', `/api/pm/tasks/${task.id}`, { assigneeId: member.id }), 200, 'assign');
  const [membership] = expectStatus(await owner.api('GET', `/api/pm/projects/${p.id}/members?userId=${member.id}`), 200, 'member').items;
  expectStatus(await owner.api('DELETE', `/api/pm/projects/${p.id}/members/${membership.id}`), 204, 'the member leaves');
  expectStatus(await owner.api('PATCH', `/api/pm/tasks/${task.id}`, { title: 'renamed' }), 200, 'another change');
});

t.test('priorities', async (t) => {
  const u = await pm.user();
  const res = expectStatus(await u.api('GET', '/api/pm/priorities'), 200, 'priorities');
  t.same(res, {
    items: [
      { id: 'low', name: 'Low', rank: 1 },
      { id: 'normal', name: 'Normal', rank: 2 },
      { id: 'high', name: 'High', rank: 3 },
      { id: 'critical', name: 'Critical', rank: 4 },
    ],
    page: 1,
    size: 4,
    total: 4,
  });
  expectProblem(t, await u.api('GET', '/api/pm/priorities?bogus=1'), 400, 'VALIDATION_FAILED');
  const none = await ctx.user(tenant, { codes: ['core:user:view'] });
  expectProblem(t, await ctx.as(none.token, { method: 'GET', url: '/api/pm/priorities' }), 403, 'FORBIDDEN');
});

t.test('lists: me, overdue, priority order, due range, category, text search', async (t) => {
  const owner = await pm.user();
  const other = await pm.user();
  const p = await pm.project(owner);
  await pm.member(owner, p.id, other.id, 'member');
  const [, , done] = await pm.statuses(owner, p.id);
  const base = { projectId: p.id };
  const mk = (title: string, body: Record<string, unknown>) => pm.task(owner, { ...base, title, ...body });
  await mk('alpha late', { priority: 'critical', dueDate: '2001-01-01', assigneeId: owner.id });
  await mk('beta late but done', { priority: 'low', dueDate: '2001-01-02', statusId: done.id });
  await mk('gamma future', { priority: 'high', dueDate: '2999-01-01', assigneeId: other.id });
  await mk('delta none', { priority: 'normal' });
  const titles = async (who: typeof owner, query: string) => expectStatus(await who.api('GET', `/api/pm/tasks?projectId=${p.id}&${query}`), 200, query).items.map((x: { title: string }) => x.title);
  t.same(await titles(owner, 'assigneeId=me'), ['alpha late']);
  t.same(await titles(other, 'assigneeId=me'), ['gamma future']);
  t.same(await titles(other, 'assigneeId[in]=me'), ['gamma future']);
  t.same(await titles(owner, 'overdue=true'), ['alpha late']);
  t.same(await titles(owner, 'overdue=false&sort=title'), ['beta late but done', 'delta none', 'gamma future']);
  t.same(await titles(owner, 'sort=priority'), ['beta late but done', 'delta none', 'gamma future', 'alpha late']);
  t.same(await titles(owner, 'sort=-priority'), ['alpha late', 'gamma future', 'delta none', 'beta late but done']);
  t.same(await titles(owner, 'sort=dueDate'), ['alpha late', 'beta late but done', 'gamma future', 'delta none']);
  t.same(await titles(owner, 'sort=number'), ['alpha late', 'beta late but done', 'gamma future', 'delta none']);
  t.same(await titles(owner, 'dueDateFrom=2001-01-02&dueDateTo=2999-12-31&sort=dueDate'), ['beta late but done', 'gamma future']);
  t.same(await titles(owner, 'category=done'), ['beta late but done']);
  t.same(await titles(owner, 'priority[in]=high,critical&sort=priority'), ['gamma future', 'alpha late']);
  t.same(await titles(owner, 'search=GAMMA'), ['gamma future']);
  // cursor paging over the priority order
  const first = expectStatus(await owner.api('GET', `/api/pm/tasks?projectId=${p.id}&sort=priority&size=2&cursor=`), 400, 'empty cursor');
  t.ok(first);
  const page1 = expectStatus(await owner.api('GET', `/api/pm/tasks?projectId=${p.id}&sort=priority&size=2`), 200, 'page 1');
  const page2 = expectStatus(await owner.api('GET', `/api/pm/tasks?projectId=${p.id}&sort=priority&size=2&cursor=${page1.nextCursor}`), 200, 'page 2');
  t.same(
    page2.items.map((x: { title: string }) => x.title),
    ['gamma future', 'alpha late'],
  );
  for (const bad of ['assigneeId=you', 'overdue=maybe', 'sort=bogus', 'priority=urgent', 'dueDateFrom=2020-13-01', `search=${'x'.repeat(201)}`]) {
    expectProblem(t, await owner.api('GET', `/api/pm/tasks?${bad}`), 400, 'VALIDATION_FAILED', bad);
  }
});

t.test('unhappy paths: wrong types, unknown fields, huge strings, stale If-Match', async (t) => {
  const owner = await pm.user();
  const p = await pm.project(owner);
  for (const body of [
    { title: 5 },
    { title: 'x', bogus: 1 },
    { title: 'x'.repeat(501) },
    { title: 'x', priority: 'urgent' },
    { title: 'x', projectId: 'nope' },
    { title: 'x', dueDate: '2020-02-30' },
    {},
  ]) {
    expectProblem(t, await owner.api('POST', '/api/pm/tasks', { projectId: p.id, ...body }), 400, 'VALIDATION_FAILED', JSON.stringify(body).slice(0, 60));
  }
  const task = await pm.task(owner, { projectId: p.id });
  expectProblem(t, await owner.api('PATCH', `/api/pm/tasks/${task.id}`, { title: 'y' }, { 'if-match': '"7"' }), 412, 'PRECONDITION_FAILED');
  expectProblem(t, await owner.api('GET', `/api/pm/tasks/${UNKNOWN_ID}/transitions`), 404, 'NOT_FOUND');
  expectProblem(t, await owner.api('GET', '/api/pm/tasks/not-a-uuid/transitions'), 400, 'VALIDATION_FAILED');
});

t.test('OpenAPI documents the codes the task rules answer on the generated writes', async (t) => {
  const doc = (await ctx.app.inject({ method: 'GET', url: '/api-docs/json' })).json();
  const text = (op: { responses: Record<string, unknown> }, status: string) => JSON.stringify(op.responses[status] ?? null);
  const patch = doc.paths['/api/pm/tasks/{id}'].patch;
  t.match(text(patch, '422'), /INVALID_TRANSITION/, 'a move the flow refuses');
  t.match(text(patch, '422'), /UNPROCESSABLE/, 'a status of another project');
  t.match(text(patch, '409'), /STATE_LOCKED/, 'an archived project');
  t.match(text(doc.paths['/api/pm/tasks'].post, '422'), /UNPROCESSABLE/);
  t.notMatch(text(doc.paths['/api/pm/notifications/{id}'].patch, '422'), /INVALID_TRANSITION/, 'only where a hook declares it');
});
