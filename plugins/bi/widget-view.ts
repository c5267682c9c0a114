// One widget of a dashboard as its template draws it: a number (KPI), a table,
// a text (markdown) or a chart, whose values stay in a table for screen readers
// (the chart itself is drawn by assets/dashboard.js with ECharts), or the
// problem the API gave instead of its data. Its words come from the module's
// texts (`text`), in the user's language.
import { markdownBlocks } from './markdown.ts';
import type { Text } from './page-support.ts';

export interface Column {
  name: string;
  type: string;
  label: string;
  role: 'dimension' | 'measure' | 'time';
  /** an amount of money: the column holding each row's currency */
  currency?: string;
}

export interface Result {
  columns: Column[];
  rows: Record<string, string | number | boolean | null>[];
  truncated: boolean;
}

export interface Widget {
  id: string;
  kind: 'chart' | 'number' | 'table' | 'text';
  title: string | null;
  chartType: string | null;
  x: number;
  y: number;
  w: number;
  h: number;
  chart: Record<string, unknown> | null;
  text: string | null;
}

export interface WidgetData {
  widgetId: string;
  data?: Result;
  problem?: { status: number; title: string; detail?: string };
}

/** The chart types, each by its name's key in the module's texts. */
export const CHART_TYPES: Record<string, string> = {
  bar: 'chart.type.bar',
  line: 'chart.type.line',
  area: 'chart.type.area',
  pie: 'chart.type.pie',
  scatter: 'chart.type.scatter',
  stackedBar: 'chart.type.stackedBar',
  funnel: 'chart.type.funnel',
  heatmap: 'chart.type.heatmap',
};

/** the title of a widget that has none ("Chart widget"), by kind */
const UNTITLED: Record<Widget['kind'], string> = { chart: 'widget.untitledChart', number: 'widget.untitledNumber', table: 'widget.untitledTable', text: 'widget.untitledText' };

const numeric = (c: Column) => c.role === 'measure' || c.type === 'integer' || c.type === 'decimal';

/** A value as a cell shows it: numbers grouped, nothing as "(none)" for groups and empty for measures. */
function cellText(c: Column, v: unknown, text: Text): string {
  if (v === null || v === undefined) return numeric(c) ? '' : text('chart.none');
  if (numeric(c) && v !== '' && Number.isFinite(Number(v))) {
    // as many decimals as the API gave (amounts keep their cents), at most four (averages)
    const decimals = typeof v === 'string' ? Math.min(4, v.split('.')[1]?.length ?? 0) : null;
    return Number(v).toLocaleString('en', { minimumFractionDigits: decimals ?? 0, maximumFractionDigits: decimals ?? 4 });
  }
  return String(v);
}

/** Columns and rows as a template's table. */
export function tableOf(result: Result, text: Text) {
  return {
    columns: result.columns.map((c) => ({ name: c.name, type: c.type, label: c.label, numeric: numeric(c) })),
    rows: result.rows.map((r) => result.columns.map((c) => ({ text: cellText(c, r[c.name], text), numeric: numeric(c) }))),
    empty: result.rows.length === 0,
    span: result.columns.length || 1,
    truncated: result.truncated,
  };
}

const CODE = /^[A-Z]{3}$/;

/** An amount with its currency code ("EUR 12,900.00"): as many decimals as the currency has when the widget shows currency. */
function money(column: Column, raw: unknown, code: unknown, format: unknown, text: Text): string {
  if (typeof code !== 'string' || !code) return `${text('chart.none')} ${cellText(column, raw, text)}`;
  if (format !== 'currency' || !CODE.test(code)) return `${code} ${cellText(column, raw, text)}`;
  const digits = new Intl.NumberFormat('en', { style: 'currency', currency: code }).resolvedOptions().maximumFractionDigits;
  return `${code} ${Number(raw).toLocaleString('en', { minimumFractionDigits: digits, maximumFractionDigits: digits })}`;
}

