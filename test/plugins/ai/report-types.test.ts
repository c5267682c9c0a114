// Reports against a data set counted by hand: a project the owner belongs to
// (four tasks), a project they do not (one task, never counted for them) and
// a personal task. Definitions (type, parameters, cron checked), on-demand
// runs as the owner whoever starts them, history, compare; bad input and
// access.
import t from 'tap';
import { build } from '../../helper.ts';
import { expectProblem, expectStatus, pmApi, UNKNOWN_ID, type PmUser } from '../pm/pm-api.ts';
import { apiAs } from '../core/core-api.ts';

const ctx = await build(t);
const tenant = await ctx.tenant();
const pm = pmApi(ctx, tenant);
const AI = ['erp:pm:view', 'erp:ai:view'];
const PAST = '2020-01-15';
const FUTURE = '2099-01-01';

const owner = await pm.user(AI);
const colleague = await pm.user(AI);
const stranger = await pm.user(AI);
const mine = await pm.project(owner);
await pm.member(owner, mine.id, colleague.id, 'member');
const theirs = await pm.project(stranger);
const [todo, doing, done] = await pm.statuses(owner, mine.id);
await pm.task(owner, { projectId: mine.id, statusId: todo.id, priority: 'high', dueDate: PAST, assigneeId: owner.id, estimate: '2.00' });
await pm.task(owner, { projectId: mine.id, statusId: done.id, priority: 'normal', dueDate: PAST, assigneeId: owner.id, estimate: '5.00' });
await pm.task(owner, { projectId: mine.id, statusId: doing.id, priority: 'critical', dueDate: FUTURE, assigneeId: colleague.id, estimate: '3.50' });
await pm.task(owner, { projectId: mine.id, statusId: todo.id, priority: 'low' });
await pm.task(stranger, { projectId: theirs.id, priority: 'high', dueDate: PAST, assigneeId: stranger.id, estimate: '8.00' });
await pm.task(owner, { title: 'personal', dueDate: PAST, estimate: '1.00' });

const nameOf = async (u: PmUser) => expectStatus(await apiAs(ctx, tenant.adminToken)('GET', `/api/users/${u.id}`), 200, 'user').name as string;
const [ownerName, colleagueName] = [await nameOf(owner), await nameOf(colleague)];

const define = async (as: PmUser, body: Record<string, unknown>) => expectStatus(await as.api('POST', '/api/ai/reports', body), 201, `define ${JSON.stringify(body)}`);
const run = async (as: PmUser, id: string, body: Record<string, unknown> = {}) => expectStatus(await as.api('POST', `/api/ai/reports/${id}/run`, body), 201, 'run');

t.test("task summary, overdue tasks and workload: the owner's tasks only, counted by hand", async (t) => {
  const summary = await define(owner, { name: 'Summary', type: 'task-summary' });
  t.match(summary, { ownerId: owner.id, enabled: true, schedule: null, nextRunAt: null });
  const s = await run(owner, summary.id);
  t.match(s, { status: 'succeeded', triggeredBy: 'manual', runById: owner.id, type: 'task-summary', rangeFrom: null });
  t.same(s.result, { total: 5, byCategory: { backlog: 0, todo: 3, in_progress: 1, done: 1, cancelled: 0 }, byPriority: { low: 1, normal: 2, high: 1, critical: 1 } });

  const overdue = await define(owner, { name: 'Overdue', type: 'overdue-tasks', parameters: { limit: 1 } });
  const o = await run(owner, overdue.id);
  t.equal(o.result.count, 2, "the high one and the personal one; the done and the stranger's not");
  t.equal(o.result.tasks.length, 1, 'capped by limit');
  t.equal(o.result.truncated, true);
  t.match(o.result.tasks[0], { dueDate: PAST, priority: 'high', assigneeId: owner.id, assigneeName: ownerName });
  t.ok(o.result.tasks[0].daysOverdue > 2000);

  const workload = await define(owner, { name: 'Workload', type: 'workload', parameters: { projectId: mine.id } });
  const w = await run(owner, workload.id);
  const byWho = Object.fromEntries(w.result.items.map((i: { assigneeId: string | null }) => [i.assigneeId ?? 'none', i]));
  // each assignee named (their name and id), not by id alone
  t.same(byWho, {
    [owner.id]: { assigneeId: owner.id, assigneeName: ownerName, open: 1, estimate: '2.00', overdue: 1 },
    [colleague.id]: { assigneeId: colleague.id, assigneeName: colleagueName, open: 1, estimate: '3.50', overdue: 0 },
    none: { assigneeId: null, assigneeName: null, open: 1, estimate: '0.00', overdue: 0 },
  });
});

