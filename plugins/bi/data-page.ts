// The data of a BI application, /bi/apps/:id/data, beside its pages (sheets):
// its external data sources (GET /api/bi/apps/:id/data-sources) with their
// test's outcome and their tables, each opening Analytics on that table, and
// its saved queries (GET /api/bi/apps/:id/queries), each opening Analytics
// with that query. Owners and editors add, change, refresh and delete a
// source and delete a saved query through assets/data.js; the API tests a
// source on every save and says which field to fix.
import type { ConsolePage, PageApi } from '../../core/plugin-api.ts';
import { required, scriptJson } from '../../core/plugin-api.ts';
import { mayChange, scriptTexts, type Text } from './page-support.ts';

interface SourceTable {
  name: string;
  label: string;
  kind: string;
  rowEstimate?: number | null;
  columns: unknown[];
  skipped?: string[];
}

interface Source {
  id: string;
  name: string;
  description: string | null;
  url: string;
  schemaName: string;
  sslMode: string;
  status: string;
  lastFailure: string | null;
  testedAt: string | null;
  tables: SourceTable[] | null;
  version: number;
}

interface SavedQuery {
  id: string;
  name: string;
  description: string | null;
  query: { table?: string };
  version: number;
}

const MAX_SOURCES = 100;
const MAX_QUERIES = 500;

/** the notices the script's redirects ask for (?notice=added&source=<id>), by their texts' keys */
const NOTICES: Record<string, string> = {
  added: 'data.sourceAdded',
  changed: 'data.sourceChanged',
  refreshed: 'data.sourceRefreshed',
  deleted: 'data.sourceDeleted',
  queryDeleted: 'data.queryDeleted',
};
const STATUSES: Record<string, string> = { ok: 'data.status.ok', failed: 'data.status.failed' };
const SSL_MODES: Record<string, string> = { disable: 'data.ssl.disable', require: 'data.ssl.require', 'verify-full': 'data.ssl.verifyFull' };

/** An instant as the console's generic pages show one: "2026-05-01 10:00:00 UTC". */
const instant = (iso: string) =>
  iso
    .replace('T', ' ')
    .replace(/(:\d\d)\.\d+Z$/, '$1 UTC')
    .replace(/Z$/, ' UTC');

const analyticsUrl = (params: Record<string, string>) => `/bi/analytics?${new URLSearchParams(params)}`;

function sourceView(s: Source, appId: string, text: Text) {
  const tables = (s.tables ?? []).map((t) => ({
    label: t.label,
    qualified: `${s.name}.${t.name}`,
    about: text(t.columns.length === 1 ? 'data.oneColumn' : 'data.columns', { count: t.columns.length }),
    url: analyticsUrl({ app: appId, table: `${s.name}.${t.name}` }),
  }));
  return {
    id: s.id,
    name: s.name,
    description: s.description ?? '',
    schemaName: s.schemaName,
    status: Object.hasOwn(STATUSES, s.status) ? text(STATUSES[s.status]) : s.status,
    failed: s.status === 'failed',
    testedAt: s.testedAt ?? '',
    testedAtText: s.testedAt ? instant(s.testedAt) : '',
    lastFailure: s.lastFailure ?? '',
    tables,
    tablesText: text(tables.length === 1 ? 'data.oneTable' : 'data.tables', { count: tables.length }),
  };
}

/** The application's own tables (data sources' and saved queries'), by name, with their labels; empty if the API lists none. */
async function appTables(api: PageApi, appId: string): Promise<Map<string, string>> {
  const res = await api.get<{ items: { name: string; label: string }[] }>(`/api/bi/app-tables?app=${appId}`);
  return new Map((res.ok ? res.body.items : []).map((t) => [t.name, t.label]));
}

function queryView(q: SavedQuery, appId: string, tables: Map<string, string>, text: Text) {
  const table = typeof q.query?.table === 'string' ? q.query.table : '';
  // a saved query the caller can run is also a table of the application (query:<id>), one the builder can start from
  const asTable = `query:${q.id}`;
  return {
    id: q.id,
    name: q.name,
    description: q.description ?? '',
    table: tables.get(table) ?? table,
    tableName: table,
    openUrl: analyticsUrl({ app: appId, saved: q.id }),
    open: text('data.openQuery', { name: q.name }),
    tableUrl: tables.has(asTable) ? analyticsUrl({ app: appId, table: asTable }) : null,
    useAsTable: text('data.useAsTableNamed', { name: q.name }),
    deleteLabel: text('data.deleteNamed', { name: q.name }),
  };
}

/** The line the page starts with after a script's change: a notice, or a refresh's failure. */
function noticeOf(query: Record<string, string | undefined>, sources: Source[], text: Text) {
  const source = sources.find((s) => s.id === query.source);
  if (query.notice === 'refreshFailed' && source) {
    return { failure: text('data.refreshFailed', { name: source.name, reason: source.lastFailure ?? '' }), notice: null };
  }
  const key = query.notice && Object.hasOwn(NOTICES, query.notice) ? NOTICES[query.notice] : null;
  return { failure: null, notice: key ? text(key, { name: source?.name ?? '' }) : null };
}

export const dataPage: ConsolePage = {
  view: new URL('./views/data.hbs', import.meta.url),
  title: 'Data',
  async load(api, query, params) {
    const text: Text = (key, values) => api.text(key, values);
    const app = required(await api.get<{ id: string; name: string }>(`/api/bi/apps/${encodeURIComponent(params.id)}`));
    const [sources, queries, tables, canEditSources, canDeleteQueries] = await Promise.all([
      api.get<{ items: Source[]; total: number }>(`/api/bi/apps/${app.id}/data-sources?sort=name&size=${MAX_SOURCES}`).then(required),
      api.get<{ items: SavedQuery[]; total: number }>(`/api/bi/apps/${app.id}/queries?sort=name&size=${MAX_QUERIES}`).then(required),
      appTables(api, app.id),
      mayChange(api, app.id, 'BiDataSource', ['create', 'update', 'delete']),
      mayChange(api, app.id, 'BiQuery', ['delete']),
    ]);
    const base = `/bi/apps/${app.id}`;
    return {
      app: { id: app.id, name: app.name, url: base, sheetsUrl: `${base}/sheets`, dataUrl: `${base}/data`, analyticsUrl: analyticsUrl({ app: app.id }) },
      sources: sources.items.map((s) => sourceView(s, app.id, text)),
      sourcesTruncated: sources.total > sources.items.length,
      maxSources: MAX_SOURCES,
      queries: queries.items.map((q) => queryView(q, app.id, tables, text)),
      queriesTruncated: queries.total > queries.items.length,
      maxQueries: MAX_QUERIES,
      canEditSources,
      canDeleteQueries,
      sourceColumns: canEditSources ? 7 : 6,
      scripted: canEditSources || canDeleteQueries,
      sslModes: Object.entries(SSL_MODES).map(([value, key]) => ({ value, label: text(key), selected: value === 'require' })),
      ...noticeOf(query, sources.items, text),
      json: scriptJson({
        appId: app.id,
        sources: sources.items.map((s) => ({ id: s.id, name: s.name, url: s.url, schemaName: s.schemaName, sslMode: s.sslMode, version: s.version })),
        queries: queries.items.map((q) => ({ id: q.id, name: q.name, version: q.version })),
      }),
      texts: scriptTexts(api, ['dataScript', 'scripts']),
    };
  },
};
