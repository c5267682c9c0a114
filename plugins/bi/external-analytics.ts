// Analytics over a table of one of an application's data sources
// ("warehouse.orders"): the caller must read the application (its members and
// BI administrators do), the source and table must be in the application's
// model (what the source's last test introspected), and the query is compiled
// from that model (external-query.ts) and run by the kernel on the source's
// database: read-only, with the statement timeout and row cap of every
// analytics query. Its failures (the database went away, the timeout) are
// 422 naming the table. Results are not cached: the kernel cannot tell when
// another database changes.
import { validationError, type ColumnStatement, type ModuleContext, type Row } from '../../core/plugin-api.ts';
import { parseQuery, retargeted, type QueryRun } from './query.ts';
import { externalName, type SourceTable } from './external-model.ts';
import { compileExternal } from './external-query.ts';
import { sourceProblem, storedPassword, targetOf } from './data-sources.ts';
import { LIMITS } from './limits.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The application a query may read the tables of: a widget's (`app`) wins over the query's own; 400 without one. */
export function appOf(query: { app?: unknown }, app: string | undefined, what: string): string {
  const appId = app ?? query.app;
  if (appId === undefined) throw validationError([{ path: '/app', message: `names the application whose ${what} (it belongs to one)` }]);
  if (typeof appId !== 'string' || !UUID.test(appId)) throw validationError([{ path: '/app', message: 'is the id of an application' }]);
  return appId;
}

/**
 * The data source table `<source>.<table>` of application `appId`: 404 for an
 * application the caller cannot read, 400 for a name it lacks. `sources`: the
 * application's sources the caller already read (its model's listing), so
 * nothing is read again.
 */
export async function sourceTableOf(ctx: ModuleContext, appId: string, name: string, at = '/table', sources?: Row[]): Promise<{ source: Row; table: SourceTable }> {
  const { source: sourceName, table: tableName } = externalName(name)!;
  if (!sources) await ctx.data('BiApp').read(appId);
  const [source] = sources ? sources.filter((s) => s.name === sourceName) : await ctx.data('BiDataSource').find({ appId, name: sourceName }, { limit: 1 });
  if (!source) throw validationError([{ path: at, message: `names no data source "${sourceName}" of the application: GET /api/bi/schema?app=${appId} lists its tables` }]);
  const table = ((source.tables ?? []) as SourceTable[]).find((t) => t.name === tableName);
  if (!table) throw validationError([{ path: at, message: `names no table of data source "${sourceName}": GET /api/bi/schema?app=${appId} lists them` }]);
  return { source, table };
}

/** Runs a compiled statement on `source`'s database: its rows (at most the statement's groups) and whether there were more. */
export async function runOnSource(ctx: ModuleContext, source: Row, statement: ColumnStatement, at = '/table') {
  const connection = { url: source.url as string, password: await storedPassword(ctx, source.id as string), schemaName: source.schemaName as string, sslMode: source.sslMode as 'require' };
  const started = performance.now();
  let result;
  try {
    result = await ctx.externalDb(targetOf(connection)).query(statement.sql, statement.values, { timeoutMs: LIMITS().timeoutMs, maxRows: statement.wanted + 1 });
  } catch (err) {
    throw sourceProblem(err, at, source.name as string);
  }
  return {
    rows: statement.shape(result.rows.slice(0, statement.wanted)),
    columns: statement.columns,
    truncated: result.truncated || result.rows.length > statement.wanted,
    sql: statement.sql,
    cached: false,
    durationMs: Math.round(performance.now() - started),
  };
}

/** Runs `input` over its data source table; `app` (a widget's application) wins over the query's own. */
export async function runExternal(ctx: ModuleContext, input: unknown, app?: string): Promise<QueryRun> {
  const query = input as { table: string; app?: unknown };
  const { source, table } = await sourceTableOf(ctx, appOf(query, app, 'data source holds the table'), query.table);
  const parsed = parseQuery(input, ctx.timeZone, (_, field) => table.columns.find((c) => c.name === field)?.type);
  let statement;
  try {
    statement = compileExternal(source.schemaName as string, table, parsed.aggregate, { maxRows: LIMITS().maxRows });
  } catch (err) {
    throw retargeted(err, parsed);
  }
  return { ...(await runOnSource(ctx, source, statement)), table: parsed.table, roles: parsed.roles };
}
