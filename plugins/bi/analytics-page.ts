// Analytics, /bi/analytics: a query builder over the semantic model (GET
// /api/bi/schema; with an application chosen, ?app=<id>, also its data
// sources' tables and its saved queries). A plain GET form: the address holds
// the choices, and a run answers here through GET /api/bi/analytics;
// assets/analytics.js runs the same query with POST /api/bi/analytics without
// leaving the page and draws its chart. The result: a table with the answer's
// column metadata, a chart, the SQL it ran, a CSV download (the API's CSV
// through the console relay), a form that adds the query to a dashboard as a
// widget (assets/analytics-add.js posts it), offered with the sheets the
// caller may add widgets to, and one that saves it in the chosen application
// (assets/analytics-save.js). ?saved=<id> starts from a saved query.
import type { ConsolePage, PageApi } from '../../core/plugin-api.ts';
import type { BiTable } from './semantic-model.ts';
import { chosen, chosenOptions, fieldsOf, granularityLabel, operatorLabel } from './analytics-fields.ts';
import { buildQuery, errorLinks, querySummary, resultColumns, stateOf, stateOfQuery, storedQuery, type BuilderState, type FormQuery } from './analytics-form.ts';
import { appBound, appsOf, savedQuery, tableGroups, type AppChoice } from './analytics-app.ts';
import { required, scriptJson } from '../../core/plugin-api.ts';
import { mayChange, scriptTexts, widgetSheets, type SheetGroup, type Text } from './page-support.ts';
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

/** Runs the query as the address gave it; the answer, or what the API found wrong with it. */
async function run(api: PageApi, query: Record<string, unknown>) {
  const res = await api.get<Answer & { detail?: string; title?: string; errors?: { path: string; message: string }[] }>(`/api/bi/analytics?query=${encodeURIComponent(JSON.stringify(query))}`);
  if (res.ok) return { answer: res.body, errors: [] };
  const body = res.body ?? {};
  return { answer: null, errors: body.errors?.length ? body.errors : [{ path: '', message: body.detail ?? body.title ?? api.text('analytics.apiAnswered', { status: res.status }) }] };
}

/** "4 rows · 12 ms · from the cache": what the answer says about itself (as assets/analytics-view.js says it). */
function metaText(a: { rowCount: number; durationMs: number; cached: boolean; truncated: boolean }, text: Text): string {
  const parts = [text(a.rowCount === 1 ? 'result.oneRow' : 'result.rows', { count: a.rowCount }), `${a.durationMs} ms`];
  if (a.cached) parts.push(text('result.cached'));
  if (a.truncated) parts.push(text('result.truncated'));
  return parts.join(' · ');
}

function builderView(state: BuilderState, fields: ReturnType<typeof fieldsOf>, schema: Schema, invalid: Set<string>, text: Text) {
  const flag = (id: string) => invalid.has(id);
  const ops = schema.filterOperators.map((op) => ({ value: op, label: operatorLabel(op, text) }));
  return {
    app: state.app,
    table: { name: fields.table.name, label: fields.table.label, description: fields.table.description ?? '' },
    measures: [...state.measures, ''].map((v, i) => ({ id: `bi-m-${i}`, number: i + 1, groups: chosen(fields.measures, v, text), invalid: flag(`bi-m-${i}`) })),
    dimensions: [...state.dimensions, ''].map((v, i) => ({ id: `bi-d-${i}`, number: i + 1, groups: chosen(fields.dimensions, v, text), invalid: flag(`bi-d-${i}`) })),
    time: {
      fields: chosenOptions(fields.times, state.time.field),
      granularities: chosenOptions(
        schema.granularities.map((g) => ({ value: g, label: granularityLabel(g, text) })),
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
      groups: chosen(fields.filters, f.field, text),
      ops: chosenOptions(ops, f.op),
      value: f.value,
      invalid: flag(`bi-ff-${i}`) || flag(`bi-fo-${i}`),
      invalidValue: flag(`bi-fv-${i}`),
    })),
    sort: chosenOptions(resultColumns(state, fields, text), state.sort),
    desc: state.dir === 'desc',
    limit: state.limit,
    invalidLimit: flag('bi-limit'),
    invalidSort: flag('bi-sort'),
    maxRows: schema.limits.maxRows,
    charts: chosenOptions([{ value: '', label: text('analytics.noChart') }, ...Object.entries(CHART_TYPES).map(([value, key]) => ({ value, label: text(key) }))], state.chart),
  };
}

/** The kinds of widget a query makes, each by its name's key in the module's texts. */
const KINDS: Record<string, string> = { chart: 'addWidget.kind.chart', number: 'addWidget.kind.number', table: 'addWidget.kind.table' };

/**
 * The "Add to a dashboard" form: the sheets by application, and what it starts
 * with for the query (as assets/analytics-add.js chooses after a run): its
 * summary as the title; a chart if the builder draws one, else a table if the
 * query groups, else a number. Null without a sheet to add to.
 */
