// Projects: the creator owns it, the default flow, per-role rights, the key
// fixed once tasks exist, the project's status flow, archive/unarchive
// (read-only, hidden from default lists), delete, isolation.
import t from 'tap';
import { build, onPglite } from '../../helper.ts';
import { expectProblem, expectStatus, pmApi, PM_ADMIN, UNKNOWN_ID } from './pm-api.ts';

const ctx = await build(t);
const tenant = await ctx.tenant();
const pm = pmApi(ctx, tenant);

t.test('create: owner membership and the default flow', async (t) => {
  const u = await pm.user();
  const p = await pm.project(u, { name: 'Web' });
  t.match(p, { name: 'Web', status: 'planning', archived: false, archivedAt: null });
  const members = expectStatus(await u.api('GET', `/api/pm/projects/${p.id}/members`), 200, 'members');
  t.same(
    members.items.map((m: { userId: string; role: string }) => [m.userId, m.role]),
    [[u.id, 'owner']],
  );
  const flow = await pm.statuses(u, p.id);
  t.same(
    flow.map((s) => [s.name, s.category, s.position]),
    [
      ['To Do', 'todo', 0],
      ['In Progress', 'in_progress', 1],
      ['Completed', 'done', 2],
    ],
  );
});

t.test('rights per project role; non-members see nothing, not even in totals', async (t) => {
  const team = await pm.team();
  const p = team.project;
  for (const who of ['owner', 'manager', 'member', 'viewer'] as const) {
    t.equal(expectStatus(await team[who].api('GET', `/api/pm/projects/${p.id}`), 200, `${who} reads`).id, p.id);
  }
  expectProblem(t, await team.outsider.api('GET', `/api/pm/projects/${p.id}`), 404, 'NOT_FOUND', 'outsider');
  const list = expectStatus(await team.outsider.api('GET', '/api/pm/projects'), 200, 'outsider list');
  t.same([list.items.length, list.total], [0, 0]);
  const tasksOfOthers = expectStatus(await team.outsider.api('GET', `/api/pm/tasks?projectId=${p.id}`), 200, 'outsider tasks');
  t.equal(tasksOfOthers.total, 0);
  for (const who of ['member', 'viewer'] as const) {
    expectProblem(t, await team[who].api('PATCH', `/api/pm/projects/${p.id}`, { name: 'x' }), 403, 'FORBIDDEN', `${who} edits`);
    expectProblem(t, await team[who].api('POST', `/api/pm/projects/${p.id}/archive`), 403, 'FORBIDDEN', `${who} archives`);
  }
  expectProblem(t, await team.outsider.api('PATCH', `/api/pm/projects/${p.id}`, { name: 'x' }), 404, 'NOT_FOUND', 'outsider edits');
  expectStatus(await team.manager.api('PATCH', `/api/pm/projects/${p.id}`, { name: 'By manager' }), 200, 'manager edits');
  expectProblem(t, await team.manager.api('DELETE', `/api/pm/projects/${p.id}`), 403, 'FORBIDDEN', 'manager deletes');
  // tasks: members work, viewers read
  const task = await pm.task(team.member, { projectId: p.id });
  expectProblem(t, await team.viewer.api('POST', '/api/pm/tasks', { projectId: p.id, title: 'v' }), 403, 'FORBIDDEN', 'viewer creates a task');
  expectProblem(t, await team.viewer.api('PATCH', `/api/pm/tasks/${task.id}`, { title: 'v' }), 403, 'FORBIDDEN', 'viewer edits a task');
  t.equal(expectStatus(await team.viewer.api('GET', `/api/pm/tasks/${task.id}`), 200, 'viewer reads a task').id, task.id);
  expectProblem(t, await team.outsider.api('GET', `/api/pm/tasks/${task.id}`), 404, 'NOT_FOUND');
  expectProblem(t, await team.outsider.api('POST', '/api/pm/tasks', { projectId: p.id, title: 'o' }), 400, 'VALIDATION_FAILED', 'outsider names a project they cannot see');
  // a tenant-wide admin sees every project
  const admin = await pm.user(PM_ADMIN);
  t.ok(expectStatus(await admin.api('GET', '/api/pm/projects?size=1000'), 200, 'admin').items.some((x: { id: string }) => x.id === p.id));
  expectStatus(await admin.api('PATCH', `/api/pm/projects/${p.id}`, { name: 'By admin' }), 200, 'admin edits');
  // another tenant: 404
  const other = await ctx.tenant();
  expectProblem(t, await ctx.as(other.adminToken, { method: 'GET', url: `/api/pm/projects/${p.id}` }), 404, 'NOT_FOUND', 'other tenant');
  expectProblem(t, await ctx.as(other.adminToken, { method: 'GET', url: `/api/pm/tasks/${task.id}` }), 404, 'NOT_FOUND', 'other tenant task');
});