t.test('a run sees what the owner may see, whoever starts it', async (t) => {
  const r = await define(owner, { name: 'Mine', type: 'task-summary' });
  const admin = apiAs(ctx, tenant.adminToken);
  const byAdmin = expectStatus(await admin('POST', `/api/ai/reports/${r.id}/run`, {}), 201, 'admin runs it');
  t.equal(byAdmin.result.total, 5, "the owner's five, not the tenant's six");
  const own = await define(stranger, { name: 'Theirs', type: 'task-summary' });
  t.equal((await run(stranger, own.id)).result.total, 1);
  expectProblem(t, await owner.api('POST', `/api/ai/reports/${own.id}/run`, {}), 404, 'NOT_FOUND', "another's report");
  expectProblem(t, await owner.api('GET', `/api/ai/reports/${own.id}`), 404, 'NOT_FOUND');
  const ownList = expectStatus(await owner.api('GET', '/api/ai/reports'), 200, 'list');
  t.notOk(
    ownList.items.some((i: { id: string }) => i.id === own.id),
    'lists only their own',
  );
  const all = expectStatus(await admin('GET', '/api/ai/reports'), 200, 'admin lists all');
  t.ok(all.items.some((i: { id: string }) => i.id === own.id));
});

t.test('history and compare', async (t) => {
  const r = await define(owner, { name: 'Compared', type: 'task-summary' });
  const first = await run(owner, r.id);
  const nothing = expectStatus(await owner.api('GET', `/api/ai/report-runs/${first.id}/compare`), 200, 'compare the first');
  t.equal(nothing.previous, null);
  t.match(
    nothing.figures.find((f: { figure: string }) => f.figure === 'total'),
    { previous: null, current: 5, delta: null },
  );
  await pm.task(owner, { projectId: mine.id, statusId: done.id, priority: 'low' });
  await pm.task(owner, { projectId: mine.id, statusId: done.id, priority: 'low' });
  const second = await run(owner, r.id);
  const cmp = expectStatus(await owner.api('GET', `/api/ai/report-runs/${second.id}/compare`), 200, 'compare');
  t.equal(cmp.previous.id, first.id);
  const fig = Object.fromEntries(cmp.figures.map((f: { figure: string }) => [f.figure, f]));
  t.same(fig.total, { figure: 'total', previous: 5, current: 7, delta: 2 });
  t.same(fig['category.done'], { figure: 'category.done', previous: 1, current: 3, delta: 2 });
  t.same(fig['priority.high'], { figure: 'priority.high', previous: 1, current: 1, delta: 0 });
  const hist = expectStatus(await owner.api('GET', `/api/ai/report-runs?reportId=${r.id}&size=1`), 200, 'history');
  t.equal(hist.total, 2);
  t.equal(hist.items[0].id, second.id, 'newest first');
  const page2 = expectStatus(await owner.api('GET', `/api/ai/report-runs?reportId=${r.id}&size=1&page=2`), 200, 'page 2');
  t.equal(page2.items[0].id, first.id);
  t.equal(expectStatus(await owner.api('GET', `/api/ai/report-runs/${first.id}`), 200, 'read').id, first.id);
  expectProblem(t, await stranger.api('GET', `/api/ai/report-runs/${first.id}`), 404, 'NOT_FOUND', "another's run");
  expectProblem(t, await stranger.api('GET', `/api/ai/report-runs/${first.id}/compare`), 404, 'NOT_FOUND', "another's compare");
  t.equal(expectStatus(await stranger.api('GET', `/api/ai/report-runs?reportId=${r.id}`), 200, 'their list').total, 0);
  const ranged = await run(owner, r.id, { from: '2000-01-01T00:00:00Z', to: '2000-12-31T00:00:00Z' });
  t.match(ranged, { rangeFrom: '2000-01-01T00:00:00.000Z', rangeTo: '2000-12-31T00:00:00.000Z' });
  t.equal(ranged.result.total, 0, 'nothing created in 2000');
  expectProblem(t, await owner.api('DELETE', `/api/ai/reports/${r.id}`), 409, 'CONFLICT', 'its history is not deleted unasked');
  expectStatus(await owner.api('DELETE', `/api/ai/reports/${r.id}?force=true`), 204, 'delete the definition, asked for');
  expectProblem(t, await owner.api('GET', `/api/ai/report-runs/${first.id}`), 404, 'NOT_FOUND', 'its runs go with it');
});

