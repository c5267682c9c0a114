// The CRM dashboard (/crm/dashboard), in the user's current company: the
// pipeline by stage (count, amount and weighted amount per currency) as an
// ECharts chart with a table beside it, won and lost deals with the win rate,
// the open opportunities closing next, and the activities due (open, due today
// or earlier). Read through the CRM list API as the user.
import { problemText, scriptJson, type ConsolePage, type PageApi } from '../../../core/plugin-api.ts';
import { cents, formatSums, type Money } from './page-kit.ts';
import { MAX_ROWS, OPEN_STAGES, pipeline, type StageTotals } from './pipeline.ts';

const DUE_ROWS = 20;
const CLOSING_ROWS = 5;

/** A stage's or an activity type's text in the user's language; a value the texts lack shows capitalized. */
function valueText(api: PageApi, group: 'stage' | 'activityType', value: string | null): string {
  return api.text(`${group}.${value ?? 'none'}`, undefined, value ? value.charAt(0).toUpperCase() + value.slice(1) : undefined);
}

export const dashboardPage: ConsolePage = {
  view: new URL('../views/dashboard.hbs', import.meta.url),
  async load(api) {
    // the API knows no "today" of the tenant for CRM dates: the server's day (UTC) stands in
    const today = new Date().toISOString().slice(0, 10);
    const [stages, due, closing, leads] = await Promise.all([pipeline(api), activitiesDue(api, today), closingNext(api), openLeads(api)]);
    const byStage = (s: string) => stages.find((t) => t.stage === s);
    const open = stages.filter((s) => s.stage && OPEN_STAGES.includes(s.stage));
    const won = byStage('won')!;
    const lost = byStage('lost')!;
    const decided = won.count + lost.count;
    const stageText = (stage: string | null) => valueText(api, 'stage', stage);
    const sums = (money: Money) => formatSums(money, api.text('common.none'));
    return {
      today,
      cards: [
        { label: api.text('dashboard.openOpportunities'), value: String(open.reduce((n, s) => n + s.count, 0)), detail: sums(merge(open.map((s) => s.amount))), url: '/crm/opportunities' },
        { label: api.text('dashboard.weightedPipeline'), value: sums(merge(open.map((s) => s.weighted))) },
        { label: api.text('dashboard.won'), value: String(won.count), detail: sums(won.amount), url: '/crm/opportunities?stage=won' },
        { label: api.text('dashboard.lost'), value: String(lost.count), detail: sums(lost.amount), url: '/crm/opportunities?stage=lost' },
        { label: api.text('dashboard.winRate'), value: decided ? `${Math.round((1000 * won.count) / decided) / 10} %` : api.text('dashboard.noneYet') },
        ...(due.total === null ? [] : [{ label: api.text('dashboard.activitiesDue'), value: String(due.total), url: '/crm/activities?status=open', alert: due.total > 0 }]),
        ...(leads === null ? [] : [{ label: api.text('dashboard.openLeads'), value: String(leads), url: '/crm/leads' }]),
      ],
      stages: stages.map((s) => ({
        label: stageText(s.stage),
        url: s.stage ? `/crm/opportunities?stage=${s.stage}` : null,
        count: s.count,
        amount: sums(s.amount),
        weighted: s.stage && OPEN_STAGES.includes(s.stage) ? sums(s.weighted) : '',
        partial: !s.complete,
      })),
      partial: stages.some((s) => !s.complete) ? MAX_ROWS : null,
      pipelineSummary: api.text('dashboard.pipelineSummary', { stages: stages.map((s) => `${stageText(s.stage)} ${s.count} (${sums(s.amount)})`).join('; ') }),
      hasOpportunities: stages.some((s) => s.count > 0),
      due,
      closing,
      charts: scriptJson({ 'crm-chart-pipeline': pipelineChart(api, stages) }),
    };
  },
};

function merge(all: Money[]): Money {
  const out: Money = new Map();
  for (const m of all) for (const [c, v] of m) out.set(c, (out.get(c) ?? 0n) + v);
  return out;
}

