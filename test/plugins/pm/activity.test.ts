// The activity flow, written by a subscriber from the events of every change:
// one row per changed field (before, after), one per create and delete, with
// who and when, the project and task derived from the row; listed per task,
// per project or tenant-wide, to members of the project only.
import t from 'tap';
import { until } from '../../support/wait.ts';
import { caller, ok, socialWorld } from './social-api.ts';

const w = await socialWorld(t, { workers: true });

type Activity = {
  entity: string;
  entityId: string;
  action: string;
  field: string | null;
  before: unknown;
  after: unknown;
  actorId: string | null;
  projectId: string | null;
  taskId: string | null;
  at: string;
};
const activity = async (query: string, min: number, as = w.admin) =>
  (
    await until(
      () => ok(as('GET', `/api/pm/activity?${query}&size=200`)),
      (p) => p.total >= min,
    )
  ).items as Activity[];

t.test("a task's life: created, each changed field with before and after, who and when", async (t) => {
  const task = await w.task({ priority: 'low' });
  const changed = await ok(w.member.call('PATCH', `/api/pm/tasks/${task.id}`, { priority: 'high', title: 'Write better docs', assigneeId: w.owner.id }));
  const rows = await activity(`taskId=${task.id}&entity=Task`, 4);
  const created = rows.find((r) => r.action === 'created')!;
  t.match(created, { entity: 'Task', entityId: task.id, projectId: w.projectId, taskId: task.id, field: null });
  // the event's time: its transaction's start, at most moments before the row's own timestamp
  const before = (at: string, stamp: string) => Date.parse(at) <= Date.parse(stamp) && Date.parse(stamp) - Date.parse(at) < 60_000;
  t.ok(before(created.at, task.createdAt), `${created.at} is the create's time (${task.createdAt})`);
  t.match(created.actorId, /^[0-9a-f-]{36}$/, 'the admin made it: a user');
  t.not(created.actorId, w.member.id);
  const updates = rows.filter((r) => r.action === 'updated').sort((a, b) => a.field!.localeCompare(b.field!));
  t.same(
    updates.map((r) => [r.field, r.before, r.after, r.actorId]),
    [
      ['assigneeId', null, w.owner.id, w.member.id],
      ['priority', 'low', 'high', w.member.id],
      ['title', 'Write the docs', 'Write better docs', w.member.id],
    ],
    'one row per changed field; no version or updatedAt rows',
  );
  t.ok(
    updates.every((r) => r.at === updates[0].at && before(r.at, changed.updatedAt) && r.projectId === w.projectId && r.taskId === task.id),
    'at the time of the change, in the project and task',
  );
});

t.test("comments and members are the project's activity too; filters by project, task, entity, action", async (t) => {
  const task = await w.task();
  const c = await ok(w.member.call('POST', '/api/pm/comments', { taskId: task.id, body: 'hello' }));
  await ok(w.member.call('PATCH', `/api/pm/comments/${c.id}`, { body: 'hello again' }));
  const rows = await activity(`taskId=${task.id}&entity=Comment`, 3);
  t.same(rows.map((r) => [r.action, r.field, r.actorId, r.projectId]).sort(), [
    ['created', null, w.member.id, w.projectId],
    ['updated', 'body', w.member.id, w.projectId],
    ['updated', 'editedAt', w.member.id, w.projectId],
  ]);
  t.same(rows.find((r) => r.field === 'body')!.before, 'hello');
  const members = await activity(`projectId=${w.projectId}&entity=ProjectMember&action=created`, 4);
  t.equal(members.length, 4, 'the creator as owner, then each member added');
  const other = await ok(w.admin('POST', '/api/pm/projects', { key: 'ACT', name: 'Other' }));
  const own = await activity(`projectId=${other.id}`, 5);
  t.same(
    own.map((r) => [r.entity, r.action]).sort(),
    [
      ['Project', 'created'],
      ['ProjectMember', 'created'],
      ['TaskStatus', 'created'],
      ['TaskStatus', 'created'],
      ['TaskStatus', 'created'],
    ],
    "another project's flow is its own: the project, its owner and its default statuses",
  );
  t.ok(own.some((r) => r.entity === 'Project' && r.entityId === other.id));
  const all = await activity('entity=Project', 2);
  t.ok(
    [w.projectId, other.id].every((id) => all.some((r) => r.entityId === id)),
    'tenant-wide',
  );
});

t.test("members read their projects' activity; others see none of it", async (t) => {
  const task = await w.task();
  await ok(w.admin('PATCH', `/api/pm/tasks/${task.id}`, { priority: 'critical' }));
  await activity(`taskId=${task.id}&field=priority`, 1);
  const forViewer = await ok(w.viewer.call('GET', `/api/pm/activity?taskId=${task.id}&field=priority`));
  t.match(forViewer.items, [{ after: 'critical' }], 'a viewer of the project reads it');
  t.equal((await ok(w.outsider.call('GET', `/api/pm/activity?taskId=${task.id}`))).total, 0, 'a non-member none');
  const [row] = forViewer.items;
  t.equal((await w.outsider.call('GET', `/api/pm/activity/${row.id}`)).statusCode, 404);
  const other = await w.ctx.tenant();
  t.equal((await caller(w.ctx, other.adminToken)('GET', `/api/pm/activity/${row.id}`)).statusCode, 404, 'another tenant');
  t.equal((await w.viewer.call('POST', '/api/pm/activity', { entity: 'Task', entityId: task.id, action: 'created', at: new Date().toISOString() })).statusCode, 405, 'nobody writes it');
  t.equal((await w.viewer.call('GET', '/api/pm/activity?taskId=nope')).statusCode, 400);
  t.equal((await w.viewer.call('GET', '/api/pm/activity?colour=red')).statusCode, 400);
});

t.test('a deleted task and project: rows name them by entity and id', async (t) => {
  const project = await ok(w.admin('POST', '/api/pm/projects', { key: 'GONE', name: 'Gone' }));
  const task = await ok(w.admin('POST', '/api/pm/tasks', { projectId: project.id, title: 'short-lived' }));
  await activity(`taskId=${task.id}`, 1);
  t.equal((await w.admin('DELETE', `/api/pm/tasks/${task.id}`)).statusCode, 204);
  const deleted = await activity(`entityId=${task.id}&action=deleted`, 1);
  t.match(deleted, [{ entity: 'Task', projectId: project.id, taskId: null }], 'the task is gone: no link to it');
});
