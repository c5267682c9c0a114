// One widget of a dashboard as its template draws it: a number (KPI), a table,
// a text (markdown) or a chart, whose values stay in a table for screen readers
// (the chart itself is drawn by assets/dashboard.js with ECharts), or the
// problem the API gave instead of its data.
import { markdownBlocks } from './markdown.ts';

export interface Column {
  name: string;
  type: string;
  label: string;
  role: 'dimension' | 'measure' | 'time';
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

export const CHART_TYPES: Record<string, string> = {
  bar: 'Bar',
  line: 'Line',
  area: 'Area',
  pie: 'Pie',
  scatter: 'Scatter',
  stackedBar: 'Stacked bar',
  funnel: 'Funnel',
  heatmap: 'Heat map',
};

const KINDS: Record<Widget['kind'], string> = { chart: 'Chart', number: 'Number', table: 'Table', text: 'Text' };

const numeric = (c: Column) => c.role === 'measure' || c.type === 'integer' || c.type === 'decimal';

/** A value as a cell shows it: numbers grouped, nothing as "(none)" for groups and empty for measures. */
function cellText(c: Column, v: unknown): string {
  if (v === null || v === undefined) return numeric(c) ? '' : '(none)';
  if (numeric(c) && v !== '' && Number.isFinite(Number(v))) {
    // as many decimals as the API gave (amounts keep their cents), at most four (averages)
    const decimals = typeof v === 'string' ? Math.min(4, v.split('.')[1]?.length ?? 0) : null;
    return Number(v).toLocaleString('en', { minimumFractionDigits: decimals ?? 0, maximumFractionDigits: decimals ?? 4 });
  }
  return String(v);
}

/** Columns and rows as a template's table. */
export function tableOf(result: Result) {
  return {
    columns: result.columns.map((c) => ({ name: c.name, type: c.type, label: c.label, numeric: numeric(c) })),
    rows: result.rows.map((r) => result.columns.map((c) => ({ text: cellText(c, r[c.name]), numeric: numeric(c) }))),
    empty: result.rows.length === 0,
    span: result.columns.length || 1,
    truncated: result.truncated,
  };
}

/** The KPI of a number widget: the first measure of the first row, formatted as its chart settings say. */
function numberOf(result: Result, chart: Record<string, unknown> | null) {
  const column = result.columns.find((c) => c.role === 'measure') ?? result.columns[0];
  const raw = column ? result.rows[0]?.[column.name] : undefined;
  if (!column || raw === null || raw === undefined || !Number.isFinite(Number(raw))) return { value: '–', label: column?.label ?? '' };
  const currency = typeof chart?.currency === 'string' && /^[A-Z]{3}$/.test(chart.currency) ? chart.currency : null;
  let value = cellText(column, raw);
  if (chart?.format === 'currency' && currency) value = Number(raw).toLocaleString('en', { style: 'currency', currency });
  else if (chart?.format === 'percent') value = `${cellText(column, raw)} %`;
  return { value, label: column.label };
}

/** One sentence a screen reader says for a chart: its type, what it measures by what, how many groups. */
export function chartSummary(chartType: string | null, result: Result): string {
  const type = CHART_TYPES[chartType ?? ''] ?? 'A';
  const measures = result.columns.filter((c) => c.role === 'measure').map((c) => c.label);
  const groups = result.columns.filter((c) => c.role !== 'measure').map((c) => c.label);
  const what = measures.length ? measures.join(', ') : 'values';
  const by = groups.length ? ` by ${groups.join(' and ')}` : '';
  const n = result.rows.length;
  return `${type} chart of ${what}${by}: ${n} ${n === 1 ? 'group' : 'groups'}${result.truncated ? ' (more not shown)' : ''}; the values follow as a table.`;
}

export function widgetView(w: Widget, answer: WidgetData | undefined) {
  const title = w.title?.trim() || `${KINDS[w.kind]} widget`;
  const data = answer?.data;
  const problem = answer?.problem ?? (w.kind !== 'text' && !data ? { status: 404, title: 'No data', detail: 'the sheet answered no data for this widget; reload the page' } : undefined);
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
    number: w.kind === 'number' && data ? numberOf(data, w.chart) : null,
    table: data && w.kind !== 'number' ? tableOf(data) : null,
    summary: w.kind === 'chart' && data ? chartSummary(w.chartType, data) : '',
    blocks: w.kind === 'text' ? markdownBlocks(w.text ?? '') : [],
  };
}
