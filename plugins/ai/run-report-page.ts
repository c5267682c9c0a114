// Run a report now (/ai/reports/:id/run, linked as "Run" from the report's
// page): the report, its type and last runs, and a form whose script runs it
// over an optional range (POST /api/ai/reports/:id/run) and opens the run
// with its result.
import { required, scriptJson, type ConsolePage } from '../../core/plugin-api.ts';
import { labelOf, when } from './page-support.ts';

const LAST_RUNS = 5;

type Row = Record<string, any>;

export const runReportPage: ConsolePage = {
  view: new URL('./views/run-report.hbs', import.meta.url),
  title: 'Run',
  async load(api, _query, params) {
    const id = encodeURIComponent(params.id);
    const report = required(await api.get<Row>(`/api/ai/reports/${id}`));
    const [types, runs] = await Promise.all([
      api.get<{ items: { name: string; title: string; description: string }[] }>('/api/ai/report-types'),
      api.get<{ items: Row[]; total: number }>(`/api/ai/report-runs?reportId=${id}&sort=-startedAt&size=${LAST_RUNS}`),
    ]);
    const type = types.ok ? types.body.items.find((t) => t.name === report.type) : undefined;
    return {
      name: report.name,
      reportUrl: `/ai/reports/${report.id}`,
      type: type?.title ?? report.type,
      description: type?.description ?? null,
      schedule: report.schedule ? `${report.schedule}${report.enabled ? '' : ' (paused)'}` : 'On demand only',
      lastScheduledAt: report.lastScheduledAt ? when(report.lastScheduledAt) : null,
      runs: runs.ok
        ? runs.body.items.map((r) => ({ url: `/ai/reports/history/${r.id}`, started: when(r.startedAt), status: labelOf(r.status), failed: r.status === 'failed', trigger: labelOf(r.triggeredBy) }))
        : null,
      more: runs.ok && runs.body.total > runs.body.items.length,
      historyUrl: `/ai/reports/history?reportId=${id}`,
      json: scriptJson({ id: report.id }),
    };
  },
};
