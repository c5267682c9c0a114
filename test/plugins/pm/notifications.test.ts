// Notifications from task and comment events (any route or module code):
// assigned, comment (watchers but the author), mention (instead of the comment
// notice), due_soon and overdue from the daily job, deduplicated per task,
// kind and day; never for a user who cannot read the task. Each user lists,
// reads and counts their own only.
import t from 'tap';
import { until } from '../../support/wait.ts';
import { SYSTEM } from '../../../core/access/principal.ts';
import { addDays, dayIn } from '../../../core/calendar.ts';
import { caller, handle, ok, socialWorld, type Person } from './social-api.ts';

const w = await socialWorld(t, { workers: true });

type Notice = { id: string; kind: string; taskId: string; commentId: string | null; actorId: string | null; title: string; read: boolean; userId: string; day: string | null; version: number };
const noticesOf = async (p: Person, query = '') => (await ok(p.call('GET', `/api/pm/notifications?size=200${query}`))).items as Notice[];
/** `p`'s notifications about `taskId`, once at least `min` arrived */
const waitFor = async (p: Person, taskId: string, min: number) =>
  until(
    async () => (await noticesOf(p)).filter((n) => n.taskId === taskId),
    (n) => n.length >= min,
  );
/** once `taskId`'s events were all handled: its activity shows the last change */
const settled = (taskId: string, entity: string, min: number) =>
  until(
    () => ok(w.admin('GET', `/api/pm/activity?taskId=${taskId}&entity=${entity}&size=200`)),
    (p) => p.total >= min,
  );

t.test('assigned: the new assignee, not one who assigns themselves, not a non-member', async (t) => {
  const task = await w.task({ assigneeId: w.member.id });
  const [n] = await waitFor(w.member, task.id, 1);
  t.match(n, { kind: 'assigned', taskId: task.id, userId: w.member.id, read: false, commentId: null, title: 'Assigned to you: Write the docs' });
  t.type(n.actorId, 'string', 'the admin assigned it');
  await ok(w.owner.call('PATCH', `/api/pm/tasks/${task.id}`, { assigneeId: w.owner.id }));
  t.equal((await w.admin('PATCH', `/api/pm/tasks/${task.id}`, { assigneeId: w.outsider.id })).statusCode, 422, 'nor can the outsider be assigned it');
  await ok(w.admin('PATCH', `/api/pm/tasks/${task.id}`, { title: 'renamed' }));
  await settled(task.id, 'Task', 3);
  t.same(await noticesOf(w.owner), [], 'the owner assigned themselves');
  t.same(await noticesOf(w.outsider), [], 'the outsider cannot read the task');
  t.equal((await noticesOf(w.member)).length, 1, 'a change of something else is no news');
});

t.test("comment: the task's watchers but the author; mention instead for the mentioned", async (t) => {
  const task = await w.task({ assigneeId: w.owner.id });
  await waitFor(w.owner, task.id, 1);
  // the viewer watches by hand; the outsider cannot
  t.equal((await w.viewer.call('POST', `/api/pm/tasks/${task.id}/watchers`, { userId: w.viewer.id })).statusCode, 201);
  t.equal((await w.outsider.call('POST', `/api/pm/tasks/${task.id}/watchers`, { userId: w.outsider.id })).statusCode, 404);
  t.equal((await w.viewer.call('POST', `/api/pm/tasks/${task.id}/watchers`, { userId: w.member.id })).statusCode, 403, 'nobody makes another a watcher');
  const c = await ok(w.member.call('POST', '/api/pm/comments', { taskId: task.id, body: `Done? @${handle(w.viewer)} @${handle(w.outsider)}` }));
  const [forOwner] = (await waitFor(w.owner, task.id, 2)).filter((n) => n.kind !== 'assigned');
  t.match(forOwner, { kind: 'comment', commentId: c.id, actorId: w.member.id, title: 'New comment on Write the docs' }, 'the assignee watches');
  const [forViewer] = await waitFor(w.viewer, task.id, 1);
  t.match(forViewer, { kind: 'mention', commentId: c.id, actorId: w.member.id }, 'mentioned: a mention, not a comment notice');
  const watchers = (await ok(w.viewer.call('GET', `/api/pm/tasks/${task.id}/watchers`))).items.map((x: any) => x.userId);
  t.same(watchers.sort(), [task.reporterId, w.owner.id, w.member.id, w.viewer.id].sort(), 'the reporter, the assignee, the commenter, the one who asked');

  // the commenter follows now: the owner's reply reaches them, not the owner
  await ok(w.owner.call('POST', '/api/pm/comments', { taskId: task.id, body: 'yes' }));
  t.match(await waitFor(w.member, task.id, 1), [{ kind: 'comment', actorId: w.owner.id }]);
  await settled(task.id, 'Comment', 2);
  t.equal((await noticesOf(w.owner)).filter((n) => n.taskId === task.id).length, 2, 'no notice of their own comment');
  t.equal((await noticesOf(w.viewer)).filter((n) => n.taskId === task.id).length, 2, 'the viewer watches: a comment notice now');
  t.same(await noticesOf(w.outsider), []);

  // unwatching stops them
  const mine = (await ok(w.viewer.call('GET', `/api/pm/tasks/${task.id}/watchers?userId=${w.viewer.id}`))).items[0];
  t.equal((await w.owner.call('DELETE', `/api/pm/tasks/${task.id}/watchers/${mine.id}`)).statusCode, 403, "not someone else's watch");
  t.equal((await w.viewer.call('DELETE', `/api/pm/tasks/${task.id}/watchers/${mine.id}`)).statusCode, 204);
  await ok(w.member.call('POST', '/api/pm/comments', { taskId: task.id, body: 'thanks' }));
  t.equal((await waitFor(w.owner, task.id, 3)).length, 3, 'the owner hears of it');
  t.equal((await noticesOf(w.viewer)).filter((n) => n.taskId === task.id).length, 2, 'unwatched: nothing more');
});