t.test('definitions: bad cron, unknown type, bad parameters, unknown fields, huge values, stale If-Match', async (t) => {
  const bad: [Record<string, unknown>, string, string][] = [
    [{ name: 'x', type: 'nope' }, '/type', 'unknown type'],
    [{ name: 'x', type: 'task-summary', schedule: '61 * * * *' }, '/schedule', 'bad cron'],
    [{ name: 'x', type: 'task-summary', schedule: 'every day' }, '/schedule', 'no cron'],
    [{ name: 'x', type: 'task-summary', schedule: '' }, '/schedule', 'empty cron'],
    [{ name: 'x', type: 'overdue-tasks', parameters: { limit: 100000 } }, '/parameters/limit', 'limit too big'],
    [{ name: 'x', type: 'overdue-tasks', parameters: { limit: 'ten' } }, '/parameters/limit', 'limit not a number'],
    [{ name: 'x', type: 'task-summary', parameters: { bogus: 1 } }, '/parameters/bogus', 'unknown parameter'],
    [{ name: 'x', type: 'task-summary', parameters: { projectId: 'x' } }, '/parameters/projectId', 'malformed project'],
    [{ name: 'x', type: 'task-summary', parameters: [1] }, '/parameters', 'parameters not an object'],
  ];
  for (const [body, path, what] of bad) {
    const res = await owner.api('POST', '/api/ai/reports', body);
    expectProblem(t, res, 400, 'VALIDATION_FAILED', what);
    t.ok(
      res.json().errors?.some((e: { path: string }) => e.path === path),
      `${what}: names ${path} (${res.body.slice(0, 300)})`,
    );
  }
  const shapes: [unknown, string][] = [
    [{ type: 'task-summary' }, 'no name'],
    [{ name: 'x', type: 'task-summary', bogus: 1 }, 'unknown field'],
    [{ name: 'x'.repeat(201), type: 'task-summary' }, 'name too long'],
    [{ name: 'x', type: 'task-summary', schedule: '* '.repeat(100) }, 'schedule too long'],
    [{ name: 'x', type: 'task-summary', nextRunAt: '2030-01-01T00:00:00Z' }, 'nextRunAt is read-only'],
    [{ name: 5, type: 'task-summary' }, 'wrong type'],
  ];
  for (const [body, what] of shapes) expectProblem(t, await owner.api('POST', '/api/ai/reports', body as object), 400, 'VALIDATION_FAILED', what);
  expectProblem(t, await owner.api('POST', '/api/ai/reports', { name: 'x', type: 'task-summary', ownerId: stranger.id }), 403, 'FORBIDDEN', "another's report");
  const forStranger = expectStatus(await apiAs(ctx, tenant.adminToken)('POST', '/api/ai/reports', { name: 'x', type: 'task-summary', ownerId: stranger.id }), 201, 'an admin names the owner');
  t.equal(forStranger.ownerId, stranger.id);
  const r = await define(owner, { name: 'Edit me', type: 'overdue-tasks', parameters: { limit: 5 } });
  t.equal(r.ownerId, owner.id, 'default: the creator');
  expectProblem(t, await owner.api('PATCH', `/api/ai/reports/${r.id}`, { ownerId: stranger.id }), 400, 'VALIDATION_FAILED', 'the owner is fixed');
  expectProblem(t, await owner.api('PATCH', `/api/ai/reports/${r.id}`, { type: 'workload' }), 400, 'VALIDATION_FAILED', 'type is fixed');
  expectProblem(t, await owner.api('PATCH', `/api/ai/reports/${r.id}`, { parameters: { limit: 0 } }), 400, 'VALIDATION_FAILED', 'bad parameters on update');
  expectProblem(t, await owner.api('PATCH', `/api/ai/reports/${r.id}`, { name: 'y' }, { 'if-match': '"99"' }), 412, 'PRECONDITION_FAILED', 'stale If-Match');
  const renamed = expectStatus(await owner.api('PATCH', `/api/ai/reports/${r.id}`, { name: 'Renamed', schedule: '0 7 * * 1' }), 200, 'edit');
  t.ok(renamed.nextRunAt, 'scheduled now');
  t.equal(new Date(renamed.nextRunAt).getUTCDay(), 1, 'a Monday');
  const paused = expectStatus(await owner.api('PATCH', `/api/ai/reports/${r.id}`, { enabled: false }), 200, 'pause');
  t.equal(paused.nextRunAt, null);
  const runs = [
    [{ from: 'yesterday' }, 'from not a date-time'],
    [{ from: '2030-01-01T00:00:00Z', to: '2020-01-01T00:00:00Z' }, 'from after to'],
    [{ bogus: 1 }, 'unknown field'],
    [{ from: '0000-01-01T00:00:00Z' }, 'year 0'],
    [{ to: '+275760-09-13T00:00:00Z' }, 'beyond any calendar'],
    [{ from: '1200-01-01T00:00:00Z' }, 'too early'],
  ] as const;
  for (const [body, what] of runs) expectProblem(t, await owner.api('POST', `/api/ai/reports/${r.id}/run`, body), 400, 'VALIDATION_FAILED', what);
  expectProblem(t, await owner.api('POST', `/api/ai/reports/${UNKNOWN_ID}/run`, {}), 404, 'NOT_FOUND', 'unknown report');
  expectProblem(t, await owner.api('POST', '/api/ai/reports/not-a-uuid/run', {}), 400, 'VALIDATION_FAILED', 'malformed id');
  expectProblem(t, await owner.api('GET', `/api/ai/report-runs/${UNKNOWN_ID}/compare`), 404, 'NOT_FOUND', 'unknown run');
});

