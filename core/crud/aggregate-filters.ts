// Filters of an aggregate on any field it may name (ref paths included), with
// a fixed set of operators. Each value is checked against the field's type
// before it is bound, so a value PostgreSQL could not compare (text for a
// number, a date out of range) is a 400 naming it, never a database error.
// A filter on a field the caller sees as null (a hidden field, a referenced
// row out of reach) tests that null, so it cannot reveal the hidden value.
import type { Fragment } from '../data/scope.ts';
import { invalid, type Field } from './aggregate-fields.ts';

export const FILTER_OPS = ['equals', 'notEquals', 'in', 'notIn', 'gt', 'gte', 'lt', 'lte', 'contains', 'startsWith', 'set', 'notSet'] as const;
export type FilterOp = (typeof FILTER_OPS)[number];

/** `field op value`: `in`/`notIn` take `values` (1 to 100), `set`/`notSet` nothing, the others one `value`. */
export interface FieldFilter {
  /** a field of the entity or a ref path ("projectId.name") */
  field: string;
  /** one of FILTER_OPS */
  op: FilterOp;
  /** the value to compare with (all ops but in, notIn, set, notSet) */
  value?: unknown;
  /** in and notIn: the values, 1 to 100 */
  values?: unknown[];
}

const MAX_VALUES = 100;
const MAX_TEXT = 1000;
const ORDERED = new Set(['integer', 'decimal', 'date', 'datetime', 'string', 'text', 'enum']);
const TEXT = new Set(['string', 'text']);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DECIMAL = /^-?\d{1,30}(\.\d{1,30})?$/;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const INSTANT = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:\d{2}))?$/;
const INT4 = 2_147_483_647;

/**
 * The value as bound to compare with a column of `type` (a field type; `uuid` is a
 * `ref`), or a message saying what it should be. Integers are 32 bits unless
 * `bigint` (a column of another database may be wider).
 */
export function filterValue(type: string, v: unknown, values?: string[], opts: { bigint?: boolean } = {}): { ok: unknown } | { error: string } {
  switch (type) {
    case 'integer':
      if (opts.bigint) return Number.isSafeInteger(v) ? { ok: v } : { error: 'is an integer' };
      return Number.isSafeInteger(v) && Math.abs(v as number) <= INT4 ? { ok: v } : { error: 'is an integer (32 bits)' };
    case 'decimal': {
      const s = typeof v === 'number' && Number.isFinite(v) ? String(v) : v;
      return typeof s === 'string' && DECIMAL.test(s) ? { ok: s } : { error: 'is a decimal number ("12.50")' };
    }
    case 'boolean':
      return typeof v === 'boolean' ? { ok: v } : { error: 'is true or false' };
    case 'ref':
    case 'uuid':
      return typeof v === 'string' && UUID.test(v) ? { ok: v } : { error: 'is a UUID' };
    case 'date':
      return isDay(v) ? { ok: v } : { error: 'is a date YYYY-MM-DD (0001..9999)' };
    case 'datetime': {
      if (typeof v !== 'string' || !INSTANT.test(v) || !isDay(v.slice(0, 10))) return { error: 'is an ISO 8601 instant (or a date)' };
      const at = new Date(v.length === 10 ? `${v}T00:00:00Z` : v);
      return Number.isNaN(at.getTime()) ? { error: 'is an ISO 8601 instant (or a date)' } : { ok: at.toISOString() };
    }
    case 'enum':
      return typeof v === 'string' && values?.includes(v) ? { ok: v } : { error: `is one of ${(values ?? []).join(', ')}` };
    default:
      if (typeof v !== 'string' || v.length > MAX_TEXT) return { error: `is a text of at most ${MAX_TEXT} characters` };
      if (v.includes('\u0000') || !v.isWellFormed()) return { error: 'holds a character PostgreSQL cannot store' };
      return { ok: v };
  }
}

function isDay(v: unknown): boolean {
  const m = typeof v === 'string' ? DATE.exec(v) : null;
  if (!m || m[1] === '0000') return false;
  const d = new Date(`${v}T00:00:00Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === v;
}

/** `\`, `%` and `_` match themselves in a like pattern. */
const literal = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

/** One filter as SQL on the field's readable value, its values bound. */
export function compileFilter(f: Field, filter: FieldFilter, path: string): Fragment {
  const op = filter.op;
  if (!(FILTER_OPS as readonly string[]).includes(op)) throw invalid(`${path}/op`, `is one of ${FILTER_OPS.join(', ')}`);
  const col = f.value;
  if (f.type === 'translatable' || f.type === 'json') throw invalid(`${path}/field`, `${f.name} (${f.type}) cannot be filtered on`);
  if (op === 'set') return (p) => `${col(p)} is not null`;
  if (op === 'notSet') return (p) => `${col(p)} is null`;
  const one = (v: unknown, at: string) => {
    const c = filterValue(f.type, v, f.values);
    if ('error' in c) throw invalid(at, c.error);
    return c.ok;
  };
  if (op === 'in' || op === 'notIn') {
    if (!Array.isArray(filter.values) || !filter.values.length || filter.values.length > MAX_VALUES) throw invalid(`${path}/values`, `is a list of 1 to ${MAX_VALUES} values`);
    const list = filter.values.map((v, i) => one(v, `${path}/values/${i}`));
    // `= any($n)` takes one array parameter, typed by the column
    return op === 'in' ? (p) => `${col(p)} = any(${p.add(list)})` : (p) => `(${col(p)} is null or not (${col(p)} = any(${p.add(list)})))`;
  }
  if (filter.values !== undefined) throw invalid(`${path}/values`, `is for in and notIn; ${op} takes one value`);
  if (op === 'contains' || op === 'startsWith') {
    if (!TEXT.has(f.type)) throw invalid(`${path}/op`, `${op} applies to text fields, not ${f.name} (${f.type})`);
    const v = one(filter.value, `${path}/value`) as string;
    const pattern = op === 'contains' ? `%${literal(v)}%` : `${literal(v)}%`;
    return (p) => `${col(p)} ilike ${p.add(pattern)}`;
  }
  const v = one(filter.value, `${path}/value`);
  if (op === 'equals') return (p) => `${col(p)} = ${p.add(v)}`;
  if (op === 'notEquals') return (p) => `${col(p)} is distinct from ${p.add(v)}`;
  if (!ORDERED.has(f.type)) throw invalid(`${path}/op`, `${op} applies to numbers, dates and texts, not ${f.name} (${f.type})`);
  const sign = { gt: '>', gte: '>=', lt: '<', lte: '<=' }[op];
  return (p) => `${col(p)} ${sign} ${p.add(v)}`;
}