t.test('key fixed once tasks exist; status moves per the manifest', async (t) => {
  const u = await pm.user();
  const p = await pm.project(u, { key: 'KEYA' });
  expectStatus(await u.api('PATCH', `/api/pm/projects/${p.id}`, { key: 'KEYB' }), 200, 'no tasks yet');
  await pm.task(u, { projectId: p.id });
  const res = await u.api('PATCH', `/api/pm/projects/${p.id}`, { key: 'KEYC' });
  expectProblem(t, res, 422, 'UNPROCESSABLE');
  t.equal(res.json().errors[0].path, '/key');
  expectStatus(await u.api('PATCH', `/api/pm/projects/${p.id}`, { key: 'KEYB', name: 'same key' }), 200, 'the same key');
  expectStatus(await u.api('PATCH', `/api/pm/projects/${p.id}`, { status: 'active' }), 200, 'planning → active');
  expectProblem(t, await u.api('PATCH', `/api/pm/projects/${p.id}`, { status: 'planning' }), 422, 'INVALID_TRANSITION');
  expectProblem(t, await u.api('POST', '/api/pm/projects', { key: 'DONE1', name: 'x', status: 'completed' }), 422, 'INVALID_TRANSITION');
  for (const body of [
    { key: 'lower', name: 'x' },
    { key: 'OK1', name: 'x'.repeat(201) },
    { key: 'OK2', name: 'x', bogus: 1 },
    { key: 'OK3', name: 5 },
    { key: 'OK4', name: 'x', archived: true },
  ]) {
    expectProblem(t, await u.api('POST', '/api/pm/projects', body), 400, 'VALIDATION_FAILED', JSON.stringify(body).slice(0, 50));
  }
  expectProblem(t, await u.api('POST', '/api/pm/projects', { key: 'KEYB', name: 'dup' }), 409, 'CONFLICT', 'key taken');
  expectProblem(t, await u.api('PATCH', `/api/pm/projects/${p.id}`, { name: 'stale' }, { 'if-match': '"1"' }), 412, 'PRECONDITION_FAILED');
});