t.test('an edit that mentions someone new tells them only', async (t) => {
  const task = await w.task();
  const c = await ok(w.member.call('POST', '/api/pm/comments', { taskId: task.id, body: 'draft' }));
  await ok(w.member.call('PATCH', `/api/pm/comments/${c.id}`, { body: `draft, @${handle(w.owner)}?` }));
  t.match(await waitFor(w.owner, task.id, 1), [{ kind: 'mention', commentId: c.id }]);
});

t.test('a mention notifies once: edits that keep it, or add someone else, do not repeat it', async (t) => {
  const task = await w.task();
  const c = await ok(w.member.call('POST', '/api/pm/comments', { taskId: task.id, body: `@${handle(w.owner)} please look` }));
  t.match(await waitFor(w.owner, task.id, 1), [{ kind: 'mention', commentId: c.id }], 'the comment tells the one it mentions');
  await ok(w.member.call('PATCH', `/api/pm/comments/${c.id}`, { body: `@${handle(w.owner)} please have a look` }));
  await ok(w.member.call('PATCH', `/api/pm/comments/${c.id}`, { body: `@${handle(w.owner)} please have a look today` }));
  await ok(w.member.call('PATCH', `/api/pm/comments/${c.id}`, { body: `@${handle(w.owner)} @${handle(w.viewer)} please have a look today` }));
  // the subscriber handles a comment's events oldest first: once the last edit's notice is there, every one is
  t.match(await waitFor(w.viewer, task.id, 1), [{ kind: 'mention', commentId: c.id }], 'the one newly mentioned hears of it');
  const owner = (await noticesOf(w.owner)).filter((n) => n.taskId === task.id);
  t.same(
    owner.map((n) => [n.kind, n.commentId]),
    [['mention', c.id]],
    'one comment, three edits: one notification',
  );
});

t.test('due_soon and overdue: the daily job, once per task, kind and day, open tasks with an assignee only', async (t) => {
  const on = '2031-03-10';
  const soon = await w.task({ title: 'soon', dueDate: '2031-03-11', assigneeId: w.viewer.id });
  const late = await w.task({ title: 'late', dueDate: '2031-03-01', assigneeId: w.viewer.id });
  await w.task({ title: 'later', dueDate: '2031-03-20', assigneeId: w.viewer.id });
  await w.task({ title: 'nobody', dueDate: '2031-03-01' });
  // assigned while a member, then they left the project: the task is no longer theirs to read
  const leaver = await w.ctx.user(w.tenant, { codes: ['erp:pm:view'] });
  const membership = await ok(w.admin('POST', `/api/pm/projects/${w.projectId}/members`, { userId: leaver.id, role: 'member' }));
  await w.task({ title: 'not for them', dueDate: '2031-03-11', assigneeId: leaver.id });
  await ok(w.admin('DELETE', `/api/pm/projects/${w.projectId}/members/${membership.id}`));
  await waitFor(w.viewer, late.id, 1);
  const sys = await w.ctx.kernel.contextFor({ tenant: w.tenant.id, principal: SYSTEM, companyId: w.tenant.companyId });
  const job = { on };
  await sys.enqueue('pm.due-reminders', job);
  const due = (ns: Notice[]) => ns.filter((n) => n.kind === 'due_soon' || n.kind === 'overdue');
  const first = await until(
    async () => due(await noticesOf(w.viewer)),
    (n) => n.length >= 2,
  );
  t.same(first.map((n) => [n.kind, n.taskId, n.day, n.title]).sort(), [
    ['due_soon', soon.id, on, 'Due tomorrow: soon'],
    ['overdue', late.id, on, 'Overdue: late'],
  ]);
  t.same(due(await noticesOf({ ...leaver, call: caller(w.ctx, leaver.token) })), [], 'not for a user who cannot read the task');
  // again the same day: nothing new; the next day: overdue again, the task due "tomorrow" then is today
  await sys.enqueue('pm.due-reminders', job);
  await sys.enqueue('pm.due-reminders', { on: '2031-03-11' });
  const next = await until(
    async () => due(await noticesOf(w.viewer)),
    (n) => n.length >= 3,
  );
  await until(
    () => ok(w.admin('GET', '/api/jobs?queue=pm.due-reminders')),
    (p) => p.items.filter((j: any) => j.state === 'completed').length >= 3,
  );
  t.same(
    due(await noticesOf(w.viewer))
      .map((n) => [n.kind, n.taskId, n.day])
      .sort(),
    [
      ['due_soon', soon.id, on],
      ['overdue', late.id, on],
      ['overdue', late.id, '2031-03-11'],
    ],
    'once per task, kind and day',
  );
  t.ok(next.length >= 3);
  t.equal(dayIn('Pacific/Kiritimati', new Date('2031-03-10T23:00:00Z')), '2031-03-11', "the tenant's day, not the server's");
  t.equal(addDays('2031-12-31', 1), '2032-01-01');
});

