// Status flows: listing a project's statuses in order, per-role rights on
// statuses and moves, restricted moves and the transitions endpoint, category
// changes reaching tasks, status delete with and without a replacement.
import t from 'tap';
import { build } from '../../helper.ts';
import { expectProblem, expectStatus, pmApi, PM_ADMIN } from './pm-api.ts';

const ctx = await build(t);
const tenant = await ctx.tenant();
const pm = pmApi(ctx, tenant);
const names = (items: Record<string, any>[]) => items.map((s) => s.name as string);

t.test('statuses: ordered list, rights per role, fixed project', async (t) => {
  const team = await pm.team();
  const p = team.project;
  t.same(names(await pm.statuses(team.viewer, p.id)), ['To Do', 'In Progress', 'Completed'], 'viewer reads the flow');
  expectStatus(await team.manager.api('POST', '/api/pm/status', { projectId: p.id, name: 'Backlog', category: 'backlog', position: 0 }), 201, 'manager adds');
  t.same(names(await pm.statuses(team.owner, p.id)), ['Backlog', 'To Do', 'In Progress', 'Completed'], 'position, then name');
  for (const who of ['member', 'viewer'] as const) {
    expectProblem(t, await team[who].api('POST', '/api/pm/status', { projectId: p.id, name: `by ${who}`, category: 'todo' }), 403, 'FORBIDDEN', `${who} cannot add`);
  }
  const outsider = expectStatus(await team.outsider.api('GET', `/api/pm/status?projectId=${p.id}`), 200, 'outsider list');
  t.same([outsider.items.length, outsider.total], [0, 0], 'outsider sees none, counts none');
  const [first] = await pm.statuses(team.owner, p.id);
  expectProblem(t, await team.outsider.api('GET', `/api/pm/status/${first.id}`), 404, 'NOT_FOUND');
  const other = await pm.project(team.owner);
  const moved = await team.owner.api('PATCH', `/api/pm/status/${first.id}`, { projectId: other.id });
  expectProblem(t, moved, 422, 'UNPROCESSABLE');
  t.equal(moved.json().errors[0].path, '/projectId');
});

t.test('category change reaches the tasks in the status', async (t) => {
  const owner = await pm.user();
  const p = await pm.project(owner);
  const [, doing] = await pm.statuses(owner, p.id);
  const task = await pm.task(owner, { projectId: p.id, statusId: doing.id });
  expectStatus(await owner.api('PATCH', `/api/pm/status/${doing.id}`, { category: 'done' }), 200, 'to done');
  const after = expectStatus(await owner.api('GET', `/api/pm/tasks/${task.id}`), 200, 'task');
  t.equal(after.category, 'done');
  t.ok(after.completedAt);
  expectStatus(await owner.api('PATCH', `/api/pm/status/${doing.id}`, { category: 'in_progress' }), 200, 'back');
  t.match(expectStatus(await owner.api('GET', `/api/pm/tasks/${task.id}`), 200, 'task'), { category: 'in_progress', completedAt: null });
});

t.test('restricted moves per role, and the transitions endpoint', async (t) => {
  const team = await pm.team();
  const p = team.project;
  const [todo, doing, done] = await pm.statuses(team.owner, p.id);
  const task = await pm.task(team.member, { projectId: p.id });
  const targets = async (who: keyof typeof team, id = task.id) =>
    names(expectStatus(await (team[who] as { api: typeof team.owner.api }).api('GET', `/api/pm/tasks/${id}/transitions`), 200, `transitions ${who}`).items);
  t.same(await targets('member'), ['In Progress', 'Completed'], 'no moves declared: every other status');
  t.same(await targets('viewer'), [], 'viewers move nothing');
  const moves = `/api/pm/projects/${p.id}/status-moves`;
  expectProblem(t, await team.member.api('POST', moves, { fromStatusId: todo.id, toStatusId: doing.id }), 403, 'FORBIDDEN', 'member cannot restrict');
  expectStatus(await team.manager.api('POST', moves, { fromStatusId: todo.id, toStatusId: doing.id }), 201, 'todo → doing, anyone');
  expectStatus(await team.manager.api('POST', moves, { fromStatusId: todo.id, toStatusId: done.id, role: 'manager' }), 201, 'todo → done, managers');
  const foreign = await pm.project(team.owner);
  await pm.member(team.owner, foreign.id, team.manager.id, 'manager');
  const [foreignTodo] = await pm.statuses(team.owner, foreign.id);
  expectProblem(t, await team.member.api('POST', moves, { fromStatusId: todo.id, toStatusId: foreignTodo.id }), 400, 'VALIDATION_FAILED', 'a status the member cannot read');
  const bad = await team.manager.api('POST', moves, { fromStatusId: todo.id, toStatusId: foreignTodo.id });
  expectProblem(t, bad, 422, 'UNPROCESSABLE', 'a status of another project');
  t.equal(bad.json().errors[0].path, '/toStatusId');
  t.same(await targets('member'), ['In Progress']);
  t.same(await targets('manager'), ['In Progress', 'Completed']);
  t.same(await targets('owner'), ['In Progress'], 'a move for managers is not an owner move');
  const admin = await pm.user(PM_ADMIN);
  t.same(names(expectStatus(await admin.api('GET', `/api/pm/tasks/${task.id}/transitions`), 200, 'admin').items), ['In Progress', 'Completed'], 'tenant admin: every move');
  expectProblem(t, await team.outsider.api('GET', `/api/pm/tasks/${task.id}/transitions`), 404, 'NOT_FOUND');

  expectProblem(t, await team.member.api('PATCH', `/api/pm/tasks/${task.id}`, { statusId: done.id }), 422, 'INVALID_TRANSITION', 'member may not skip');
  expectStatus(await team.manager.api('PATCH', `/api/pm/tasks/${task.id}`, { statusId: done.id }), 200, 'manager may');
  expectProblem(t, await team.member.api('PATCH', `/api/pm/tasks/${task.id}`, { statusId: todo.id }), 422, 'INVALID_TRANSITION', 'no move back declared');
  expectStatus(await admin.api('PATCH', `/api/pm/tasks/${task.id}`, { statusId: todo.id }), 200, 'admin moves freely');
});