t.test('archive: read-only, hidden from default lists, unarchive', async (t) => {
  const team = await pm.team();
  const p = team.project;
  const [todo, doing] = await pm.statuses(team.owner, p.id);
  const task = await pm.task(team.member, { projectId: p.id });
  const comment = expectStatus(await team.member.api('POST', '/api/pm/comments', { taskId: task.id, body: 'before' }), 201, 'comment');
  const archived = expectStatus(await team.manager.api('POST', `/api/pm/projects/${p.id}/archive`), 200, 'archive');
  t.match(archived, { id: p.id, archived: true });
  t.ok(archived.archivedAt);
  const locked = [
    ['PATCH', `/api/pm/projects/${p.id}`, { name: 'x' }],
    ['DELETE', `/api/pm/projects/${p.id}`, undefined],
    ['POST', '/api/pm/tasks', { projectId: p.id, title: 'new' }],
    ['PATCH', `/api/pm/tasks/${task.id}`, { title: 'x' }],
    ['DELETE', `/api/pm/tasks/${task.id}`, undefined],
    ['POST', '/api/pm/status', { projectId: p.id, name: 'New', category: 'todo' }],
    ['PATCH', `/api/pm/status/${todo.id}`, { name: 'x' }],
    ['DELETE', `/api/pm/status/${doing.id}`, undefined],
    ['POST', `/api/pm/projects/${p.id}/status-moves`, { fromStatusId: todo.id, toStatusId: doing.id }],
    ['POST', `/api/pm/projects/${p.id}/members`, { userId: team.outsider.id, role: 'member' }],
    ['POST', '/api/pm/comments', { taskId: task.id, body: 'after' }],
  ] as const;
  for (const [method, url, body] of locked) {
    expectProblem(t, await team.owner.api(method, url, body as object | undefined), 409, 'STATE_LOCKED', `${method} ${url}`);
  }
  expectProblem(t, await team.member.api('PATCH', `/api/pm/comments/${comment.id}`, { body: 'edited' }), 409, 'STATE_LOCKED', "the comment's author");
  t.equal(expectStatus(await team.viewer.api('GET', `/api/pm/tasks/${task.id}`), 200, 'still readable').id, task.id);
  const ids = async (query = '') => expectStatus(await team.owner.api('GET', `/api/pm/projects?size=1000${query}`), 200, 'list').items.map((x: { id: string }) => x.id);
  t.notOk((await ids()).includes(p.id), 'hidden by default');
  t.ok((await ids('&archived=true')).includes(p.id), '?archived=true lists it');
  t.notOk((await ids('&archived=false')).includes(p.id));
  t.notOk((await ids('&archived[ne]=true')).includes(p.id), 'an operator filter on archived replaces the default');
  t.ok((await ids('&archived[ne]=false')).includes(p.id));
  expectProblem(t, await team.member.api('POST', `/api/pm/projects/${p.id}/unarchive`), 403, 'FORBIDDEN');
  const open = expectStatus(await team.owner.api('POST', `/api/pm/projects/${p.id}/unarchive`), 200, 'unarchive');
  t.match(open, { archived: false, archivedAt: null });
  expectStatus(await team.member.api('PATCH', `/api/pm/tasks/${task.id}`, { title: 'after' }), 200, 'writable again');
  t.ok((await ids()).includes(p.id));
  expectProblem(t, await team.owner.api('POST', `/api/pm/projects/${UNKNOWN_ID}/archive`), 404, 'NOT_FOUND');
  expectProblem(t, await team.outsider.api('POST', `/api/pm/projects/${p.id}/archive`), 404, 'NOT_FOUND');
});

t.test('delete: 409 with tasks, 204 empty (members, statuses, moves go with it)', async (t) => {
  const u = await pm.user();
  const full = await pm.project(u);
  await pm.task(u, { projectId: full.id });
  expectProblem(t, await u.api('DELETE', `/api/pm/projects/${full.id}`), 409, 'CONFLICT');
  const empty = await pm.project(u);
  const [a, b] = await pm.statuses(u, empty.id);
  expectStatus(await u.api('POST', `/api/pm/projects/${empty.id}/status-moves`, { fromStatusId: a.id, toStatusId: b.id }), 201, 'move');
  t.equal((await u.api('DELETE', `/api/pm/projects/${empty.id}`)).statusCode, 204);
  expectProblem(t, await u.api('GET', `/api/pm/projects/${empty.id}`), 404, 'NOT_FOUND');
  expectProblem(t, await u.api('GET', `/api/pm/status/${a.id}`), 404, 'NOT_FOUND', 'statuses went with it');
});

t.test('archiving while tasks are written: no task lands after the archive', async (t) => {
  const rounds = onPglite ? 1 : 6;
  for (let round = 0; round < rounds; round++) {
    const team = await pm.team();
    const p = team.project;
    const writes = Array.from({ length: 4 }, (_, i) => team.member.api('POST', '/api/pm/tasks', { projectId: p.id, title: `racing ${i}` }));
    const [archived, ...created] = await Promise.all([team.owner.api('POST', `/api/pm/projects/${p.id}/archive`), ...writes]);
    const at = expectStatus(archived, 200, 'archive').archivedAt as string;
    for (const res of created) {
      if (res.statusCode === 409) t.equal(res.json().code, 'STATE_LOCKED');
      else t.ok(expectStatus(res, 201, 'created').createdAt <= at, `round ${round}: a task created before the archive, or refused`);
    }
  }
});