t.test('permissions and tenants', async (t) => {
  const pmOnly = await pm.user(['erp:pm:view']);
  expectProblem(t, await pmOnly.api('GET', '/api/ai/reports'), 403, 'FORBIDDEN', 'no AI code');
  expectProblem(t, await pmOnly.api('POST', '/api/ai/reports', { name: 'x', type: 'task-summary' }), 403, 'FORBIDDEN');
  expectProblem(t, await pmOnly.api('GET', '/api/ai/report-runs'), 403, 'FORBIDDEN');
  expectProblem(t, await pmOnly.api('GET', '/api/ai/report-types'), 403, 'FORBIDDEN');
  const types = expectStatus(await owner.api('GET', '/api/ai/report-types'), 200, 'types');
  t.same(
    types.items.map((i: { name: string }) => i.name),
    ['task-summary', 'overdue-tasks', 'workload', 'client-activity'],
  );
  t.same(
    types.items.map((i: { name: string }) => i.name),
    ctx.kernel.model('AiReport').byName.get('type')!.values,
    'every type the manifest declares is registered, and only those',
  );
  const r = await define(owner, { name: 'Tenant bound', type: 'task-summary' });
  const ran = await run(owner, r.id);
  const other = await ctx.tenant();
  const foreign = await pmApi(ctx, other).user(AI);
  expectProblem(t, await foreign.api('GET', `/api/ai/reports/${r.id}`), 404, 'NOT_FOUND', 'wrong tenant');
  expectProblem(t, await foreign.api('POST', `/api/ai/reports/${r.id}/run`, {}), 404, 'NOT_FOUND', 'wrong tenant run');
  expectProblem(t, await foreign.api('GET', `/api/ai/report-runs/${ran.id}`), 404, 'NOT_FOUND', 'wrong tenant history');
  expectProblem(t, await ctx.app.inject({ method: 'GET', url: '/api/ai/reports' }), 401, 'UNAUTHENTICATED');
});
