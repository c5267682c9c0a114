// SQL templates: Plinth's captured statements with every request-dependent
// literal replaced by a {{slot}}. The baseline renders them with its own
// request's values, so it sends PostgreSQL the statements Plinth sends, however
// core's query building changes. MikroORM 7 inlines values into the SQL text
// (no bind parameters), so slots stand for whole SQL literals.
import pg from './pg.ts';

/** One statement of a scenario, in the order Plinth issued it. */
export interface Template { sql: string }
export type Templates = Record<string, Template[]>;

const SLOT = /\{\{([A-Za-z0-9:_-]+)\}\}/g;
const UUID_LITERAL = /^'[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}'$/i;
const ISO_LITERAL = /^'\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z'$/;

/** A string as PostgreSQL literal, exactly as MikroORM (and pg) write it. */
export const lit = (s: string) => pg.escapeLiteral(s).trim();

/** Pre-split once; rendering is then one join per request. */
export function compile(sql: string): (values: Record<string, string>) => string {
  const parts = sql.split(SLOT);
  return (values) => {
    let out = parts[0];
    for (let i = 1; i < parts.length; i += 2) {
      const v = values[parts[i]];
      if (v === undefined) throw new Error(`no value for SQL slot {{${parts[i]}}}`);
      out += v + parts[i + 1];
    }
    return out;
  };
}

export const slotsOf = (sql: string) => [...new Set([...sql.matchAll(SLOT)].map((m) => m[1]))];

interface Token { text: string; literal: boolean }

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
        if (escapes && sql[j] === '\\') { j++; continue; }
        if (sql[j] === "'") { if (sql[j + 1] === "'") { j++; continue; } break; }
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
 * Replaces the known request values by slots. literals: slot → SQL literal as
 * rendered ('…'); numbers: slot → integer. Timestamps become {{now}}. Throws if a
 * UUID literal is left over: a request value this capture does not know about.
 */
export function templatize(sql: string, literals: Record<string, string>, numbers: Record<string, number>): string {
  const byLiteral = new Map(Object.entries(literals).map(([slot, l]) => [l, slot]));
  const out = tokenize(sql).map((t) => {
    if (t.literal) {
      const slot = byLiteral.get(t.text);
      if (slot) return `{{${slot}}}`;
      if (ISO_LITERAL.test(t.text)) return '{{now}}';
      if (UUID_LITERAL.test(t.text)) throw new Error(`unrecognised id literal ${t.text} in Plinth SQL: ${sql}`);
      return t.text;
    }
    let text = t.text;
    for (const [slot, n] of Object.entries(numbers)) text = text.replace(new RegExp(`(?<![\\w.])${n}(?![\\w.])`, 'g'), `{{${slot}}}`);
    return text;
  });
  return out.join('');
}

/** The statement with timestamps masked, for comparisons across runs. */
export const maskTimestamps = (sql: string) => tokenize(sql).map((t) => (t.literal && ISO_LITERAL.test(t.text) ? '{{now}}' : t.text)).join('');
