// The AI dashboard: sections from the registry, figures over what the caller
// can read (tasks by status category, overdue, my open tasks, last report
// runs); a section registered later appears without other changes; access.
import t from 'tap';
import { build } from '../../helper.ts';
import { registerDashboardSection } from '../../../plugins/ai/dashboard.ts';
import { expectProblem, expectStatus, pmApi } from '../pm/pm-api.ts';

const ctx = await build(t);
const tenant = await ctx.tenant();
const pm = pmApi(ctx, tenant);
const AI = ['erp:pm:view', 'erp:ai:view'];
const sectionsOf = async (as: { api: (m: 'GET', u: string) => Promise<any> }) =>
  Object.fromEntries(expectStatus(await as.api('GET', '/api/ai/dashboard'), 200, 'dashboard').sections.map((s: { key: string; figures: unknown }) => [s.key, s.figures]));

t.test("tasks and report runs, in the caller's scope", async (t) => {
  const me = await pm.user(AI);
  const outsider = await pm.user(AI);
  const p = await pm.project(me);
  const [, doing, done] = await pm.statuses(me, p.id);
  await pm.task(me, { projectId: p.id, assigneeId: me.id, dueDate: '2020-01-01' });
  await pm.task(me, { projectId: p.id, assigneeId: me.id, statusId: doing.id });
  await pm.task(me, { projectId: p.id, statusId: done.id, dueDate: '2020-01-01' });
  await pm.task(outsider, { assigneeId: outsider.id, dueDate: '2020-01-01' });
  const report = expectStatus(await me.api('POST', '/api/ai/reports', { name: 'Sum', type: 'task-summary' }), 201, 'report');
  const ran = expectStatus(await me.api('POST', `/api/ai/reports/${report.id}/run`, {}), 201, 'run');
  const body = expectStatus(await me.api('GET', '/api/ai/dashboard'), 200, 'dashboard');
  t.same(
    body.sections.map((s: { key: string }) => s.key),
    ['tasks', 'clients', 'jobs', 'reports'],
    'in order',
  );
  const s = await sectionsOf(me);
  t.same(s.tasks, { total: 3, byCategory: { backlog: 0, todo: 1, in_progress: 1, done: 1, cancelled: 0 }, overdue: 1, myOpen: 2 });
  t.match(s.reports, { failed: 0, last: [{ id: ran.id, reportId: report.id, reportName: 'Sum', status: 'succeeded', triggeredBy: 'manual' }] });
  const theirs = await sectionsOf(outsider);
  t.same(theirs.tasks, { total: 1, byCategory: { backlog: 0, todo: 1, in_progress: 0, done: 0, cancelled: 0 }, overdue: 1, myOpen: 1 });
  t.same(theirs.reports, { failed: 0, last: [] }, "another's runs are not shown");
});

t.test('a section registered by another part appears; sections the caller cannot see are left out', async (t) => {
  registerDashboardSection({ key: 'probe', title: 'Probe', order: 30, visible: (c) => c.can('read', 'AiReport'), figures: async (c) => ({ user: c.userId }) });
  t.throws(() => registerDashboardSection({ key: 'probe', title: 'Again', order: 1, figures: async () => ({}) }), /twice/);
  const me = await pm.user(AI);
  const body = expectStatus(await me.api('GET', '/api/ai/dashboard'), 200, 'dashboard');
  t.same(
    body.sections.map((s: { key: string }) => s.key),
    ['tasks', 'clients', 'jobs', 'probe', 'reports'],
  );
  t.same(body.sections[3].figures, { user: me.id });
  const aiOnly = await pm.user(['erp:ai:view']);
  t.same(Object.keys(await sectionsOf(aiOnly)), ['clients', 'jobs', 'probe', 'reports'], 'no task codes: no task section');
});

t.test('access', async (t) => {
  const pmOnly = await pm.user(['erp:pm:view']);
  expectProblem(t, await pmOnly.api('GET', '/api/ai/dashboard'), 403, 'FORBIDDEN', 'no AI code');
  expectProblem(t, await ctx.app.inject({ method: 'GET', url: '/api/ai/dashboard' }), 401, 'UNAUTHENTICATED');
  const me = await pm.user(AI);
  expectProblem(t, await me.api('GET', '/api/ai/dashboard?x=1'), 400, 'VALIDATION_FAILED', 'unknown parameter');
});