/**
 * The KPI of a number widget: the first measure of the first row, formatted as its chart settings say;
 * an amount of money, one figure per currency ("EUR 12,900.00 · GBP 3,400.00"), never one sum of them.
 */
function numberOf(result: Result, chart: Record<string, unknown> | null, text: Text) {
  const column = result.columns.find((c) => c.role === 'measure') ?? result.columns[0];
  const perCurrency = column?.currency;
  if (perCurrency) {
    // the first row's group (as for any KPI), in each of its currencies
    const group = (r: Result['rows'][number]) => JSON.stringify(result.columns.filter((c) => c.role !== 'measure' && c.name !== perCurrency).map((c) => r[c.name]));
    const first = result.rows[0] && group(result.rows[0]);
    const rows = result.rows.filter((r) => group(r) === first && r[column.name] !== null && Number.isFinite(Number(r[column.name])));
    const value = rows.map((r) => money(column, r[column.name], r[perCurrency], chart?.format, text)).join(' · ');
    return { value: value || '–', label: column.label };
  }
  const raw = column ? result.rows[0]?.[column.name] : undefined;
  if (!column || raw === null || raw === undefined || !Number.isFinite(Number(raw))) return { value: '–', label: column?.label ?? '' };
  const currency = typeof chart?.currency === 'string' && CODE.test(chart.currency) ? chart.currency : null;
  let value = cellText(column, raw, text);
  if (chart?.format === 'currency' && currency) value = Number(raw).toLocaleString('en', { style: 'currency', currency });
  else if (chart?.format === 'percent') value = `${cellText(column, raw, text)} %`;
  return { value, label: column.label };
}

/**
 * One sentence a screen reader says for a chart: its type, what it measures by what,
 * how many groups (as assets/analytics-view.js says it in the browser).
 */
export function chartSummary(chartType: string | null, result: Result, text: Text): string {
  const typeKey = chartType && Object.hasOwn(CHART_TYPES, chartType) ? CHART_TYPES[chartType] : 'chart.anyType';
  const measures = result.columns.filter((c) => c.role === 'measure').map((c) => c.label);
  const dimensions = result.columns.filter((c) => c.role !== 'measure').map((c) => c.label);
  const n = result.rows.length;
  const count = text(n === 1 ? 'chart.oneGroup' : 'chart.groups', { count: n });
  const values = {
    type: text(typeKey),
    measures: measures.length ? measures.join(', ') : text('chart.values'),
    groups: result.truncated ? text('chart.moreNotShown', { groups: count }) : count,
  };
  if (!dimensions.length) return text('chart.summary', values);
  return text('chart.summaryBy', { ...values, dimensions: dimensions.reduce((a, b) => text('chart.and', { a, b })) });
}

export function widgetView(w: Widget, answer: WidgetData | undefined, text: Text) {
  const title = w.title?.trim() || text(UNTITLED[w.kind]);
  const data = answer?.data;
  const problem = answer?.problem ?? (w.kind !== 'text' && !data ? { status: 404, title: text('widget.noData'), detail: text('widget.noDataDetail') } : undefined);
  return {
    id: w.id,
    title,
    kind: w.kind,
    x: w.x,
    y: w.y,
    w: w.w,
    h: w.h,
    // the grid without its script (a CSS grid): the same places
    style: `grid-column: ${w.x + 1} / span ${w.w}; grid-row: ${w.y + 1} / span ${w.h};`,
    problem: problem ? { title: problem.title, detail: problem.detail ?? '' } : null,
    isChart: w.kind === 'chart' && !!data,
    isNumber: w.kind === 'number' && !!data,
    isTable: w.kind === 'table' && !!data,
    isText: w.kind === 'text',
    number: w.kind === 'number' && data ? numberOf(data, w.chart, text) : null,
    table: data && w.kind !== 'number' ? tableOf(data, text) : null,
    summary: w.kind === 'chart' && data ? chartSummary(w.chartType, data, text) : '',
    blocks: w.kind === 'text' ? markdownBlocks(w.text ?? '') : [],
  };
}
