// One run of the report history (/ai/reports/history/:id): what ran (report,
// type, parameters, range, who or what started it), its result as facts and
// tables, or its error; and beside it the report's previous successful run,
// figure by figure (GET /api/ai/report-runs/:id/compare).
import { required, type ConsolePage, type PageApi } from '../../core/plugin-api.ts';
import { valueLabel, when } from './page-support.ts';
import { figureLabel, orderFigures, referenceNames, resultView } from './report-result.ts';

type Run = Record<string, any>;

interface Comparison {
  previous: Run | null;
  figures: { figure: string; previous: number | null; current: number | null; delta: number | null }[];
}

const signed = (n: number | null) => (n === null ? '' : n > 0 ? `+${n}` : String(n));
/** a change in words for a screen reader; the sign alone is easy to miss */
const trend = (api: PageApi, n: number | null) =>
  n === null ? api.text('run.notComparable') : n > 0 ? api.text('run.upBy', { n }) : n < 0 ? api.text('run.downBy', { n: -n }) : api.text('run.unchanged');

/** who or what started the run, in words */
function trigger(api: PageApi, run: Run, names: Map<string, string>): string {
  if (run.triggeredBy !== 'manual') return valueLabel(api, run.triggeredBy);
  return run.runById ? api.text('run.manualBy', { name: names.get(run.runById) ?? run.runById }) : api.text('run.manual');
}

export const reportRunPage: ConsolePage = {
  view: new URL('./views/report-run.hbs', import.meta.url),
  title: 'Report run',
  async load(api, query, params) {
    const run = required(await api.get<Run>(`/api/ai/report-runs/${encodeURIComponent(params.id)}`));
    const [report, types, compare] = await Promise.all([
      api.get<Run>(`/api/ai/reports/${encodeURIComponent(run.reportId)}`),
      api.get<{ items: { name: string; title: string }[] }>('/api/ai/report-types'),
      run.status === 'succeeded' ? api.get<Comparison>(`/api/ai/report-runs/${encodeURIComponent(run.id)}/compare`) : null,
    ]);
    const comparison = compare?.ok ? compare.body : null;
    const names = await referenceNames(api, { result: run.result, previous: comparison?.previous?.result ?? null }, [['runById', run.runById]]);
    const view = resultView(run.result, names, api.text);
    const reportName = report.ok ? report.body.name : run.type;
    return {
      ran: query.ran === '1',
      heading: api.text('run.heading', { report: reportName, started: when(run.startedAt) }),
      reportName,
      reportUrl: report.ok ? `/ai/reports/${run.reportId}` : null,
      historyUrl: `/ai/reports/history?reportId=${encodeURIComponent(run.reportId)}`,
      runUrl: report.ok ? `/ai/reports/${run.reportId}/run` : null,
      failed: run.status === 'failed',
      error: run.error,
      facts: [
        { label: api.text('common.type'), text: (types.ok && types.body.items.find((t) => t.name === run.type)?.title) || run.type },
        { label: api.text('common.status'), text: valueLabel(api, run.status) },
        {
          label: api.text('common.range'),
          text: run.rangeFrom ? api.text('run.range', { from: when(run.rangeFrom), to: when(run.rangeTo) }) : api.text('run.rangeFromStart', { to: when(run.rangeTo) }),
        },
        { label: api.text('common.started'), text: when(run.startedAt) },
        { label: api.text('run.finished'), text: when(run.finishedAt) },
        { label: api.text('common.triggeredBy'), text: trigger(api, run, names) },
        { label: api.text('run.parameters'), text: run.parameters && Object.keys(run.parameters).length ? JSON.stringify(run.parameters) : api.text('run.defaults') },
      ],
      result: view,
      raw: run.result ? JSON.stringify(run.result, null, 2) : null,
      comparison: comparison && {
        previous: comparison.previous ? { url: `/ai/reports/history/${comparison.previous.id}`, started: when(comparison.previous.startedAt) } : null,
        figures: orderFigures(comparison.figures).map((f) => ({
          label: figureLabel(f.figure, names, api.text),
          previous: f.previous ?? '',
          current: f.current ?? '',
          delta: signed(f.delta),
          trend: trend(api, f.delta),
          changed: f.delta !== null && f.delta !== 0,
        })),
      },
    };
  },
};
