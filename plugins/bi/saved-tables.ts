// Saved queries as tables of their application, named `query:<id>`: the
// groups a saved query answers the caller are a table whose columns are its
// result columns (dimensions, time dimensions, measures), which another query
// aggregates again: a count of groups, the average of monthly sums, a filter
// on a measure. Over an entity, the kernel compiles both into one statement
// inside the caller's read scope (analyze's `then`), so the table holds
// exactly what the saved query shows this caller and the result cache works
// as for any query; over a data source's table both run on that database. A
// saved query reading another saved query is no table (one level: no cycles).
import { compileColumnAggregate, httpError, validationError, type ModuleContext, type Row, type TypedColumn } from '../../core/plugin-api.ts';
import { parseQuery, perCurrency, retargeted, type ParsedQuery, type QueryRun } from './query.ts';
import { entityQuery, roleOf, tablesOf, type BiTable } from './semantic-model.ts';
import { externalName, type SourceTable } from './external-model.ts';
import { compileExternal } from './external-query.ts';
import { appOf, runOnSource, sourceTableOf } from './external-analytics.ts';
import { LIMITS } from './limits.ts';

const PREFIX = 'query:';
const MAX_SAVED = 1000;

/** "query:<id>" → the saved query's id; undefined for any other table name. */
export function savedId(table: unknown): string | undefined {
  return typeof table === 'string' && table.startsWith(PREFIX) ? table.slice(PREFIX.length) : undefined;
}

/** What a saved query reads, for this caller: its columns as a table, and how to run a query over them. */
type Base = { kind: 'entity'; parsed: ParsedQuery; columns: TypedColumn[] } | { kind: 'source'; source: Row; table: SourceTable; parsed: ParsedQuery; columns: TypedColumn[] };

/** A saved query's own problem (a table the caller may not read, a source gone) said at `at` of the query that names it. */
function savedProblem(err: unknown, name: string, at: string): unknown {
  const e = err as { statusCode?: number; code?: string; message?: string; errors?: { path: string; message: string }[] };
  if (typeof e?.statusCode !== 'number' || e.statusCode >= 500 || e.statusCode === 404) return err;
  const why = e.errors?.[0] ? `${e.errors[0].path || '/'} ${e.errors[0].message}` : (e.message ?? '');
  return httpError(e.code as 'VALIDATION_FAILED', `saved query "${name}": ${why}`, { errors: [{ path: at, message: `is saved query "${name}", which you cannot run: its ${why}` }] });
}

/** The base of saved query `row` for the caller; its problems are said at `at`. `sources`: its application's, already read. */
async function baseOf(ctx: ModuleContext, row: Row, at: string, tables?: BiTable[], sources?: Row[]): Promise<Base> {
  const query = row.query as { table?: unknown };
  const name = row.name as string;
  try {
    if (savedId(query.table) !== undefined) throw validationError([{ path: '/table', message: 'is another saved query: a saved query used as a table reads an entity or a data source table' }]);
    if (externalName(query.table)) {
      const { source, table } = await sourceTableOf(ctx, row.appId as string, query.table as string, '/table', sources);
      const parsed = parseQuery(query, ctx.timeZone, (_, field) => table.columns.find((c) => c.name === field)?.type);
      const columns = compileExternal(source.schemaName as string, table, parsed.aggregate, { maxRows: LIMITS().maxRows, derived: true }).derived;
      return { kind: 'source', source, table, parsed, columns };
    }
    const parsed = entityQuery(ctx, query, tables);
    try {
      return { kind: 'entity', parsed, columns: ctx.data(parsed.table).resultColumns(parsed.aggregate) };
    } catch (err) {
      throw retargeted(err, parsed);
    }
  } catch (err) {
    throw savedProblem(err, name, at);
  }
}

/** Saved query `id` of application `appId`: 400 naming `at` when the application has none such the caller may read. */
async function savedRow(ctx: ModuleContext, appId: string, id: string, at: string): Promise<Row> {
  await ctx.data('BiApp').read(appId);
  const [row] = await ctx.data('BiQuery').find({ id, appId }, { limit: 1 });
  if (!row) throw validationError([{ path: at, message: `names no saved query of the application: GET /api/bi/app-tables?app=${appId} lists them` }]);
  return row;
}

/** Runs `input`, a query over saved query table `query:<id>`; `app` (a widget's application) wins over the query's own. */
export async function runSaved(ctx: ModuleContext, input: unknown, app?: string, tables?: BiTable[]): Promise<QueryRun> {
  const query = input as { table: string; app?: unknown };
  const id = savedId(query.table)!;
  if (!/^[0-9a-f-]{36}$/i.test(id)) throw validationError([{ path: '/table', message: 'is query:<id>, the id of a saved query' }]);
  const row = await savedRow(ctx, appOf(query, app, 'saved query it reads'), id, '/table');
  const base = await baseOf(ctx, row, '/table', tables);
  // a money column of the saved query keeps its currency: a sum over its groups is per currency too
  const parsed = perCurrency(
    parseQuery(input, ctx.timeZone, (_, field) => base.columns.find((c) => c.name === field)?.type),
    (field) => base.parsed.currencies.get(field),
  );
  const limits = LIMITS();
  if (base.kind === 'entity') {
    const started = performance.now();
    try {
      const analysis = await ctx.data(base.parsed.table).analyze(base.parsed.aggregate, { ...limits, then: { name: query.table, query: parsed.aggregate } });
      return { ...analysis, table: parsed.table, roles: parsed.roles, currencies: parsed.currencies, durationMs: Math.round(performance.now() - started) };
    } catch (err) {
      throw retargeted(err, parsed);
    }
  }
  let statement;
  try {
    const groups = compileExternal(base.source.schemaName as string, base.table, base.parsed.aggregate, { maxRows: limits.maxRows, derived: true });
    statement = compileColumnAggregate(`(${groups.sql})`, { name: query.table, columns: groups.derived }, parsed.aggregate, { maxRows: limits.maxRows, values: groups.values });
  } catch (err) {
    throw retargeted(err, parsed);
  }
  return { ...(await runOnSource(ctx, base.source, statement)), table: parsed.table, roles: parsed.roles, currencies: parsed.currencies };
}

/**
 * The saved queries of application `appId` the caller can run, as tables
 * `query:<id>` (module "queries") with their result columns; `sources`: the
 * application's data sources, which the caller has just read.
 */
export async function savedTablesOf(ctx: ModuleContext, appId: string, sources: Row[], tables: BiTable[] = tablesOf(ctx)): Promise<BiTable[]> {
  const rows = await ctx.data('BiQuery').find({ appId }, { limit: MAX_SAVED, orderBy: 'name' });
  const out: BiTable[] = [];
  for (const row of rows) {
    let base: Base;
    try {
      base = await baseOf(ctx, row, '/table', tables, sources);
    } catch (err) {
      // one the caller cannot run (a table they may not read, a source removed) is no table of theirs
      if (typeof (err as { statusCode?: number }).statusCode === 'number' && (err as { statusCode: number }).statusCode < 500) continue;
      throw err;
    }
    out.push({
      name: `${PREFIX}${row.id as string}`,
      label: row.name as string,
      module: 'queries',
      ...(row.description ? { description: row.description as string } : {}),
      fields: base.columns.map((c) => {
        const currency = base.parsed.currencies.get(c.name);
        return { name: c.name, label: c.label, type: c.type, role: roleOf(c.type), ...(c.values ? { values: c.values } : {}), ...(currency ? { currency } : {}) };
      }),
    });
  }
  return out;
}
