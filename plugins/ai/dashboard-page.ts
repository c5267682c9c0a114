// The AI dashboard (/ai/dashboard): the sections of GET /api/ai/dashboard as
// cards (tasks, clients, jobs, report runs), tasks by status category and by
// priority as charts with a table each, the clients with their presence and
// last call, the last report runs and the assistant providers' last test.
// Everything is read as the user: a section the API leaves out is left out.
import { required, scriptJson, type ConsolePage, type PageApi } from '../../core/plugin-api.ts';
import { ago, labelOf, when } from './page-support.ts';

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
function series(counts: [string, number, string | null][]) {
  const sum = counts.reduce((a, [, n]) => a + n, 0);
  return counts.map(([key, n, url]) => ({ key, label: labelOf(key), value: n, share: sum ? `${Math.round((100 * n) / sum)} %` : '0 %', url }));
}

function clientRows(items: Record<string, any>[]) {
  const seen = (c: Record<string, any>) => (typeof c.lastSeenAt === 'string' ? Date.parse(c.lastSeenAt) : 0);
  // online first, then the most recently seen; never seen last
  const sorted = [...items].sort((a, b) => Number(b.presence === 'online') - Number(a.presence === 'online') || seen(b) - seen(a));
  return sorted.map((c) => ({
    name: c.name,
    url: `/ai/clients/${c.id}`,
    online: c.presence === 'online',
    status: labelOf(String(c.status)),
    lastSeen: c.lastSeenAt ? when(c.lastSeenAt) : 'Never',
    ago: ago(c.lastSeenAt),
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
    const byCategory = tasks ? series(Object.entries(tasks.byCategory as Record<string, number>).map(([k, n]) => [k, n, `/ai/tasks?category=${k}`])) : null;
    const byPriority = priorities && priorities.every((n) => n !== null) ? series(PRIORITIES.map((p, i) => [p, priorities[i]!, `/ai/tasks?priority=${p}`])) : null;
    const byState = jobs ? series(Object.entries(jobs.byState as Record<string, number>).map(([k, n]) => [k, n, null])) : null;
    const charts = [
      byCategory && { id: 'ai-chart-category', title: 'Tasks by status category', rows: byCategory },
      byPriority && { id: 'ai-chart-priority', title: 'Tasks by priority', rows: byPriority },
    ].filter((c) => c !== null);
    const cards = [
      tasks && { label: 'Tasks', value: tasks.total, url: '/ai/tasks' },
      tasks && { label: 'Overdue tasks', value: tasks.overdue, url: null, alert: tasks.overdue > 0 },
      tasks && { label: 'My open tasks', value: tasks.myOpen, url: null },
      clients && { label: 'Clients online', value: clients.online, url: '/ai/clients' },
      clients && { label: 'Clients offline', value: clients.offline, url: '/ai/clients' },
      jobs && { label: 'Jobs waiting', value: Number(jobs.byState.queued ?? 0) + Number(jobs.byState.leased ?? 0), url: null },
      jobs && { label: 'Dead jobs', value: jobs.byState.dead ?? 0, url: null, alert: (jobs.byState.dead ?? 0) > 0 },
      reports && { label: 'Failed report runs', value: reports.failed, url: '/ai/reports/history?status=failed', alert: reports.failed > 0 },
    ].filter(Boolean);
    return {
      cards,
      charts: charts.map((c) => ({ ...c, summary: `${c.title}: ${c.rows.map((r) => `${r.label} ${r.value}`).join(', ')}` })),
      chartJson: scriptJson(charts.map((c) => ({ id: c.id, title: c.title, labels: c.rows.map((r) => r.label), values: c.rows.map((r) => r.value), urls: c.rows.map((r) => r.url) }))),
      jobs: byState,
      clients: clientList?.ok ? { rows: clientRows(clientList.body.items), total: clientList.body.total, more: clientList.body.total > clientList.body.items.length } : null,
      runs: reports
        ? (reports.last as Record<string, any>[]).map((r) => ({
            url: `/ai/reports/history/${r.id}`,
            report: r.reportName ?? r.type,
            status: labelOf(r.status),
            failed: r.status === 'failed',
            started: when(r.startedAt),
            trigger: labelOf(r.triggeredBy),
          }))
        : null,
      providers: providers.ok
        ? providers.body.items.map((p) => ({
            name: p.name,
            model: p.model,
            enabled: p.enabled ? 'Enabled' : 'Disabled',
            test: p.lastTestAt ? `${p.lastTestOk ? 'Passed' : 'Failed'} ${when(p.lastTestAt)}` : 'Never tested',
            failure: p.lastTestOk === false ? p.lastTestFailure : null,
          }))
        : null,
    };
  },
};
