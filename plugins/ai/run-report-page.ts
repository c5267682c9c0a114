// Run a report now (/ai/reports/:id/run, linked as "Run" from the report's
// page): the report, its type and last runs, and a form whose script runs it
// over an optional range (POST /api/ai/reports/:id/run) and opens the run
// with its result. The script's words are given as #ai-run-texts.
import { required, scriptJson, type ConsolePage } from '../../core/plugin-api.ts';
import { valueLabel, when } from './page-support.ts';

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
      schedule: report.schedule ? (report.enabled ? report.schedule : api.text('runReport.paused', { schedule: report.schedule })) : api.text('runReport.onDemand'),
      lastScheduledAt: report.lastScheduledAt ? when(report.lastScheduledAt) : null,
      runs: runs.ok
        ? runs.body.items.map((r) => ({
            url: `/ai/reports/history/${r.id}`,
            started: when(r.startedAt),
            status: valueLabel(api, r.status),
            failed: r.status === 'failed',
            trigger: valueLabel(api, r.triggeredBy),
          }))
        : null,
      more: runs.ok && runs.body.total > runs.body.items.length,
      historyUrl: `/ai/reports/history?reportId=${id}`,
      json: scriptJson({ id: report.id }),
      // what run-report.js shows, by the names it reads; {name}s are its to fill
      texts: scriptJson({
        rangeBackwards: api.text('runReport.rangeBackwards'),
        fromBeforeTo: api.text('runReport.fromBeforeTo'),
        running: api.text('runReport.running'),
        openingFailed: api.text('runReport.openingFailed'),
        openingResult: api.text('runReport.openingResult'),
        notRun: api.text('runReport.notRun'),
        notRunUnreachable: api.text('runReport.notRunUnreachable'),
        serverAnswered: api.text('common.serverAnswered'),
      }),
    };
  },
};
