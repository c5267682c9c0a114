// The project reports and dashboard against a data set counted by hand: three
// projects (one archived), their status flows, nine tasks with estimates, due
// dates around today, assignees, one cancelled and done ones, and a personal
// task. Exact numbers for a pm admin; a member of one project counts that
// project (and their personal task) only, a non-member and another tenant
// nothing; assignees come named; bad queries are 400.
//
// Tasks are written through module code as the system, with the category of
// their status and completedAt given (both read-only on the API), so these
// numbers do not depend on the task rules that derive them.
import t from 'tap';
import { build, type TestTenant } from '../../helper.ts';
import { SYSTEM } from '../../../core/plugin-api.ts';

const ctx = await build(t);
const tenant = await ctx.tenant();
const system = await ctx.kernel.contextFor({ tenant: tenant.id, principal: SYSTEM, companyId: tenant.companyId });
const today = system.today();
const day = (n: number) => new Date(Date.parse(`${today}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);
const daysAgo = (n: number) => new Date(Date.now() - n * 86_400_000);

const adminId = (await system.data('User').find({ email: tenant.adminEmail }))[0].id as string;
const memberUser = await ctx.user(tenant, { codes: ['erp:pm:view'] });
const outsider = await ctx.user(tenant, { codes: ['erp:pm:view'] });
const noPm = await ctx.user(tenant, { codes: [] });
await system.data('User').update(memberUser.id, { name: 'Mia Member' });

const project = async (key: string, name: string, status: 'planning' | 'active') => (await system.data('Project').create({ key, name, status })).id as string;
const alpha = await project('ALPHA', 'Alpha', 'active');
const beta = await project('BETA', 'Beta', 'planning');
const gamma = await project('GAMMA', 'Gamma', 'active');
await system.data('Project').update(gamma, { status: 'completed' });
await system.data('Project').update(gamma, {}, { set: { archived: true, archivedAt: new Date() } });
await system.data('ProjectMember').create({ userId: memberUser.id, role: 'member' }, { internal: { projectId: alpha } });

type Category = 'backlog' | 'todo' | 'in_progress' | 'done' | 'cancelled';
const statuses = new Map<string, Category>();
const status = async (projectId: string | null, name: string, category: Category) => {
  const id = (await system.data('TaskStatus').create({ projectId, name, category })).id as string;
  statuses.set(id, category);
  return id;
};
const aBacklog = await status(alpha, 'Backlog', 'backlog');
const aTodo = await status(alpha, 'To do', 'todo');
const aDoing = await status(alpha, 'Doing', 'in_progress');
const aDone = await status(alpha, 'Done', 'done');
const aCancelled = await status(alpha, 'Cancelled', 'cancelled');
const bTodo = await status(beta, 'To do', 'todo');
const bDone = await status(beta, 'Done', 'done');
const open = await status(null, 'Open', 'todo');

interface TaskData {
  projectId: string | null;
  statusId: string;
  priority: string;
  assigneeId: string | null;
  estimate: string | null;
  dueDate: string;
  completedAt?: Date;
}
let n = 0;
const task = async (d: TaskData) => {
  const { completedAt, ...input } = d;
  const row = await system.data('Task').create({ title: `Task ${++n}`, ...input }, { internal: { category: statuses.get(d.statusId) } });
  if (completedAt) await system.data('Task').update(row.id, {}, { set: { completedAt } });
};
const M = memberUser.id;
const U = adminId;
await task({ projectId: alpha, statusId: aBacklog, priority: 'normal', assigneeId: M, estimate: '2.00', dueDate: day(-3) }); // A1 open, overdue
await task({ projectId: alpha, statusId: aTodo, priority: 'high', assigneeId: M, estimate: '3.50', dueDate: day(2) }); // A2 open, due this week
await task({ projectId: alpha, statusId: aDoing, priority: 'critical', assigneeId: U, estimate: '5.00', dueDate: day(-1) }); // A3 open, overdue
await task({ projectId: alpha, statusId: aDone, priority: 'normal', assigneeId: M, estimate: '1.00', dueDate: day(-2), completedAt: daysAgo(2) }); // A4 done
await task({ projectId: alpha, statusId: aCancelled, priority: 'low', assigneeId: U, estimate: '8.00', dueDate: day(-5) }); // A5 cancelled
await task({ projectId: alpha, statusId: aTodo, priority: 'normal', assigneeId: null, estimate: null, dueDate: day(10) }); // A6 open, later
await task({ projectId: beta, statusId: bTodo, priority: 'high', assigneeId: U, estimate: '4.25', dueDate: day(0) }); // B1 open, due today
await task({ projectId: beta, statusId: bDone, priority: 'normal', assigneeId: U, estimate: '2.00', dueDate: day(-30), completedAt: daysAgo(20) }); // B2 done long ago
await task({ projectId: null, statusId: open, priority: 'normal', assigneeId: M, estimate: '1.50', dueDate: day(-1) }); // P1 personal, overdue

const get = async (token: string, url: string, status = 200) => {
  const res = await ctx.as(token, { method: 'GET', url });
  if (res.statusCode !== status) throw new Error(`${url}: ${res.statusCode} ${res.body}`);
  return res.json();
};
const alphaProgress = {
  projectId: alpha,
  key: 'ALPHA',
  name: 'Alpha',
  status: 'active',
  archived: false,
  total: 6,
  open: 4,
  done: 1,
  cancelled: 1,
  overdue: 2,
  percentDone: 20,
  byCategory: { backlog: 1, todo: 2, in_progress: 1, done: 1, cancelled: 1 },
};
const betaProgress = {
  projectId: beta,
  key: 'BETA',
  name: 'Beta',
  status: 'planning',
  archived: false,
  total: 2,
  open: 1,
  done: 1,
  cancelled: 0,
  overdue: 0,
  percentDone: 50,
  byCategory: { backlog: 0, todo: 1, in_progress: 0, done: 1, cancelled: 0 },
};
const gammaProgress = { ...betaProgress, projectId: gamma, key: 'GAMMA', name: 'Gamma', status: 'completed', archived: true, total: 0, open: 0, done: 0, percentDone: 0 };
gammaProgress.byCategory = { backlog: 0, todo: 0, in_progress: 0, done: 0, cancelled: 0 };

t.test('progress per project', async (t) => {
  t.same(await get(tenant.adminToken, '/api/pm/reports/progress'), { today, projects: [alphaProgress, betaProgress] }, 'archived projects aside, by name');
  t.same((await get(tenant.adminToken, '/api/pm/reports/progress?archived=true')).projects, [alphaProgress, betaProgress, gammaProgress], 'a project without tasks is 0 % done');
  t.same((await get(tenant.adminToken, `/api/pm/reports/progress?projectId=${beta}`)).projects, [betaProgress], 'one project');
  t.same((await get(memberUser.token, '/api/pm/reports/progress')).projects, [alphaProgress], 'a member: their project, all its tasks');
  t.same((await get(memberUser.token, `/api/pm/reports/progress?projectId=${beta}`)).projects, [], 'not a project they cannot read');
  t.same((await get(outsider.token, '/api/pm/reports/progress')).projects, []);
});

t.test('distribution by priority, assignee and status', async (t) => {
  t.same(await get(tenant.adminToken, '/api/pm/reports/distribution?by=priority'), {
    by: 'priority',
    total: 9,
    items: [
      { key: 'normal', count: 5 },
      { key: 'high', count: 2 },
      { key: 'critical', count: 1 },
      { key: 'low', count: 1 },
    ],
  });
  t.same(await get(tenant.adminToken, `/api/pm/reports/distribution?by=assignee&projectId=${alpha}`), {
    by: 'assignee',
    total: 6,
    items: [
      { key: M, count: 3, name: 'Mia Member' },
      { key: U, count: 2, name: 'Admin' },
      { key: null, count: 1, name: null },
    ],
  });
  const byStatus = await get(tenant.adminToken, `/api/pm/reports/distribution?projectId=${alpha}`);
  t.equal(byStatus.by, 'status', 'by status unless asked otherwise');
  t.equal(byStatus.total, 6);
  t.same(byStatus.items[0], { key: aTodo, count: 2, name: 'To do', category: 'todo' }, 'most first');
  t.same(
    byStatus.items.slice(1).sort((a: { name: string }, b: { name: string }) => a.name.localeCompare(b.name)),
    [
      { key: aBacklog, count: 1, name: 'Backlog', category: 'backlog' },
      { key: aCancelled, count: 1, name: 'Cancelled', category: 'cancelled' },
      { key: aDoing, count: 1, name: 'Doing', category: 'in_progress' },
      { key: aDone, count: 1, name: 'Done', category: 'done' },
    ],
  );
  t.same(
    await get(memberUser.token, '/api/pm/reports/distribution?by=priority'),
    {
      by: 'priority',
      total: 7,
      items: [
        { key: 'normal', count: 4 },
        { key: 'critical', count: 1 },
        { key: 'high', count: 1 },
        { key: 'low', count: 1 },
      ],
    },
    "a member: their project's tasks and their personal one",
  );
  t.same(await get(memberUser.token, `/api/pm/reports/distribution?projectId=${beta}`), { by: 'status', total: 0, items: [] });
  t.same(await get(outsider.token, '/api/pm/reports/distribution?by=assignee'), { by: 'assignee', total: 0, items: [] });
});

t.test('workload per assignee', async (t) => {
  t.same(await get(tenant.adminToken, '/api/pm/reports/workload'), {
    from: today,
    to: day(6),
    items: [
      { assigneeId: M, assigneeName: 'Mia Member', open: 3, openEstimate: '7.00', dueInRange: 1, completedInRange: 0 },
      { assigneeId: U, assigneeName: 'Admin', open: 2, openEstimate: '9.25', dueInRange: 1, completedInRange: 0 },
      { assigneeId: null, assigneeName: null, open: 1, openEstimate: '0.00', dueInRange: 0, completedInRange: 0 },
    ],
  });
  t.same(
    (await get(tenant.adminToken, `/api/pm/reports/workload?from=${day(-7)}&to=${today}`)).items,
    [
      { assigneeId: M, assigneeName: 'Mia Member', open: 3, openEstimate: '7.00', dueInRange: 3, completedInRange: 1 },
      { assigneeId: U, assigneeName: 'Admin', open: 2, openEstimate: '9.25', dueInRange: 2, completedInRange: 0 },
      { assigneeId: null, assigneeName: null, open: 1, openEstimate: '0.00', dueInRange: 0, completedInRange: 0 },
    ],
    'the past week: a done task was due then, a cancelled one does not count',
  );
  t.same(
    (await get(tenant.adminToken, `/api/pm/reports/workload?from=${day(-30)}&to=${day(-30)}&projectId=${beta}`)).items,
    [{ assigneeId: U, assigneeName: 'Admin', open: 1, openEstimate: '4.25', dueInRange: 1, completedInRange: 0 }],
    'one project, one day',
  );
  t.same(
    (await get(memberUser.token, '/api/pm/reports/workload')).items,
    [
      { assigneeId: M, assigneeName: 'Mia Member', open: 3, openEstimate: '7.00', dueInRange: 1, completedInRange: 0 },
      { assigneeId: U, assigneeName: 'Admin', open: 1, openEstimate: '5.00', dueInRange: 0, completedInRange: 0 },
      { assigneeId: null, assigneeName: null, open: 1, openEstimate: '0.00', dueInRange: 0, completedInRange: 0 },
    ],
    "a member: the admin's Beta task is not theirs to count",
  );
  t.same((await get(outsider.token, '/api/pm/reports/workload')).items, []);
  t.equal((await get(tenant.adminToken, '/api/pm/reports/workload?from=0001-01-01&to=9999-12-31')).items.length, 3, 'the widest range is no error');
});

t.test('the dashboard', async (t) => {
  t.same(await get(tenant.adminToken, '/api/pm/dashboard'), {
    today,
    projectsByStatus: { planning: 1, active: 1, completed: 0 },
    totalTasks: 9,
    myOpenTasks: 2,
    overdueTasks: 3,
    dueThisWeek: 2,
    completedLast7Days: 1,
    tasksByCategory: { backlog: 1, todo: 4, in_progress: 1, done: 2, cancelled: 1 },
  });
  t.same(await get(memberUser.token, '/api/pm/dashboard'), {
    today,
    projectsByStatus: { planning: 0, active: 1, completed: 0 },
    totalTasks: 7,
    myOpenTasks: 3,
    overdueTasks: 3,
    dueThisWeek: 1,
    completedLast7Days: 1,
    tasksByCategory: { backlog: 1, todo: 3, in_progress: 1, done: 1, cancelled: 1 },
  });
  const zeros = {
    today,
    projectsByStatus: { planning: 0, active: 0, completed: 0 },
    totalTasks: 0,
    myOpenTasks: 0,
    overdueTasks: 0,
    dueThisWeek: 0,
    completedLast7Days: 0,
    tasksByCategory: { backlog: 0, todo: 0, in_progress: 0, done: 0, cancelled: 0 },
  };
  t.same(await get(outsider.token, '/api/pm/dashboard'), zeros, 'a non-member counts nothing');
});

t.test('another tenant sees nothing of this one', async (t) => {
  const other: TestTenant = await ctx.tenant();
  const sameDay = (await get(other.adminToken, '/api/pm/dashboard')).today;
  t.same((await get(other.adminToken, '/api/pm/dashboard')).totalTasks, 0);
  t.equal(typeof sameDay, 'string');
  t.same((await get(other.adminToken, `/api/pm/reports/progress?projectId=${alpha}`)).projects, []);
  t.same((await get(other.adminToken, `/api/pm/reports/distribution?projectId=${alpha}`)).items, []);
  t.same((await get(other.adminToken, '/api/pm/reports/workload')).items, []);
});

t.test('bad queries and missing permissions', async (t) => {
  for (const url of [
    '/api/pm/reports/distribution?by=owner',
    '/api/pm/reports/distribution?projectId=nope',
    '/api/pm/reports/progress?projectId=1',
    '/api/pm/reports/progress?bogus=1',
    '/api/pm/reports/workload?from=2026-13-01',
    '/api/pm/reports/workload?from=2026-02-30',
    '/api/pm/reports/workload?to=yesterday',
    '/api/pm/reports/workload?from=0000-01-01',
    `/api/pm/reports/workload?from=${day(1)}&to=${today}`,
    '/api/pm/dashboard?x=1',
  ]) {
    const res = await ctx.as(tenant.adminToken, { method: 'GET', url });
    t.equal(res.statusCode, 400, url);
    t.equal(res.json().code, 'VALIDATION_FAILED', url);
  }
  for (const url of ['/api/pm/reports/progress', '/api/pm/reports/distribution', '/api/pm/reports/workload', '/api/pm/dashboard']) {
    const res = await ctx.as(noPm.token, { method: 'GET', url });
    t.equal(res.statusCode, 403, url);
    t.equal(res.json().code, 'FORBIDDEN', url);
    t.equal((await ctx.app.inject({ method: 'GET', url })).statusCode, 401, `${url} without a token`);
  }
});

t.test('documented in OpenAPI', async (t) => {
  const doc = (await ctx.app.inject({ method: 'GET', url: '/api-docs/json' })).json();
  const ops = {
    '/api/pm/reports/progress': 'pmGetProgressReport',
    '/api/pm/reports/distribution': 'pmGetTaskDistribution',
    '/api/pm/reports/workload': 'pmGetWorkload',
    '/api/pm/dashboard': 'pmGetDashboard',
  };
  for (const [path, id] of Object.entries(ops)) {
    const op = doc.paths[path]?.get;
    t.equal(op?.operationId, id, path);
    t.ok(op?.responses['200'] && op.responses['400'] && op.responses['403'], `${path}: 200, 400 and 403 documented`);
  }
});
