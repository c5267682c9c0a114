// GET /api/bi/analytics?query=<JSON> and POST /api/bi/analytics: one query of
// the query language (query.ts) over a table of the semantic model, run by the
// kernel as one SQL statement in a read-only transaction with a statement
// timeout and a row cap, inside the caller's row-level rules of every table
// it touches. The answer carries column metadata and the statement's text
// without values, for the Analytics page.
import { handler, Type, validationError, type ModuleContext } from '../../core/plugin-api.ts';
import { AnalyticsQuery, retargeted, type QueryRun, type Role } from './query.ts';
import { entityQuery, type BiTable } from './semantic-model.ts';
import { runSaved, savedId } from './saved-tables.ts';
import { LIMITS } from './limits.ts';
import { externalName } from './external-model.ts';
import { runExternal } from './external-analytics.ts';

const MAX_QUERY_TEXT = 16_000;

const Value = Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()]);
export const Result = Type.Object(
  {
    table: Type.String(),
    columns: Type.Array(
      Type.Object(
        {
          name: Type.String(),
          type: Type.String({ description: 'the type of the values: a field type (dates YYYY-MM-DD, decimals as strings) or integer for counts' }),
          label: Type.String(),
          role: Type.Unsafe<Role>({ type: 'string', enum: ['dimension', 'measure', 'time'] }),
          currency: Type.Optional(Type.String({ description: 'an amount of money: the column holding the currency of its values (rows never add up two currencies: they are split by it)' })),
        },
        { additionalProperties: false },
      ),
    ),
    rows: Type.Array(Type.Record(Type.String(), Value), { description: 'one object per group, keyed by column name' }),
    rowCount: Type.Integer(),
    truncated: Type.Boolean({ description: 'more groups matched than the limit (or the row cap) let through' }),
    sql: Type.String({ description: 'the statement that ran, with $n where values were bound (the values are not shown)' }),
    durationMs: Type.Integer({ description: 'how long the statement ran (near 0 when cached)' }),
    cached: Type.Boolean({ description: 'served from the result cache: the same statement ran for a caller with the same rules since the tables it reads last changed' }),
  },
  { additionalProperties: false, description: 'The groups of the query, with column metadata' },
);

/**
 * Runs a query: parsed here, compiled and scoped by the kernel (a table of a
 * data source: compiled here, run by the kernel on that database; a saved
 * query's table: saved-tables.ts); its error paths point into the query as sent. `app`: the application whose data
 * sources it may read (a widget's), else the query's own `app`.
 */
async function runQuery(ctx: ModuleContext, input: unknown, opts: { tables?: BiTable[]; app?: string } = {}): Promise<QueryRun> {
  const table = (input as { table?: unknown } | null)?.table;
  if (savedId(table) !== undefined) return runSaved(ctx, input, opts.app, opts.tables);
  if (externalName(table)) return runExternal(ctx, input, opts.app);
  const parsed = entityQuery(ctx, input, opts.tables);
  const started = performance.now();
  try {
    const analysis = await ctx.data(parsed.table).analyze(parsed.aggregate, LIMITS());
    return { ...analysis, table: parsed.table, roles: parsed.roles, currencies: parsed.currencies, durationMs: Math.round(performance.now() - started) };
  } catch (err) {
    throw retargeted(err, parsed);
  }
}

/** A query's answer as the API shows it. */
export async function answer(ctx: ModuleContext, input: unknown, opts: { tables?: BiTable[]; app?: string } = {}) {
  const r = await runQuery(ctx, input, opts);
  return {
    table: r.table,
    columns: r.columns.map((c) => {
      const currency = r.currencies?.get(c.key);
      return { name: c.key, type: c.type, label: c.label, role: r.roles.get(c.key) ?? 'dimension', ...(currency ? { currency } : {}) };
    }),
    rows: r.rows,
    rowCount: r.rows.length,
    truncated: r.truncated,
    sql: r.sql,
    durationMs: r.durationMs,
    cached: r.cached,
  };
}

export const problems = ['UNPROCESSABLE' as const];

export const QueryParam = Type.Object(
  { query: Type.String({ minLength: 2, maxLength: MAX_QUERY_TEXT, description: 'the query as JSON (BiAnalyticsQuery); POST the same document for long queries' }) },
  { additionalProperties: false },
);

/** The query of ?query=, parsed. */
export function queryOf(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw validationError([{ path: '/query', message: 'is no JSON document' }]);
  }
}

export const getAnalytics = handler({ querystring: QueryParam, response: { 200: Result }, problems }, async (ctx, request) => answer(ctx, queryOf(request.query.query)));

export const getPostedAnalytics = handler({ body: AnalyticsQuery, response: { 200: Result }, problems }, async (ctx, request) => answer(ctx, request.body));
