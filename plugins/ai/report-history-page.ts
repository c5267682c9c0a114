// The report history (/ai/reports/history): every run of the reports the user
// may read (GET /api/ai/report-runs), newest first, a page at a time,
// filtered by report, status and trigger; each run opens with its result and
// its comparison with the run before it.
import { required, type ConsolePage } from '../../core/plugin-api.ts';
import { isUuid, valueLabel, when } from './page-support.ts';

const SIZES = [10, 25, 50, 100];
/** reports offered in the filter at most; a report of a run beyond them is read by itself */
const REPORTS_LISTED = 200;
const STATUSES = ['succeeded', 'failed'];
const TRIGGERS = ['manual', 'schedule'];

type Row = Record<string, any>;

const choice = (value: string | undefined, allowed: string[]) => (value && allowed.includes(value) ? value : '');

export const reportHistoryPage: ConsolePage = {
  view: new URL('./views/report-history.hbs', import.meta.url),
  title: 'Report history',
  async load(api, query) {
    const page = Math.min(100_000, Math.max(1, Number.parseInt(query.page ?? '1', 10) || 1));
    const size = SIZES.includes(Number(query.size)) ? Number(query.size) : 25;
    const status = choice(query.status, STATUSES);
    const triggeredBy = choice(query.triggeredBy, TRIGGERS);
    // a report id that is no id is a bad address (the API's 400)
    const reportId = query.reportId ?? '';
    const filters: Record<string, string> = { ...(reportId ? { reportId } : {}), ...(status ? { status } : {}), ...(triggeredBy ? { triggeredBy } : {}) };
    const [runs, reports] = await Promise.all([
      api.get<{ items: Row[]; total: number }>(`/api/ai/report-runs?${new URLSearchParams({ sort: '-startedAt', page: String(page), size: String(size), ...filters })}`),
      api.get<{ items: Row[] }>(`/api/ai/reports?size=${REPORTS_LISTED}&sort=name`),
    ]);
    required(runs);
    const names = new Map((reports.ok ? reports.body.items : []).map((r) => [r.id as string, r.name as string]));
    const missing = [...new Set(runs.body.items.map((r) => r.reportId as string))].filter((id) => !names.has(id));
    await Promise.all(
      missing.map(async (id) => {
        const one = await api.get<Row>(`/api/ai/reports/${id}`);
        if (one.ok) names.set(id, one.body.name);
      }),
    );
    const { total } = runs.body;
    const pages = Math.max(1, Math.ceil(total / size));
    const link = (p: number) => `/ai/reports/history?${new URLSearchParams({ ...filters, ...(size === 25 ? {} : { size: String(size) }), ...(p === 1 ? {} : { page: String(p) }) })}`;
    const options = (values: string[], chosen: string) => values.map((v) => ({ value: v, label: valueLabel(api, v), selected: v === chosen }));
    const chosenReport = isUuid(reportId) ? names.get(reportId) : undefined;
    return {
      // the general history's heading is its page title, translated with it
      heading: chosenReport ? api.text('history.headingOf', { report: chosenReport }) : api.text('page.ai.reports.history'),
      caption: chosenReport ? api.text('history.captionOf', { report: chosenReport, total }) : api.text('history.caption', { total }),
      reports: [...names].map(([id, name]) => ({ value: id, label: name, selected: id === reportId })),
      statuses: options(STATUSES, status),
      triggers: options(TRIGGERS, triggeredBy),
      sizes: SIZES.map((n) => ({ n, selected: n === size })),
      filtered: Object.keys(filters).length > 0,
      rows: runs.body.items.map((r) => ({
        url: `/ai/reports/history/${r.id}`,
        report: names.get(r.reportId) ?? r.type,
        started: when(r.startedAt),
        range: api.text('history.rangeFromTo', { from: r.rangeFrom ? when(r.rangeFrom) : api.text('history.beginning'), to: when(r.rangeTo) }),
        status: valueLabel(api, r.status),
        failed: r.status === 'failed',
        trigger: valueLabel(api, r.triggeredBy),
      })),
      total,
      pageNo: page,
      pages,
      prevUrl: page > 1 ? link(page - 1) : null,
      nextUrl: page < pages ? link(page + 1) : null,
    };
  },
};

/** One report's history (/ai/reports/:id/history, linked as "History" from the report's page). */
export const oneReportHistoryPage: ConsolePage = {
  ...reportHistoryPage,
  title: 'History',
  async load(api, query, params) {
    // an unknown report is a 404, not an empty history
    required(await api.get(`/api/ai/reports/${encodeURIComponent(params.id)}`));
    return reportHistoryPage.load(api, { ...query, reportId: params.id }, params);
  },
};