t.test('status delete: in use, replacement, last status', async (t) => {
  const team = await pm.team();
  const p = team.project;
  const [todo, doing, done] = await pm.statuses(team.owner, p.id);
  const a = await pm.task(team.owner, { projectId: p.id, statusId: doing.id });
  const b = await pm.task(team.owner, { projectId: p.id, statusId: doing.id });
  const inUse = await team.manager.api('DELETE', `/api/pm/status/${doing.id}`);
  expectProblem(t, inUse, 409, 'CONFLICT', 'tasks still use it');
  t.match(inUse.json().detail, /^2 task/);
  t.equal(inUse.json().errors[0].path, '/replacement');
  const other = await pm.project(team.owner);
  const [foreign] = await pm.statuses(team.owner, other.id);
  expectProblem(t, await team.manager.api('DELETE', `/api/pm/status/${doing.id}?replacement=${foreign.id}`), 422, 'UNPROCESSABLE', 'replacement of another project');
  expectProblem(t, await team.manager.api('DELETE', `/api/pm/status/${doing.id}?replacement=${doing.id}`), 422, 'UNPROCESSABLE', 'itself');
  expectProblem(t, await team.member.api('DELETE', `/api/pm/status/${doing.id}?replacement=${done.id}`), 403, 'FORBIDDEN', 'member');
  t.equal(expectStatus(await team.owner.api('GET', `/api/pm/tasks/${a.id}`), 200, 'a').statusId, doing.id, 'a refused delete moved nothing');
  expectProblem(t, await team.manager.api('DELETE', `/api/pm/status/${doing.id}?replacement=${done.id}`, undefined, { 'if-match': '"9"' }), 412, 'PRECONDITION_FAILED');
  t.equal((await team.manager.api('DELETE', `/api/pm/status/${doing.id}?replacement=${done.id}`)).statusCode, 204);
  for (const id of [a.id, b.id]) {
    const task = expectStatus(await team.owner.api('GET', `/api/pm/tasks/${id}`), 200, 'moved');
    t.match(task, { statusId: done.id, category: 'done' });
    t.ok(task.completedAt, 'completedAt follows');
  }
  t.same(names(await pm.statuses(team.owner, p.id)), ['To Do', 'Completed']);
  expectProblem(t, await team.manager.api('DELETE', `/api/pm/status/${todo.id}?replacement=bogus`), 400, 'VALIDATION_FAILED');
  t.equal((await team.manager.api('DELETE', `/api/pm/status/${todo.id}`)).statusCode, 204, 'unused: deleted');
  expectProblem(t, await team.manager.api('DELETE', `/api/pm/status/${done.id}?replacement=${todo.id}`), 422, 'UNPROCESSABLE', 'a deleted replacement');
  const last = await team.manager.api('DELETE', `/api/pm/status/${done.id}?replacement=${done.id}`);
  expectProblem(t, last, 422, 'UNPROCESSABLE');
  const empty = await pm.project(team.owner);
  const flow = await pm.statuses(team.owner, empty.id);
  for (const s of flow.slice(0, 2)) t.equal((await team.owner.api('DELETE', `/api/pm/status/${s.id}`)).statusCode, 204);
  expectProblem(t, await team.owner.api('DELETE', `/api/pm/status/${flow[2].id}`), 409, 'CONFLICT', 'a project keeps one status');
});
