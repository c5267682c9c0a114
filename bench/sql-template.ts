// SQL templates: Plinth's captured statements, each as its text and, when Plinth
// sent bind parameters, a description of every value. The baseline renders them
// with its own request's values, so it sends PostgreSQL the statements Plinth
// sends, however core's query building changes:
//   - text: values MikroORM inlined (writes) become {{slot}}s standing for whole
//     SQL literals; a parameterised statement's text keeps its $1, $2, … as is
//     (and any number inlined into it, such as the list's limit, as a slot);
//   - params (parameterised statements only): for $n, the request variable it
//     carries ({ slot: 'id' }) or a constant Plinth sent for the probe ({ value }).
// Both sides call the pg driver the same way: query(text) for inlined statements
// (simple protocol; MikroORM passes an empty values array, which pg treats alike)
// and query(text, values) for parameterised ones (extended protocol, unnamed
// statement, parameter types left to the server), as kysely's pg driver does.
import { isDeepStrictEqual } from 'node:util';
import pg from './pg.ts';

/** What a statement's $n carries: a request variable, or a constant of the captured probe. */
/** A bound value: a request variable (`json`: sent as its JSON text, as Plinth binds documents for ::jsonb), or a constant. */
export type Param = { slot: string; json?: true } | { value: unknown };
/** One statement of a scenario, in the order Plinth issued it. */
export interface Template {
  sql: string;
  params?: Param[];
}
export type Templates = Record<string, Template[]>;
/** A request's variables, as JS values (id, companyId, pattern, limit, body:…, i18n:…, newId, now, version). */
export type Vars = Record<string, unknown>;

const SLOT = /\{\{([A-Za-z0-9:_-]+)\}\}/g;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const UUID_LITERAL = /^'[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}'$/i;
const ISO_LITERAL = /^'\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z'$/;

/** A string as PostgreSQL literal, exactly as MikroORM (and pg) write it. */
const lit = (s: string) => pg.escapeLiteral(s).trim();

/** A request variable as the SQL literal MikroORM inlines for it. */
function sqlLiteral(v: unknown): string {
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (typeof v === 'string') return lit(v);
  if (v === null || v === undefined) return 'null';
  if (v instanceof Date) return `'${v.toISOString()}'`;
  return lit(JSON.stringify(v));
}

/** Pre-split once; rendering is then one join per request (a text without slots is returned as is). */
export function compile(sql: string): (vars: Vars) => string {
  const parts = sql.split(SLOT);
  if (parts.length === 1) return () => sql;
  return (vars) => {
    let out = parts[0];
    for (let i = 1; i < parts.length; i += 2) {
      const v = vars[parts[i]];
      if (v === undefined) throw new Error(`no value for SQL slot {{${parts[i]}}}`);
      out += sqlLiteral(v) + parts[i + 1];
    }
    return out;
  };
}

/** The values array for a parameterised statement, from a request's variables. */
export function binder(params: Param[]): (vars: Vars) => unknown[] {
  const get = params.map((p) =>
    'slot' in p
      ? (vars: Vars) => {
          const v = vars[p.slot];
          if (v === undefined) throw new Error(`no value for bind parameter ${p.slot}`);
          return p.json ? JSON.stringify(v) : v;
        }
      : () => p.value,
  );
  return (vars) => get.map((g) => g(vars));
}

export const slotsOf = (t: Template) => [...new Set([...[...t.sql.matchAll(SLOT)].map((m) => m[1]), ...(t.params ?? []).flatMap((p) => ('slot' in p ? [p.slot] : []))])];