/** One bar series per currency: amounts of different currencies are never added up. */
function pipelineChart(api: PageApi, stages: StageTotals[]) {
  const currencies = [...new Set(stages.flatMap((s) => [...s.amount.keys()]))].sort();
  return {
    tooltip: { trigger: 'axis', axisPointer: { type: 'shadow' } },
    legend: { top: 0 },
    grid: { left: 8, right: 16, top: 32, bottom: 8, containLabel: true },
    xAxis: { type: 'category', data: stages.map((s) => `${valueText(api, 'stage', s.stage)} (${s.count})`) },
    yAxis: { type: 'value', name: api.text('dashboard.amount') },
    series: currencies.map((c) => ({ name: c, type: 'bar', data: stages.map((s) => Number(s.amount.get(c) ?? 0n) / 100) })),
  };
}

type Related = { id: string; name?: string; title?: string } | null | undefined;
interface Activity {
  id: string;
  type: string;
  subject: string;
  dueDate: string;
  customerId: string | null;
  leadId: string | null;
  opportunityId: string | null;
  _embedded?: { customer?: Related; lead?: Related; opportunity?: Related; owner?: Related };
}

async function activitiesDue(api: PageApi, today: string) {
  const query = new URLSearchParams({ status: 'open', 'dueDate[lte]': today, sort: 'dueDate', size: String(DUE_ROWS), include: 'customerId,leadId,opportunityId,ownerId' });
  const res = await api.get<{ items: Activity[]; total: number }>(`/api/crm/activities?${query}`);
  // not allowed to read activities: the section is left out; another refusal is shown
  if (!res.ok) return { total: null, rows: [], hidden: res.status === 403, problem: res.status === 403 ? null : problemText(res.body) };
  const days = (d: string) => Math.round((Date.parse(today) - Date.parse(d)) / 86_400_000);
  return {
    total: res.body.total,
    more: res.body.total > res.body.items.length,
    rows: res.body.items.map((a) => {
      const e = a._embedded ?? {};
      const about = e.opportunity
        ? { text: e.opportunity.name, url: `/crm/opportunities/${a.opportunityId}` }
        : e.customer
          ? { text: e.customer.name, url: `/crm/customers/${a.customerId}` }
          : e.lead
            ? { text: e.lead.title, url: `/crm/leads/${a.leadId}` }
            : null;
      const late = days(a.dueDate);
      return {
        url: `/crm/activities/${a.id}`,
        subject: a.subject,
        type: valueText(api, 'activityType', a.type),
        due: a.dueDate,
        late: late > 1 ? api.text('dashboard.overdueDays', { days: late }) : late === 1 ? api.text('dashboard.overdueOneDay') : api.text('dashboard.today'),
        overdue: late > 0,
        about,
        owner: e.owner?.name ?? '',
      };
    }),
    hidden: false,
    problem: null,
  };
}

async function closingNext(api: PageApi) {
  const query = new URLSearchParams({ 'stage[in]': OPEN_STAGES.join(','), sort: 'expectedCloseDate', size: String(CLOSING_ROWS), include: 'customerId' });
  const res = await api.get<{
    items: { id: string; name: string; stage: string; amount: string | null; currency: string; expectedCloseDate: string | null; customerId: string; _embedded?: { customer?: Related } }[];
  }>(`/api/crm/opportunities?${query}`);
  if (!res.ok) return null;
  return res.body.items.map((o) => ({
    url: `/crm/opportunities/${o.id}`,
    name: o.name,
    customer: o._embedded?.customer?.name ?? '',
    customerUrl: o._embedded?.customer ? `/crm/customers/${o.customerId}` : null,
    stage: valueText(api, 'stage', o.stage),
    amount: o.amount === null ? '' : formatSums(new Map([[o.currency, cents(o.amount)]]), api.text('common.none')),
    close: o.expectedCloseDate ?? '',
  }));
}

async function openLeads(api: PageApi): Promise<number | null> {
  const res = await api.get<{ total: number }>('/api/crm/leads?status[in]=new,contacted,qualified&size=1');
  return res.ok ? res.body.total : null;
}
