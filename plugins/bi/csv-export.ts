// GET /api/bi/analytics/csv?query=… and POST /api/bi/analytics/csv: the
// groups of an analytics query as a CSV file (RFC 4180: comma separated, CRLF
// line ends, a header row of column names), for a spreadsheet. A text value
// that a spreadsheet would run as a formula (=, +, -, @, a tab or a carriage
// return first) is written with a leading apostrophe, so an exported file never
// runs what someone typed into a record.
import { handler, Type, type ModuleContext } from '../../core/plugin-api.ts';
import { AnalyticsQuery } from './query.ts';
import { answer, problems, queryOf, QueryParam } from './analytics.ts';

const FORMULA_START = /^[=+\-@\t\r]/;
const NUMERIC_TYPES = new Set(['integer', 'decimal', 'number']);

type Cell = string | number | boolean | null | undefined;

function cell(value: Cell, numeric: boolean): string {
  if (value === null || value === undefined) return '';
  let text = String(value);
  if (!numeric && FORMULA_START.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) || text !== text.trim() ? `"${text.replaceAll('"', '""')}"` : text;
}

/** The answer of a query as CSV text. */
function toCsv(result: { columns: { name: string; type: string }[]; rows: Record<string, Cell>[] }): string {
  const lines = [result.columns.map((c) => cell(c.name, false)).join(',')];
  for (const row of result.rows) lines.push(result.columns.map((c) => cell(row[c.name], NUMERIC_TYPES.has(c.type))).join(','));
  return `${lines.join('\r\n')}\r\n`;
}

const Csv = Type.String({
  mediaType: 'text/csv',
  description: 'The groups as CSV (RFC 4180, UTF-8) with a header row of column names: the groups the limit and the row cap let through (the JSON answer says whether there were more)',
  headers: ['Content-Disposition', 'X-Content-Type-Options'],
});

async function sendCsv(ctx: ModuleContext, input: unknown, reply: { header(name: string, value: string): unknown }) {
  const result = await answer(ctx, input);
  reply.header('content-type', 'text/csv; charset=utf-8');
  // the table is a name of the semantic model: letters, digits, _ and a dot only
  reply.header('content-disposition', `attachment; filename="${result.table}.csv"`);
  reply.header('x-content-type-options', 'nosniff');
  return toCsv(result);
}

export const getAnalyticsCsv = handler({ querystring: QueryParam, response: { 200: Csv }, problems }, (ctx, request, reply) => sendCsv(ctx, queryOf(request.query.query), reply));

export const getPostedAnalyticsCsv = handler({ body: AnalyticsQuery, response: { 200: Csv }, problems }, (ctx, request, reply) => sendCsv(ctx, request.body, reply));