/** The highest $n a statement's text refers to (outside string literals and quoted identifiers). */
export const placeholders = (sql: string) =>
  Math.max(
    0,
    ...tokenize(sql)
      .filter((t) => !t.literal)
      .flatMap((t) => [...t.text.replace(/"[^"]*"/g, '').matchAll(/\$(\d+)/g)].map((m) => Number(m[1]))),
  );

/**
 * What each bound value of a captured statement carries: the request variable it
 * equals (by type and value), else a constant of the probe. Throws when a value
 * equals two variables (the mapping would be a guess), when a UUID matches none
 * (a request value this capture does not know about), or when a value would not
 * survive the templates file (JSON) unchanged.
 */
export function paramsOf(values: unknown[], vars: Vars, statement: string): Param[] {
  return values.map((v, i) => {
    const hits = Object.entries(vars)
      .filter(([, x]) => isDeepStrictEqual(x, v))
      .map(([k]) => k);
    if (hits.length > 1) throw new Error(`bind parameter $${i + 1} (${JSON.stringify(v)}) equals several request variables (${hits.join(', ')}): make the probe's values distinct\n  in: ${statement}`);
    if (hits.length === 1) return { slot: hits[0] };
    // a JSON document bound as text (::jsonb) whose value is a request variable (translations)
    const doc =
      typeof v === 'string' && /^[[{]/.test(v)
        ? (() => {
            try {
              return JSON.parse(v) as unknown;
            } catch {
              return undefined;
            }
          })()
        : undefined;
    const docHits =
      doc === undefined
        ? []
        : Object.entries(vars)
            .filter(([, x]) => typeof x === 'object' && x !== null && isDeepStrictEqual(x, doc) && JSON.stringify(x) === v)
            .map(([k]) => k);
    if (docHits.length === 1) return { slot: docHits[0], json: true };
    if (typeof v === 'string' && UUID.test(v)) throw new Error(`bind parameter $${i + 1} is an id (${v}) the capture does not know about\n  in: ${statement}`);
    if (v === undefined || v instanceof Date || typeof v === 'bigint' || typeof v === 'function' || !isDeepStrictEqual(JSON.parse(JSON.stringify(v)), v)) {
      throw new Error(`bind parameter $${i + 1} (${String(v)}) is no plain JSON value; teach bench/sql-template.ts to carry it\n  in: ${statement}`);
    }
    return { value: v };
  });
}

interface Token {
  text: string;
  literal: boolean;
}

/** Splits SQL into string literals ('…', E'…') and the rest (identifiers stay whole). */
function tokenize(sql: string): Token[] {
  const out: Token[] = [];
  let rest = '';
  let i = 0;
  while (i < sql.length) {
    const c = sql[i];
    if (c === '"') {
      const end = sql.indexOf('"', i + 1);
      rest += sql.slice(i, end + 1);
      i = end + 1;
    } else if (c === "'" || ((c === 'E' || c === 'e') && sql[i + 1] === "'" && !/\w/.test(sql[i - 1] ?? ''))) {
      const escapes = c !== "'";
      let j = escapes ? i + 2 : i + 1;
      for (; j < sql.length; j++) {
        if (escapes && sql[j] === '\\') {
          j++;
          continue;
        }
        if (sql[j] === "'") {
          if (sql[j + 1] === "'") {
            j++;
            continue;
          }
          break;
        }
      }
      if (rest) out.push({ text: rest, literal: false });
      rest = '';
      out.push({ text: sql.slice(i, j + 1), literal: true });
      i = j + 1;
    } else {
      rest += c;
      i++;
    }
  }
  if (rest) out.push({ text: rest, literal: false });
  return out;
}

/**
 * Replaces the request's variables inlined in the text by slots: numbers where
 * they stand as numbers, other values where their SQL literal stands. Timestamps
 * become {{now}}. Throws if a UUID literal is left over: a request value this
 * capture does not know about. A parameterised statement's $n are left alone.
 */
export function templatize(sql: string, vars: Vars): string {
  const byLiteral = new Map<string, string>();
  const numbers: [string, number][] = [];
  for (const [slot, v] of Object.entries(vars)) {
    if (typeof v === 'number') numbers.push([slot, v]);
    else if (!(v instanceof Date)) byLiteral.set(sqlLiteral(v), slot);
  }
  const out = tokenize(sql).map((t) => {
    if (t.literal) {
      const slot = byLiteral.get(t.text);
      if (slot) return `{{${slot}}}`;
      if (ISO_LITERAL.test(t.text)) return '{{now}}';
      if (UUID_LITERAL.test(t.text)) throw new Error(`unrecognised id literal ${t.text} in Plinth SQL: ${sql}`);
      return t.text;
    }
    let text = t.text;
    for (const [slot, n] of numbers) text = text.replace(new RegExp(`(?<![\\w.$])${n}(?![\\w.])`, 'g'), `{{${slot}}}`);
    return text;
  });
  return out.join('');
}

/** The statement with timestamps masked, for comparisons across runs. */
export const maskTimestamps = (sql: string) =>
  tokenize(sql)
    .map((t) => (t.literal && ISO_LITERAL.test(t.text) ? '{{now}}' : t.text))
    .join('');
