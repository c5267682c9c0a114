// The analytics builder's plain form (a GET with its choices in the address)
// and the query of the query language it stands for; the API's field errors
// (JSON pointers into that query) pointed back at the form's controls; a
// saved query turned back into the form's choices.
// assets/analytics.js builds the same query from the same form in the browser.
import { granularityLabel, measureLabel, type Option, type TableFields } from './analytics-fields.ts';
import type { Text } from './page-support.ts';

export type FormQuery = Record<string, string | string[] | undefined>;

export interface BuilderState {
  /** the application whose data sources and saved queries the query may read, or '' */
  app: string;
  table: string;
  measures: string[];
  dimensions: string[];
  time: { field: string; granularity: string; from: string; to: string };
  filters: { field: string; op: string; value: string }[];
  sort: string;
  dir: 'asc' | 'desc';
  limit: string;
  chart: string;
  run: boolean;
}

const all = (v: string | string[] | undefined): string[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);
const one = (v: string | string[] | undefined): string => (Array.isArray(v) ? (v[0] ?? '') : (v ?? '')).trim();

/** The builder's choices as the address carries them; a table alone starts with a count of its rows. */
export function stateOf(q: FormQuery): BuilderState {
  const run = one(q.run) !== '';
  const measures = all(q.m).filter(Boolean);
  const ops = all(q.fo);
  const values = all(q.fv);
  return {
    app: one(q.app),
    table: one(q.table),
    measures: measures.length || run ? measures : ['count'],
    dimensions: all(q.d).filter(Boolean),
    time: { field: one(q.t), granularity: one(q.g), from: one(q.from), to: one(q.to) },
    filters: all(q.ff)
      .map((field, i) => ({ field, op: ops[i] ?? 'equals', value: values[i] ?? '' }))
      .filter((f) => f.field),
    sort: one(q.sort),
    dir: one(q.dir) === 'desc' ? 'desc' : 'asc',
    limit: one(q.limit),
    chart: q.chart === undefined ? 'bar' : one(q.chart),
    run,
  };
}

/** A filter's text as the value its field takes: integers and booleans as such, the rest as text. */
function filterValue(type: string | undefined, text: string): string | number | boolean {
  if (type === 'integer' && /^-?\d+$/.test(text)) return Number(text);
  if (type === 'boolean' && /^(true|false)$/i.test(text)) return text.toLowerCase() === 'true';
  return text;
}

export interface Control {
  pointer: string;
  id: string;
  label: string;
}

/** The query the state stands for, and which control each part of it came from (named as `text` says). */
export function buildQuery(state: BuilderState, fields: TableFields, text: Text): { query: Record<string, unknown>; controls: Control[] } {
  const controls: Control[] = [
    { pointer: '/table', id: 'bi-table', label: text('control.table') },
    { pointer: '/measures', id: 'bi-m-0', label: text('control.measures') },
    { pointer: '/limit', id: 'bi-limit', label: text('control.limit') },
    { pointer: '/order', id: 'bi-sort', label: text('control.sort') },
  ];
  const query: Record<string, unknown> = { table: state.table };
  if (state.app) {
    controls.push({ pointer: '/app', id: 'bi-app', label: text('control.app') });
    query.app = state.app;
  }
  if (state.measures.length) {
    query.measures = state.measures.map((m, i) => {
      controls.push({ pointer: `/measures/${i}`, id: `bi-m-${i}`, label: text('control.measure', { number: i + 1 }) });
      const [agg, field] = m.split(':');
      return field ? { agg, field } : { agg };
    });
  }
  if (state.dimensions.length) {
    query.dimensions = state.dimensions.map((d, i) => {
      controls.push({ pointer: `/dimensions/${i}`, id: `bi-d-${i}`, label: text('control.groupBy', { number: i + 1 }) });
      return d;
    });
  }
  const { field, granularity, from, to } = state.time;
  if (field) {
    controls.push(
      { pointer: '/timeDimensions/0', id: 'bi-time', label: text('control.time') },
      { pointer: '/timeDimensions/0/granularity', id: 'bi-granularity', label: text('control.period') },
      { pointer: '/timeDimensions/0/dateRange', id: from ? 'bi-to' : 'bi-from', label: text('control.dateRange') },
    );
    query.timeDimensions = [{ field, ...(granularity ? { granularity } : {}), ...(from || to ? { dateRange: [from, to] } : {}) }];
  }
  if (state.filters.length) {
    query.filters = state.filters.map((f, i) => {
      const number = i + 1;
      controls.push(
        { pointer: `/filters/${i}`, id: `bi-ff-${i}`, label: text('control.filter', { number }) },
        { pointer: `/filters/${i}/op`, id: `bi-fo-${i}`, label: text('control.filter', { number }) },
        { pointer: `/filters/${i}/value`, id: `bi-fv-${i}`, label: text('control.filterValue', { number }) },
        { pointer: `/filters/${i}/values`, id: `bi-fv-${i}`, label: text('control.filterValues', { number }) },
      );
      const type = fields.byPath.get(f.field)?.type;
      if (f.op === 'set' || f.op === 'notSet') return { field: f.field, op: f.op };
      if (f.op === 'in' || f.op === 'notIn') {
        const values = f.value
          .split(',')
          .map((v) => v.trim())
          .filter(Boolean);
        return { field: f.field, op: f.op, ...(values.length ? { values: values.map((v) => filterValue(type, v)) } : {}) };
      }
      return { field: f.field, op: f.op, value: filterValue(type, f.value) };
    });
  }
  if (state.sort) query.order = [{ by: state.sort, dir: state.dir }];
  if (state.limit) query.limit = /^\d+$/.test(state.limit) ? Number(state.limit) : state.limit;
  return { query, controls };
}

