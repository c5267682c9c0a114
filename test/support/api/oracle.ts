// What every answer must be, whatever was asked: never a 5xx; every 4xx an RFC
// 9457 problem (application/problem+json) whose code is a declared one and fits
// its status; and no error that shows the inside: a stack trace, SQL, a schema
// name, a SQLSTATE, a file path or an internal class name.
import { ERRORS, type ErrorCode } from '../../../core/errors.ts';

export interface Answer {
  statusCode: number;
  headers: Record<string, unknown>;
  body: string;
}

/** Internals an error body must not show; each match is excused only if the request itself carried it. */
const INTERNALS: Array<[string, RegExp]> = [
  ['stack trace', /\bat (?:async )?[\w$.<>]+ \(|\bat (?:file:\/\/)?\/[\w/.-]+:\d+:\d+/g],
  ['file path', /(?:file:\/\/)?\/[\w.-]+(?:\/[\w.-]+)+\.(?:ts|js|mjs|cjs)\b|node_modules|\/work\/|\/home\//g],
  ['SQL', /\bselect\s[^"]*?\sfrom\b|\binsert into\b|\bupdate "|\bdelete from\b| from "|\bwhere "|\breturning\b|\bcoalesce\(/gi],
  ['schema or table name', /\btenant_[a-z0-9_]+|\bplatform\.tenants\b|"(?:core|crm|catalog)_[a-z_]+"/g],
  ['database message', /\brelation "|\bcolumn "|\bviolates\b|\bduplicate key\b|\bsyntax error at\b|\binvalid input syntax\b|\bout of range for type\b|\bnull value in\b/gi],
  ['SQLSTATE', /\b(?:08|22|23|25|28|40|42|53|54|55|57|58|XX|P0)[0-9A-Z]{3}\b|\bsqlState\b|\bSQLSTATE\b/g],
  ['internal class', /\b\w+(?:Exception|Error)\b(?!s)|\bMikroORM\b|\bEntityManager\b|\bkysely\b|\bpg-protocol\b|\bfast-jwt\b|\bFST_[A-Z_]+|\bERR_[A-Z_]+/g],
  ['runtime message', /Cannot read propert|is not a function|is not defined|Unexpected token|Maximum call stack/g],
];

/** Internals no answer shows at all; SQL-like text and schema names may be data (a row's text, a size report) in a success. */
const NEVER = new Set(['stack trace', 'file path', 'runtime message']);

/** Findings of internals in a body; `request` is everything the request sent (excuses echoes). */
function internalsIn(body: string, request: string, only?: Set<string>): string[] {
  const out: string[] = [];
  for (const [what, re] of INTERNALS) {
    if (only && !only.has(what)) continue;
    for (const m of body.matchAll(re)) if (!request.includes(m[0])) out.push(`${what}: ${JSON.stringify(m[0])}`);
  }
  return out;
}

/** Why an answer breaks the contract, or undefined when it keeps it. */
export function contractBreach(res: Answer, request: string): string | undefined {
  if (res.statusCode >= 500) return `${res.statusCode} answer`;
  if (res.statusCode < 400) {
    const shown = internalsIn(res.body, request, NEVER);
    return shown.length ? `answer shows internals: ${shown.join(', ')}` : undefined;
  }
  if (!String(res.headers['content-type']).startsWith('application/problem+json')) return `error without problem+json (${res.headers['content-type']})`;
  if (request.startsWith('HEAD ')) return undefined; // no body to read
  let body: { code?: string; status?: number };
  try {
    body = JSON.parse(res.body);
  } catch {
    return 'problem body is not JSON';
  }
  if (typeof body.code !== 'string' || !(body.code in ERRORS)) return `problem without a known code (${body.code})`;
  if (ERRORS[body.code as ErrorCode][0] !== res.statusCode || body.status !== res.statusCode) return `code ${body.code} does not fit status ${res.statusCode}`;
  const leaks = internalsIn(res.body, request);
  if (leaks.length) return `error body shows internals: ${leaks.join(', ')}`;
  return undefined;
}

export const cut = (text: string, max: number) => (text.length > max ? `${text.slice(0, max)}...(${text.length} chars)` : text);
