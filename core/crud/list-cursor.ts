// Cursor paging (keyset): `cursor` names the last row a client saw by its sort
// key values and id, and the next page holds the rows after it in the list's
// order, so a deep page costs what the first one does (no offset to skip).
// The cursor is opaque base64url JSON; it is checked (its sort must be the
// request's, every value typed as its key) before any value reaches the
// database, and each value is a bind parameter. A forged cursor can only pick
// where in the caller's own list to start.
import { httpError } from '../errors.ts';
import type { FieldModel } from '../model/entity-model.ts';
import type { Params, Row } from '../data/sql.ts';
import { valueProblem } from './list-filters.ts';
import { UUID } from '../ids.ts';

/** One key of a list's order: the SQL it sorts on, its direction, and the field (none for createdAt/updatedAt). */
export interface OrderKey {
  expr: string;
  desc: boolean;
  field?: FieldModel;
  /** the key's value as the cursor keeps it, exact (timestamps to the microsecond) */
  exact: string;
  /** what a cursor's value is compared as, when `expr` is not the value itself (an enum's rank) */
  bind?: (v: unknown) => unknown;
}

interface Cursor {
  s: string;
  k: unknown[];
  id: string;
}

const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
const invalid = (message: string) => httpError('VALIDATION_FAILED', `cursor: ${message}`, { errors: [{ path: '/cursor', message }] });

/** The select list entries that carry each key's exact value, as "_k0", "_k1", ... */
export const keyColumns = (keys: OrderKey[]) => keys.map((k, i) => `${k.exact} as "_k${i}"`).join(', ');

/** The cursor of `row` (selected with keyColumns) under sort `sort`. */
export function encodeCursor(sort: string, keys: OrderKey[], row: Row): string {
  const cursor: Cursor = { s: sort, k: keys.map((_, i) => row[`_k${i}`] ?? null), id: row.id };
  return Buffer.from(JSON.stringify(cursor)).toString('base64url');
}

/** The key values and id a cursor holds; 400 unless it was made for this sort and each value fits its key. */
export function decodeCursor(text: string, sort: string, keys: OrderKey[]): Cursor {
  let c: Cursor;
  try {
    c = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    throw invalid('is not a cursor this API gave out');
  }
  if (!c || typeof c !== 'object' || typeof c.s !== 'string' || !Array.isArray(c.k) || typeof c.id !== 'string' || !UUID.test(c.id)) throw invalid('is not a cursor this API gave out');
  if (c.s !== sort) throw invalid(`was made for sort "${c.s}", not "${sort}"`);
  if (c.k.length !== keys.length) throw invalid('does not fit this sort');
  keys.forEach((key, i) => {
    const problem = keyProblem(key, c.k[i]);
    if (problem) throw invalid(`key ${i + 1} ${problem}`);
  });
  return c;
}

function keyProblem(key: OrderKey, v: unknown): string | undefined {
  if (v === null) return key.field && !key.field.required ? undefined : 'may not be null';
  const f = key.field;
  if (!f) return typeof v === 'string' && INSTANT.test(v) ? undefined : 'must be an instant';
  if (f.type === 'integer') return Number.isSafeInteger(v) && Math.abs(v as number) <= 2147483647 ? undefined : 'must be an integer';
  if (f.type === 'boolean') return typeof v === 'boolean' ? undefined : 'must be true or false';
  if (typeof v !== 'string') return 'must be text';
  if (f.type === 'datetime') return INSTANT.test(v) ? undefined : 'must be an instant';
  // a translatable key holds the displayed text, of any language: no one length limit applies
  if (f.translatable) return v.length <= 1_000_000 ? undefined : 'is too long';
  return valueProblem(f, v);
}

/**
 * The rows after the cursor in the list's order: after on the first key, or
 * equal on it and after on the next, ..., and finally a greater id. Rows
 * without a value sort as PostgreSQL puts them: last ascending, first descending.
 */
export function afterCursor(keys: OrderKey[], c: Cursor, p: Params): string {
  const value = (k: OrderKey, v: unknown) => (k.bind ? k.bind(v) : v);
  const eq = keys.map((k, i) => (c.k[i] === null ? `${k.expr} is null` : `${k.expr} = ${p.add(value(k, c.k[i]))}`));
  const after = keys.map((k, i) => {
    const v = c.k[i];
    if (v === null) return k.desc ? `${k.expr} is not null` : 'false';
    const at = p.add(value(k, v));
    return k.desc ? `${k.expr} < ${at}` : `(${k.expr} > ${at} or ${k.expr} is null)`;
  });
  const id = `t."id" > ${p.add(c.id)}`;
  const terms = [...after.map((a, i) => [...eq.slice(0, i), a]), [...eq, id]];
  return `(${terms.map((t) => `(${t.join(' and ')})`).join(' or ')})`;
}