/** The API's field errors as links to the controls they are about (the longest pointer that contains the error's). */
export function errorLinks(errors: { path: string; message: string }[], controls: Control[], text: Text) {
  return errors.map((e) => {
    const control = controls.filter((c) => e.path === c.pointer || e.path.startsWith(`${c.pointer}/`)).sort((a, b) => b.pointer.length - a.pointer.length)[0];
    const where = control?.label ?? (e.path || text('result.query'));
    return { id: control?.id ?? null, text: text('result.errorAt', { control: where, message: e.message }) };
  });
}

/**
 * A widget's default title for the query: "Sheet: Count of rows by Application › Name"
 * (as assets/analytics.js says it from the builder's choices), at most 200 characters.
 */
export function querySummary(state: BuilderState, fields: TableFields, text: Text): string {
  const measures = state.measures.map((m) => measureLabel(fields, m, text));
  const groups = state.dimensions.map((d) => fields.byPath.get(d)?.label ?? d);
  const { field, granularity } = state.time;
  if (field && granularity) groups.push(`${fields.byPath.get(field)?.label ?? field} (${granularityLabel(granularity, text)})`);
  const values = { table: fields.table.label, measures: measures.join(', ') || text('chart.values') };
  const summary = groups.length ? text('addWidgetScript.summaryBy', { ...values, groups: groups.reduce((a, b) => text('chart.and', { a, b })) }) : text('addWidgetScript.summary', values);
  return summary.slice(0, 200);
}

/** The result's columns the query will answer, as its sort may name them. */
export function resultColumns(state: BuilderState, fields: TableFields, text: Text): Option[] {
  const out: Option[] = state.dimensions.map((d) => ({ value: d, label: fields.byPath.get(d)?.label ?? d }));
  const { field, granularity } = state.time;
  if (field && granularity) out.push({ value: `${field}.${granularity}`, label: `${fields.byPath.get(field)?.label ?? field} (${granularityLabel(granularity, text)})` });
  for (const m of state.measures) {
    const [agg, path] = m.split(':');
    out.push({ value: path ? `${agg}_${path}` : agg, label: measureLabel(fields, m, text) });
  }
  return out;
}

/** The query as a widget or a saved query keeps it: without `app` (each reads its own application's sources). */
export function storedQuery(query: Record<string, unknown>): Record<string, unknown> {
  const { app: _app, ...stored } = query;
  return stored;
}

type Part = Record<string, unknown>;
const parts = (v: unknown): Part[] => (Array.isArray(v) ? v.filter((x): x is Part => typeof x === 'object' && x !== null) : []);
const textOf = (v: unknown): string => (typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : '');

/**
 * A saved query as the builder's choices, run at once in application `app`,
 * and the JSON pointers of what the builder has no control for (a measure's
 * own name, a second time dimension, a second order, an offset): left out.
 * A sort by a name left out sorts by the column's default name instead.
 */
export function stateOfQuery(query: Part, app: string): { state: BuilderState; left: string[] } {
  const left: string[] = [];
  const renamed = new Map<string, string>();
  const measures = parts(query.measures).map((m, i) => {
    const agg = textOf(m.agg);
    const field = textOf(m.field);
    if (m.name !== undefined) {
      left.push(`/measures/${i}/name`);
      renamed.set(textOf(m.name), field ? `${agg}_${field}` : agg);
    }
    return field ? `${agg}:${field}` : agg;
  });
  const times = parts(query.timeDimensions);
  const time = times[0] ?? {};
  const range = Array.isArray(time.dateRange) ? time.dateRange.map(textOf) : [];
  if (time.name !== undefined) {
    left.push('/timeDimensions/0/name');
    renamed.set(textOf(time.name), `${textOf(time.field)}.${textOf(time.granularity)}`);
  }
  times.slice(1).forEach((_, i) => left.push(`/timeDimensions/${i + 1}`));
  const order = parts(query.order);
  order.slice(1).forEach((_, i) => left.push(`/order/${i + 1}`));
  if (query.offset !== undefined) left.push('/offset');
  const by = textOf(order[0]?.by);
  return {
    state: {
      app,
      table: textOf(query.table),
      measures,
      dimensions: Array.isArray(query.dimensions) ? query.dimensions.map(textOf).filter(Boolean) : [],
      time: { field: textOf(time.field), granularity: textOf(time.granularity), from: range[0] ?? '', to: range[1] ?? '' },
      filters: parts(query.filters).map((f) => ({
        field: textOf(f.field),
        op: textOf(f.op) || 'equals',
        value: Array.isArray(f.values) ? f.values.map(textOf).join(', ') : textOf(f.value),
      })),
      sort: renamed.get(by) ?? by,
      dir: order[0]?.dir === 'desc' ? 'desc' : 'asc',
      limit: textOf(query.limit),
      chart: 'bar',
      run: true,
    },
    left,
  };
}
