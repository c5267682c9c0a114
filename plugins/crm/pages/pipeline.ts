// The sales pipeline: opportunities by stage, counted and summed per currency.
// The CRM API has lists only (no aggregate route), so each stage is its own
// filtered list: its `total` is the exact count, and its amounts are summed
// from pages of 1000 rows (only the amount, currency and probability fields),
// at most MAX_ROWS per stage; a stage with more says its sums are partial.
import { required, type PageApi } from '../../../core/plugin-api.ts';
import { addTo, cents, type Money } from './page-kit.ts';

export const STAGES = ['prospecting', 'qualification', 'proposal', 'negotiation', 'won', 'lost'] as const;
export type Stage = (typeof STAGES)[number];
export const OPEN_STAGES: readonly Stage[] = ['prospecting', 'qualification', 'proposal', 'negotiation'];
const PAGE = 1000;
export const MAX_ROWS = 10_000;

export interface StageTotals {
  /** a stage, or null for opportunities without one */
  stage: Stage | null;
  count: number;
  amount: Money;
  /** amount × probability, for the stages still open */
  weighted: Money;
  /** false when the stage holds more than MAX_ROWS rows: its sums cover the first MAX_ROWS */
  complete: boolean;
}

interface Row {
  amount: string | null;
  currency: string;
  probability: number | null;
}
interface Page {
  items: Row[];
  total: number;
  nextCursor: string | null;
}

export async function pipeline(api: PageApi): Promise<StageTotals[]> {
  const stages = await Promise.all([...STAGES.map((s) => stageTotals(api, s)), stageTotals(api, null)]);
  // opportunities without a stage show only when there are some
  return stages.filter((s) => s.stage !== null || s.count > 0);
}

async function stageTotals(api: PageApi, stage: Stage | null): Promise<StageTotals> {
  const filter: Record<string, string> = stage ? { stage } : { 'stage[isNull]': 'true' };
  const totals: StageTotals = { stage, count: 0, amount: new Map(), weighted: new Map(), complete: true };
  let cursor: string | null = null;
  let read = 0;
  do {
    const query = new URLSearchParams({ ...filter, fields: 'amount,currency,probability', size: String(PAGE), ...(cursor ? { cursor } : {}) });
    // the first page decides the page: without it the user may not read opportunities
    const page: Page = required(await api.get<Page>(`/api/crm/opportunities?${query}`));
    totals.count = page.total;
    for (const row of page.items) {
      const amount = cents(row.amount);
      addTo(totals.amount, row.currency ?? '?', amount);
      // in hundredths of a cent until every row is in: rounded once, not once per row
      if (stage && OPEN_STAGES.includes(stage)) addTo(totals.weighted, row.currency ?? '?', amount * BigInt(row.probability ?? 0));
    }
    read += page.items.length;
    cursor = page.nextCursor;
  } while (cursor && read < MAX_ROWS);
  for (const [currency, v] of totals.weighted) totals.weighted.set(currency, (v + 50n) / 100n);
  totals.complete = read >= totals.count;
  return totals;
}
