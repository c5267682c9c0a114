// The AI dashboard (/ai/dashboard): the sections of GET /api/ai/dashboard as
// cards (tasks, clients, jobs, report runs), tasks by status category and by
// priority as charts with a table each, the clients with their presence and
// last call, the last report runs and the assistant providers' last test.
// Everything is read as the user: a section the API leaves out is left out.
import { required, scriptJson, type ConsolePage, type PageApi } from '../../core/plugin-api.ts';
import { ago, valueLabel, when } from './page-support.ts';

const PRIORITIES = ['critical', 'high', 'normal', 'low'];
const CLIENTS_SHOWN = 50;

interface Section {
  key: string;
  title: string;
  figures: Record<string, any>;
}

const totalOf = async (api: PageApi, url: string): Promise<number | null> => {
  const res = await api.get<{ total: number }>(url);
  return res.ok ? res.body.total : null;
};

/** A chart's rows: label, count, share and where the rows are listed. */
function series(api: PageApi, counts: [string, number, string | null][]) {
  const sum = counts.reduce((a, [, n]) => a + n, 0);
  return counts.map(([key, n, url]) => ({ key, label: valueLabel(api, key), value: n, share: sum ? `${Math.round((100 * n) / sum)} %` : '0 %', url }));
}

function clientRows(api: PageApi, items: Record<string, any>[]) {
  const seen = (c: Record<string, any>) => (typeof c.lastSeenAt === 'string' ? Date.parse(c.lastSeenAt) : 0);
  // online first, then the most recently seen; never seen last
  const sorted = [...items].sort((a, b) => Number(b.presence === 'online') - Number(a.presence === 'online') || seen(b) - seen(a));
  return sorted.map((c) => ({
    name: c.name,
    url: `/ai/clients/${c.id}`,
    online: c.presence === 'online',
    status: valueLabel(api, String(c.status)),
    lastSeen: c.lastSeenAt ? when(c.lastSeenAt) : api.text('dashboard.never'),
    ago: ago(api, c.lastSeenAt),
  }));
}

export const aiDashboardPage: ConsolePage = {
  view: new URL('./views/dashboard.hbs', import.meta.url),
  title: 'AI dashboard',
  async load(api) {
    const dashboard = required(await api.get<{ sections: Section[] }>('/api/ai/dashboard'));
    const sections = new Map(dashboard.sections.map((s) => [s.key, s.figures]));
    const tasks = sections.get('tasks');
    const clients = sections.get('clients');
    const jobs = sections.get('jobs');
    const reports = sections.get('reports');
    const [clientList, providers, priorities] = await Promise.all([
      clients ? api.get<{ items: Record<string, any>[]; total: number }>(`/api/ai/clients?size=${CLIENTS_SHOWN}&sort=-lastSeenAt`) : null,
      api.get<{ items: Record<string, any>[] }>('/api/ai/providers?size=20&sort=name'),
      tasks ? Promise.all(PRIORITIES.map((p) => totalOf(api, `/api/ai/tasks?priority=${p}&size=1`))) : null,
    ]);
    const rowsOf = (counts: [string, number, string | null][]) => series(api, counts);
    const byCategory = tasks ? rowsOf(Object.entries(tasks.byCategory as Record<string, number>).map(([k, n]) => [k, n, `/ai/tasks?category=${k}`])) : null;
    const byPriority = priorities && priorities.every((n) => n !== null) ? rowsOf(PRIORITIES.map((p, i) => [p, priorities[i]!, `/ai/tasks?priority=${p}`])) : null;
    const byState = jobs ? rowsOf(Object.entries(jobs.byState as Record<string, number>).map(([k, n]) => [k, n, null])) : null;
    const charts = [
      byCategory && { id: 'ai-chart-category', title: api.text('dashboard.tasksByCategory'), rows: byCategory },
      byPriority && { id: 'ai-chart-priority', title: api.text('dashboard.tasksByPriority'), rows: byPriority },
    ].filter((c) => c !== null);
    const cards = [
      tasks && { label: api.text('dashboard.tasks'), value: tasks.total, url: '/ai/tasks' },
      tasks && { label: api.text('dashboard.overdueTasks'), value: tasks.overdue, url: null, alert: tasks.overdue > 0 },
      tasks && { label: api.text('dashboard.myOpenTasks'), value: tasks.myOpen, url: null },
      clients && { label: api.text('dashboard.clientsOnline'), value: clients.online, url: '/ai/clients' },
      clients && { label: api.text('dashboard.clientsOffline'), value: clients.offline, url: '/ai/clients' },
      jobs && { label: api.text('dashboard.jobsWaiting'), value: Number(jobs.byState.queued ?? 0) + Number(jobs.byState.leased ?? 0), url: null },
      jobs && { label: api.text('dashboard.deadJobs'), value: jobs.byState.dead ?? 0, url: null, alert: (jobs.byState.dead ?? 0) > 0 },
      reports && { label: api.text('dashboard.failedRuns'), value: reports.failed, url: '/ai/reports/history?status=failed', alert: reports.failed > 0 },
    ].filter(Boolean);
    return {
      cards,
      charts: charts.map((c) => ({ ...c, summary: api.text('dashboard.chartSummary', { chart: c.title, values: c.rows.map((r) => `${r.label} ${r.value}`).join(', ') }) })),
      chartJson: scriptJson(charts.map((c) => ({ id: c.id, title: c.title, labels: c.rows.map((r) => r.label), values: c.rows.map((r) => r.value), urls: c.rows.map((r) => r.url) }))),
      jobs: byState,
      clients: clientList?.ok ? { rows: clientRows(api, clientList.body.items), total: clientList.body.total, more: clientList.body.total > clientList.body.items.length } : null,
      runs: reports
        ? (reports.last as Record<string, any>[]).map((r) => ({
            url: `/ai/reports/history/${r.id}`,
            report: r.reportName ?? r.type,
            status: valueLabel(api, r.status),
            failed: r.status === 'failed',
            started: when(r.startedAt),
            trigger: valueLabel(api, r.triggeredBy),
          }))
        : null,
      providers: providers.ok
        ? providers.body.items.map((p) => ({
            name: p.name,
            model: p.model,
            enabled: api.text(p.enabled ? 'dashboard.enabled' : 'dashboard.disabled'),
            test: p.lastTestAt ? api.text(p.lastTestOk ? 'dashboard.testPassed' : 'dashboard.testFailed', { at: when(p.lastTestAt) }) : api.text('dashboard.neverTested'),
            failure: p.lastTestOk === false ? p.lastTestFailure : null,
          }))
        : null,
    };
  },
};
