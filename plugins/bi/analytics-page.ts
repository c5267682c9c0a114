// Analytics, /bi/analytics: a query builder over the semantic model (GET
// /api/bi/schema). A plain GET form: the address holds the choices, and a run
// answers here through GET /api/bi/analytics; assets/analytics.js runs the
// same query with POST /api/bi/analytics without leaving the page and draws
// its chart. The result: a table with the answer's column metadata, a chart,
// the SQL it ran and a CSV download (the API's CSV through the console relay).
import type { ConsolePage, PageApi } from '../../core/plugin-api.ts';
import type { BiTable } from './semantic-model.ts';
import { chosen, chosenOptions, fieldsOf, GRANULARITY_LABELS, OP_LABELS } from './analytics-fields.ts';
import { buildQuery, errorLinks, resultColumns, stateOf, type BuilderState, type FormQuery } from './analytics-form.ts';
import { required, scriptJson } from '../../core/plugin-api.ts';
import { CHART_TYPES, chartSummary, tableOf, type Result } from './widget-view.ts';

interface Schema {
  tables: BiTable[];
  granularities: string[];
  filterOperators: string[];
  limits: { maxRows: number };
}

interface Answer extends Result {
  table: string;
  rowCount: number;
  sql: string;
  durationMs: number;
  cached: boolean;
}

/** The table picker: tables by module, module names from the API's model. */
async function tableGroups(api: PageApi, tables: BiTable[], current: string) {
  const meta = await api.get<{ modules: { id: string; name: string }[] }>('/api/meta');
  const names = new Map((meta.ok ? meta.body.modules : []).map((m) => [m.id, m.name]));
  const modules = [...new Set(tables.map((t) => t.module))];
  return modules.map((m) => ({
    label: names.get(m) ?? m,
    options: tables
      .filter((t) => t.module === m)
      .sort((a, b) => a.label.localeCompare(b.label))
      .map((t) => ({ value: t.name, label: t.label, selected: t.name === current })),
  }));
}

/** Runs the query as the address gave it; the answer, or what the API found wrong with it. */
async function run(api: PageApi, query: Record<string, unknown>) {
  const res = await api.get<Answer & { detail?: string; title?: string; errors?: { path: string; message: string }[] }>(`/api/bi/analytics?query=${encodeURIComponent(JSON.stringify(query))}`);
  if (res.ok) return { answer: res.body, errors: [] };
  const body = res.body ?? {};
  return { answer: null, errors: body.errors?.length ? body.errors : [{ path: '', message: body.detail ?? body.title ?? `the API answered ${res.status}` }] };
}

/** "4 rows · 12 ms · from the cache": what the answer says about itself. */
function metaText(a: { rowCount: number; durationMs: number; cached: boolean; truncated: boolean }): string {
  const parts = [`${a.rowCount} ${a.rowCount === 1 ? 'row' : 'rows'}`, `${a.durationMs} ms`];
  if (a.cached) parts.push('from the cache');
  if (a.truncated) parts.push('more rows matched than the limit lets through');
  return parts.join(' · ');
}

function builderView(state: BuilderState, fields: ReturnType<typeof fieldsOf>, schema: Schema, invalid: Set<string>) {
  const flag = (id: string) => invalid.has(id);
  const ops = schema.filterOperators.map((op) => ({ value: op, label: OP_LABELS[op] ?? op }));
  return {
    table: { name: fields.table.name, label: fields.table.label, description: fields.table.description ?? '' },
    measures: [...state.measures, ''].map((v, i) => ({ id: `bi-m-${i}`, number: i + 1, groups: chosen(fields.measures, v), invalid: flag(`bi-m-${i}`) })),
    dimensions: [...state.dimensions, ''].map((v, i) => ({ id: `bi-d-${i}`, number: i + 1, groups: chosen(fields.dimensions, v), invalid: flag(`bi-d-${i}`) })),
    time: {
      fields: chosenOptions(fields.times, state.time.field),
      granularities: chosenOptions(
        schema.granularities.map((g) => ({ value: g, label: GRANULARITY_LABELS[g] ?? g })),
        state.time.granularity,
      ),
      from: state.time.from,
      to: state.time.to,
      invalid: flag('bi-time'),
      invalidFrom: flag('bi-from'),
      invalidTo: flag('bi-to'),
    },
    hasTimes: fields.times.length > 0,
    filters: [...state.filters, { field: '', op: 'equals', value: '' }].map((f, i) => ({
      number: i + 1,
      fieldId: `bi-ff-${i}`,
      opId: `bi-fo-${i}`,
      valueId: `bi-fv-${i}`,
      groups: chosen(fields.filters, f.field),
      ops: chosenOptions(ops, f.op),
      value: f.value,
      invalid: flag(`bi-ff-${i}`) || flag(`bi-fo-${i}`),
      invalidValue: flag(`bi-fv-${i}`),
    })),
    sort: chosenOptions(resultColumns(state, fields), state.sort),
    desc: state.dir === 'desc',
    limit: state.limit,
    invalidLimit: flag('bi-limit'),
    invalidSort: flag('bi-sort'),
    maxRows: schema.limits.maxRows,
    charts: chosenOptions([{ value: '', label: 'No chart' }, ...Object.entries(CHART_TYPES).map(([value, label]) => ({ value, label }))], state.chart),
  };
}

export const analyticsPage: ConsolePage = {
  view: new URL('./views/analytics.hbs', import.meta.url),
  title: 'Analytics',
  async load(api, query) {
    const schema = required(await api.get<Schema>('/api/bi/schema'));
    const state = stateOf(query as FormQuery);
    const table = schema.tables.find((t) => t.name === state.table);
    const tables = await tableGroups(api, schema.tables, state.table);
    if (!table) return { tables, unknownTable: state.table !== '', builder: null, json: scriptJson(null) };
    const fields = fieldsOf(table, schema.tables);
    const built = buildQuery(state, fields);
    const { answer, errors } = state.run ? await run(api, built.query) : { answer: null, errors: [] };
    const links = errorLinks(errors, built.controls);
    const result = answer
      ? {
          ...tableOf(answer),
          meta: metaText(answer),
          sql: answer.sql,
          summary: chartSummary(state.chart || null, answer),
          csv: `/console/api/bi/analytics/csv?query=${encodeURIComponent(JSON.stringify(built.query))}`,
        }
      : null;
    return {
      tables,
      builder: builderView(state, fields, schema, new Set(links.flatMap((l) => (l.id ? [l.id] : [])))),
      errors: links,
      result,
      json: scriptJson({
        table: table.name,
        fields: Object.fromEntries([...fields.byPath].map(([path, f]) => [path, { type: f.type, label: f.label }])),
        chartType: state.chart,
        result: answer ? { columns: answer.columns, rows: answer.rows, truncated: answer.truncated } : null,
      }),
    };
  },
};