t.test('own notifications only: list, ?read=false, read one, read-all, unread-count', async (t) => {
  const task = await w.task();
  for (const body of ['one', 'two', 'three']) await ok(w.member.call('POST', '/api/pm/comments', { taskId: task.id, body: `${body} @${handle(w.outsider)} @${handle(w.owner)}` }));
  const mine = await waitFor(w.owner, task.id, 3);
  const before = (await ok(w.owner.call('GET', '/api/pm/notifications/unread-count'))).count;
  t.ok(before >= 3);
  const [n] = mine;
  const read = await w.owner.call('PATCH', `/api/pm/notifications/${n.id}`, { read: true }, { 'if-match': `"${n.version}"` });
  t.equal(read.statusCode, 200);
  t.equal(read.json().read, true);
  t.equal((await ok(w.owner.call('GET', '/api/pm/notifications/unread-count'))).count, before - 1);
  t.notOk(
    (await noticesOf(w.owner, '&read=false')).some((x) => x.id === n.id),
    '?read=false leaves it out',
  );
  t.equal((await w.owner.call('PATCH', `/api/pm/notifications/${n.id}`, { read: false }, { 'if-match': `"${n.version}"` })).statusCode, 412, 'a stale If-Match');
  for (const [payload, why] of [
    [{ read: 'yes' }, 'a string for a boolean'],
    [{ title: 'mine now' }, 'the title is not theirs to change'],
    [{ userId: w.member.id }, 'nor whom it is for'],
    [{ read: true, colour: 'red' }, 'an unknown field'],
  ] as const) {
    const res = await w.owner.call('PATCH', `/api/pm/notifications/${n.id}`, payload);
    t.equal(res.statusCode, 400, why);
    t.equal(res.json().code, 'VALIDATION_FAILED');
  }
  t.equal((await w.member.call('GET', `/api/pm/notifications/${n.id}`)).statusCode, 404, "another user's is unknown");
  t.equal((await w.member.call('PATCH', `/api/pm/notifications/${n.id}`, { read: true })).statusCode, 404);
  t.equal((await w.admin('GET', `/api/pm/notifications/${n.id}`)).statusCode, 404, "even to an administrator: it is the owner's");
  t.equal((await w.owner.call('POST', '/api/pm/notifications', { read: true })).statusCode, 405, 'nobody writes one');

  const member = (await ok(w.member.call('GET', '/api/pm/notifications/unread-count'))).count;
  const all = await w.owner.call('POST', '/api/pm/notifications/read-all');
  t.equal(all.statusCode, 200);
  t.same(all.json(), { count: before - 1 });
  t.same(await ok(w.owner.call('GET', '/api/pm/notifications/unread-count')), { count: 0 });
  t.same(await noticesOf(w.owner, '&read=false'), []);
  t.same(await ok(w.owner.call('POST', '/api/pm/notifications/read-all')), { count: 0 }, 'nothing left');
  t.equal((await ok(w.member.call('GET', '/api/pm/notifications/unread-count'))).count, member, "others' stay unread");
  t.equal((await w.owner.call('GET', '/api/pm/notifications/unread-count?x=1')).statusCode, 400);
  t.equal((await w.owner.call('DELETE', `/api/pm/notifications/${n.id}`)).statusCode, 204, 'one may delete their own');
  const other = await w.ctx.tenant();
  t.same(await ok(caller(w.ctx, other.adminToken)('GET', '/api/pm/notifications/unread-count')), { count: 0 }, 'another tenant');
  t.equal((await caller(w.ctx, other.adminToken)('GET', `/api/pm/notifications/${mine[1].id}`)).statusCode, 404);
});