function addWidgetView(groups: SheetGroup[], state: BuilderState, fields: ReturnType<typeof fieldsOf>, text: Text) {
  if (!groups.length) return null;
  const grouped = state.dimensions.length > 0 || (state.time.field !== '' && state.time.granularity !== '');
  const kind = state.chart ? 'chart' : grouped ? 'table' : 'number';
  const named = (keys: Record<string, string>) => Object.entries(keys).map(([value, key]) => ({ value, label: text(key) }));
  return {
    groups: groups.map((g) => ({ label: g.app.name, options: g.sheets.map((s) => ({ value: s.id, label: s.name, url: `/bi/apps/${g.app.id}/sheets/${s.id}` })) })),
    title: querySummary(state, fields, text),
    kinds: chosenOptions(named(KINDS), kind),
    charts: chosenOptions(named(CHART_TYPES), state.chart || 'bar'),
    notChart: kind !== 'chart',
  };
}

/** What the page starts from: the address's choices, or a saved query of the chosen application (?saved=<id>). */
async function startingState(api: PageApi, query: FormQuery, app: AppChoice | null) {
  const state = { ...stateOf(query), app: app?.id ?? '' };
  const id = typeof query.saved === 'string' ? query.saved : '';
  if (!id) return { state, saved: null, savedMissing: false, left: [] };
  const saved = app ? await savedQuery(api, app, id) : null;
  if (!saved) return { state, saved: null, savedMissing: true, left: [] };
  const { state: loaded, left } = stateOfQuery(saved.query, state.app);
  return { state: loaded, saved: { name: saved.name }, savedMissing: false, left };
}

export const analyticsPage: ConsolePage = {
  view: new URL('./views/analytics.hbs', import.meta.url),
  title: 'Analytics',
  async load(api, query) {
    const text: Text = (key, values) => api.text(key, values);
    const texts = scriptTexts(api, ['control', 'result', 'chart', 'scripts', 'addWidgetScript', 'saveQueryScript']);
    const { apps, app, unknown: unknownApp } = await appsOf(api, stateOf(query as FormQuery).app);
    const { state, saved, savedMissing, left } = await startingState(api, query as FormQuery, app);
    const schema = required(await api.get<Schema>(app ? `/api/bi/schema?app=${app.id}` : '/api/bi/schema'));
    const table = schema.tables.find((t) => t.name === state.table);
    const picker = {
      apps: apps.map((a) => ({ ...a, selected: a.id === app?.id })),
      app,
      unknownApp,
      // a change of application keeps an entity's table, not one of the application left
      keepTable: table && !appBound(table) ? table.name : '',
      tables: await tableGroups(api, schema.tables, state.table, app, text),
      saved,
      savedMissing,
      left: left.join(', '),
    };
    if (!table) return { ...picker, unknownTable: state.table !== '', builder: null, json: scriptJson(null), texts };
    const fields = fieldsOf(table, schema.tables, text);
    const built = buildQuery(state, fields, text);
    // a widget or saved query reading an application's own table belongs to that application
    const boundTo = app && appBound(table) ? app : null;
    const [{ answer, errors }, sheets, maySave] = await Promise.all([
      state.run ? run(api, built.query) : { answer: null, errors: [] },
      widgetSheets(api).then((groups) => (boundTo ? groups.filter((g) => g.app.id === boundTo.id) : groups)),
      app ? mayChange(api, app.id, 'BiQuery', ['create']) : false,
    ]);
    const links = errorLinks(errors, built.controls, text);
    const result = answer
      ? {
          ...tableOf(answer, text),
          meta: metaText(answer, text),
          sql: answer.sql,
          summary: chartSummary(state.chart || null, answer, text),
          csv: `/console/api/bi/analytics/csv?query=${encodeURIComponent(JSON.stringify(built.query))}`,
        }
      : null;
    const save = app && maySave ? { appId: app.id, appName: app.name, dataUrl: `/bi/apps/${app.id}/data` } : null;
    return {
      ...picker,
      builder: builderView(state, fields, schema, new Set(links.flatMap((l) => (l.id ? [l.id] : []))), text),
      errors: links,
      result,
      addWidget: addWidgetView(sheets, state, fields, text),
      boundTo,
      saveQuery: save,
      json: scriptJson({
        app: state.app,
        table: table.name,
        fields: Object.fromEntries([...fields.byPath].map(([path, f]) => [path, { type: f.type, label: f.label }])),
        tableLabel: table.label,
        chartType: state.chart,
        result: answer ? { columns: answer.columns, rows: answer.rows, truncated: answer.truncated } : null,
        // what the result answered: the query a widget added or a query saved from it keeps (without app)
        query: answer ? storedQuery(built.query) : null,
        save,
      }),
      texts,
    };
  },
};
