// The project dashboard (/pm/dashboard): the figures of GET /api/pm/dashboard
// as cards, tasks by status category and each project's progress as charts
// (ECharts, drawn by assets/charts.js from options prepared here) with tables
// beside them, tasks by priority, and each assignee's workload over a range of
// days the user picks. Every number is the API's, counted over what the user
// may read.
import { problemText, required, scriptJson, type ConsolePage, type PageApi } from '../../../core/plugin-api.ts';
import { DAY, hours, humanize } from './page-kit.ts';

const CATEGORIES = ['backlog', 'todo', 'in_progress', 'done', 'cancelled'] as const;
type Category = (typeof CATEGORIES)[number];
const COLORS: Record<Category, string> = { backlog: '#94a3b8', todo: '#3b82f6', in_progress: '#f59e0b', done: '#16a34a', cancelled: '#6b7280' };
/** projects drawn in the progress chart (the table lists them all) */
const CHARTED = 12;

interface Dashboard {
  today: string;
  projectsByStatus: Record<'planning' | 'active' | 'completed', number>;
  totalTasks: number;
  myOpenTasks: number;
  overdueTasks: number;
  dueThisWeek: number;
  completedLast7Days: number;
  tasksByCategory: Record<Category, number>;
}
interface Progress {
  projectId: string;
  key: string;
  name: string;
  status: string;
  total: number;
  open: number;
  done: number;
  overdue: number;
  percentDone: number;
  byCategory: Record<Category, number>;
}
interface Workload {
  from: string;
  to: string;
  items: { assigneeId: string | null; assigneeName: string | null; open: number; openEstimate: string; dueInRange: number; completedInRange: number }[];
}

export const dashboardPage: ConsolePage = {
  view: new URL('../views/dashboard.hbs', import.meta.url),
  async load(api, query) {
    const range = new URLSearchParams();
    for (const k of ['from', 'to'] as const) if (query[k] && DAY.test(query[k]!)) range.set(k, query[k]!);
    const [figures, progress, priorities, workload] = await Promise.all([
      api.get<Dashboard>('/api/pm/dashboard'),
      api.get<{ projects: Progress[] }>('/api/pm/reports/progress'),
      priorityCounts(api),
      api.get<Workload>(`/api/pm/reports/workload?${range}`),
    ]);
    // the figures are the page: without them (no project code) there is nothing to show
    const d = required(figures);
    const projects = progress.ok ? progress.body.projects : [];
    const categories = CATEGORIES.map((c) => ({ key: c, label: api.text(`category.${c}`), count: d.tasksByCategory[c], url: `/pm/tasks?category=${c}` }));
    return {
      today: d.today,
      cards: [
        { label: api.text('dashboard.card.activeProjects'), value: d.projectsByStatus.active, url: '/pm/projects?status=active' },
        { label: api.text('dashboard.card.planningProjects'), value: d.projectsByStatus.planning, url: '/pm/projects?status=planning' },
        { label: api.text('dashboard.card.completedProjects'), value: d.projectsByStatus.completed, url: '/pm/projects?status=completed' },
        { label: api.text('dashboard.card.tasks'), value: d.totalTasks, url: '/pm/tasks' },
        { label: api.text('dashboard.card.myOpenTasks'), value: d.myOpenTasks },
        { label: api.text('dashboard.card.overdueTasks'), value: d.overdueTasks, alert: d.overdueTasks > 0 },
        { label: api.text('dashboard.card.dueNext7Days'), value: d.dueThisWeek },
        { label: api.text('dashboard.card.completedLast7Days'), value: d.completedLast7Days },
      ],
      categories,
      categorySummary: api.text('dashboard.categories.summary', {
        categories: categories.map((c) => api.text('dashboard.categories.summaryItem', { label: c.label, count: c.count })).join(', '),
      }),
      progressProblem: progress.ok ? null : problemText(progress.body),
      projects: projects.map((p) => ({
        ...p,
        url: `/pm/projects/${p.projectId}`,
        board: `/pm/projects/${p.projectId}/board`,
        status: api.text(`projectStatus.${p.status}`, undefined, humanize(p.status)),
      })),
      progressSummary: progressSummary(api, projects),
      priorities,
      workload: workload.ok
        ? {
            from: workload.body.from,
            to: workload.body.to,
            rows: workload.body.items.map((i) => ({
              name: i.assigneeId ? (i.assigneeName ?? api.text('common.hiddenUser')) : api.text('common.unassigned'),
              open: i.open,
              estimate: hours(i.openEstimate),
              due: i.dueInRange,
              completed: i.completedInRange,
            })),
          }
        : null,
      workloadProblem: workload.ok ? null : problemText(workload.body),
      range: { from: query.from ?? '', to: query.to ?? '' },
      charts: scriptJson({ 'pm-chart-categories': categoryChart(api, categories), 'pm-chart-progress': progressChart(api, projects) }),
    };
  },
};

async function priorityCounts(api: PageApi) {
  const [counts, names] = await Promise.all([
    api.get<{ items: { key: string | null; count: number }[] }>('/api/pm/reports/distribution?by=priority'),
    api.get<{ items: { id: string; name: string }[] }>('/api/pm/priorities'),
  ]);
  if (!counts.ok) return null;
  const order = names.ok ? names.body.items : counts.body.items.map((i) => ({ id: i.key ?? '', name: i.key ? humanize(i.key) : api.text('common.none') }));
  // highest first, every priority listed (0 when no task has it)
  return [...order]
    .reverse()
    .map((p) => ({ label: api.text(`priority.${p.id}`, undefined, p.name), count: counts.body.items.find((i) => i.key === p.id)?.count ?? 0, url: `/pm/tasks?priority=${p.id}` }));
}

function progressSummary(api: PageApi, projects: Progress[]): string {
  if (!projects.length) return api.text('dashboard.progress.summaryNone');
  const each = projects.map((p) => api.text('dashboard.progress.summaryItem', { key: p.key, percent: p.percentDone, open: p.open, overdue: p.overdue }));
  return api.text('dashboard.progress.summary', { count: projects.length, projects: each.join('; ') });
}

function categoryChart(api: PageApi, categories: { key: Category; label: string; count: number }[]) {
  return {
    tooltip: { trigger: 'axis', axisPointer: { type: 'shadow' } },
    grid: { left: 8, right: 16, top: 16, bottom: 8, containLabel: true },
    xAxis: { type: 'category', data: categories.map((c) => c.label) },
    yAxis: { type: 'value', minInterval: 1 },
    series: [{ name: api.text('common.tasks'), type: 'bar', data: categories.map((c) => ({ value: c.count, itemStyle: { color: COLORS[c.key] } })) }],
  };
}

function progressChart(api: PageApi, projects: Progress[]) {
  const shown = [...projects]
    .sort((a, b) => b.total - a.total)
    .slice(0, CHARTED)
    .reverse();
  return {
    tooltip: { trigger: 'axis', axisPointer: { type: 'shadow' } },
    legend: { top: 0 },
    grid: { left: 8, right: 16, top: 32, bottom: 8, containLabel: true },
    xAxis: { type: 'value', minInterval: 1 },
    yAxis: { type: 'category', data: shown.map((p) => p.key) },
    series: CATEGORIES.map((c) => ({ name: api.text(`category.${c}`), type: 'bar', stack: 'tasks', itemStyle: { color: COLORS[c] }, data: shown.map((p) => p.byCategory[c]) })),
  };
}
