// One run of the report history (/ai/reports/history/:id): what ran (report,
// type, parameters, range, who or what started it), its result as facts and
// tables, or its error; and beside it the report's previous successful run,
// figure by figure (GET /api/ai/report-runs/:id/compare).
import { required, type ConsolePage } from '../../core/plugin-api.ts';
import { labelOf, when } from './page-support.ts';
import { figureLabel, orderFigures, referenceNames, resultView } from './report-result.ts';

type Run = Record<string, any>;

interface Comparison {
  previous: Run | null;
  figures: { figure: string; previous: number | null; current: number | null; delta: number | null }[];
}

const signed = (n: number | null) => (n === null ? '' : n > 0 ? `+${n}` : String(n));
/** a change in words for a screen reader; the sign alone is easy to miss */
const trend = (n: number | null) => (n === null ? 'not comparable' : n > 0 ? `up by ${n}` : n < 0 ? `down by ${-n}` : 'unchanged');

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
    const view = resultView(run.result, names);
    const reportName = report.ok ? report.body.name : run.type;
    return {
      ran: query.ran === '1',
      heading: `${reportName}: run of ${when(run.startedAt)}`,
      reportName,
      reportUrl: report.ok ? `/ai/reports/${run.reportId}` : null,
      historyUrl: `/ai/reports/history?reportId=${encodeURIComponent(run.reportId)}`,
      runUrl: report.ok ? `/ai/reports/${run.reportId}/run` : null,
      failed: run.status === 'failed',
      error: run.error,
      facts: [
        { label: 'Type', text: (types.ok && types.body.items.find((t) => t.name === run.type)?.title) || run.type },
        { label: 'Status', text: labelOf(run.status) },
        { label: 'Range', text: `${run.rangeFrom ? when(run.rangeFrom) : 'From the beginning'} to ${when(run.rangeTo)}` },
        { label: 'Started', text: when(run.startedAt) },
        { label: 'Finished', text: when(run.finishedAt) },
        { label: 'Triggered by', text: run.triggeredBy === 'manual' ? `Manual run${run.runById ? ` by ${names.get(run.runById) ?? run.runById}` : ''}` : 'Schedule' },
        { label: 'Parameters', text: run.parameters && Object.keys(run.parameters).length ? JSON.stringify(run.parameters) : 'Defaults' },
      ],
      result: view,
      raw: run.result ? JSON.stringify(run.result, null, 2) : null,
      comparison: comparison && {
        previous: comparison.previous ? { url: `/ai/reports/history/${comparison.previous.id}`, started: when(comparison.previous.startedAt) } : null,
        figures: orderFigures(comparison.figures).map((f) => ({
          label: figureLabel(f.figure, names),
          previous: f.previous ?? '',
          current: f.current ?? '',
          delta: signed(f.delta),
          trend: trend(f.delta),
          changed: f.delta !== null && f.delta !== 0,
        })),
      },
    };
  },
};
