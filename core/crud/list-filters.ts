// A list's filter parameters: one syntax for every entity, `<field>[<op>]=value`
// (price[gte]=10, unit[in]=kg,litre, name[contains]=saw, categoryId[isNull]=true),
// beside the older `<field>=value` (equality) and `<field>From` / `<field>To`
// (inclusive range). A field offers them when its manifest says `filter: true`;
// which operators it takes follows from its type. Every value is a bind
// parameter; the HTTP schema has typed the single values, `in` lists are typed here.
import type { EntityModel, FieldModel } from '../model/entity-model.ts';
import { isRangeType, USER_ENTITY } from '../model/entity-model.ts';
import { httpError } from '../errors.ts';
import type { Params } from '../data/sql.ts';
import { UUID } from '../ids.ts';

export type FilterOp = 'ne' | 'gt' | 'gte' | 'lt' | 'lte' | 'in' | 'contains' | 'startsWith' | 'isNull';

/** The most values one `in` list may hold. */
const IN_LIMIT = 100;

const TEXT_OPS: FilterOp[] = ['ne', 'in', 'contains', 'startsWith'];
const ORDERED_OPS: FilterOp[] = ['ne', 'gt', 'gte', 'lt', 'lte', 'in'];
const OPS_BY_TYPE: Record<FieldModel['type'], FilterOp[]> = {
  string: TEXT_OPS,
  text: TEXT_OPS,
  integer: ORDERED_OPS,
  decimal: ORDERED_OPS,
  date: ORDERED_OPS,
  datetime: ORDERED_OPS,
  enum: ['ne', 'in'],
  ref: ['ne', 'in'],
  boolean: ['ne'],
  json: [],
};

/** The bracket operators a filterable field takes: by its type, and isNull when it may lack a value. */
export function filterOps(f: FieldModel): FilterOp[] {
  return [...OPS_BY_TYPE[f.type], ...(f.required ? [] : (['isNull'] as FilterOp[]))];
}

export const filterParam = (field: string, op: FilterOp) => `${field}[${op}]`;

/** How each operator reads, for the parameters' descriptions. */
export const OP_MEANING: Record<FilterOp, string> = {
  ne: 'differs from the value (rows without a value match too)',
  gt: 'greater than the value',
  gte: 'greater than or equal to the value',
  lt: 'less than the value',
  lte: 'less than or equal to the value',
  in: `equals one of the comma-separated values (at most ${IN_LIMIT})`,
  contains: 'contains the text, case-insensitively',
  startsWith: 'starts with the text, case-insensitively',
  isNull: 'true: has no value; false: has one',
};

const COMPARE: Partial<Record<FilterOp, string>> = { gt: '>', gte: '>=', lt: '<', lte: '<=' };

/** `like` pattern text matching `s` literally: % _ and \ match themselves. */
export const likeLiteral = (s: string) => s.replace(/[\\%_]/g, '\\$&');

/**
 * SQL conditions of the filter parameters in `query`. `expr` gives the
 * expression a field is compared on: its column, the displayed text of a
 * translatable field, or what field rules leave the caller of it.
 */
export function compileFilters(model: EntityModel, query: Record<string, unknown>, p: Params, expr: (f: FieldModel) => string): string[] {
  const out: string[] = [];
  for (const f of model.filterable) {
    const given = (key: string) => query[key] !== undefined;
    if (!Object.keys(query).some((k) => k.startsWith(f.name))) continue;
    const col = expr(f);
    // `me` on a ref to the user entity: the caller (no user, e.g. a client: matches no row)
    const value = (v: unknown) => (v === ME && refersToUser(f) ? (p.caller?.user.id ?? '') || null : v);
    if (given(f.name)) out.push(`${col} = ${p.add(value(query[f.name]))}`);
    if (isRangeType(f.type)) {
      if (given(`${f.name}From`)) out.push(`${col} >= ${p.add(query[`${f.name}From`])}`);
      if (given(`${f.name}To`)) out.push(`${col} <= ${p.add(query[`${f.name}To`])}`);
    }
    for (const op of filterOps(f)) {
      const key = filterParam(f.name, op);
      if (!given(key)) continue;
      const v = query[key];
      if (op === 'isNull') out.push(`${col} is ${v === true || v === 'true' ? '' : 'not '}null`);
      else if (op === 'ne') out.push(`${col} is distinct from ${p.add(value(v))}`);
      else if (op === 'contains') out.push(`${col} ilike ${p.add(`%${likeLiteral(String(v))}%`)}`);
      else if (op === 'startsWith') out.push(`${col} ilike ${p.add(`${likeLiteral(String(v))}%`)}`);
      else if (op === 'in')
        out.push(
          `${col} in (${inValues(f, key, String(v))
            .map((x) => p.add(value(x)))
            .join(', ')})`,
        );
      else out.push(`${col} ${COMPARE[op]} ${p.add(v)}`);
    }
  }
  return out;
}

/** The values of an `in` list, each checked as the field's type: a 400 naming the parameter otherwise. */
function inValues(f: FieldModel, key: string, text: string): string[] {
  const values = text.split(',');
  const fail = (message: string) => httpError('VALIDATION_FAILED', `${key}: ${message}`, { errors: [{ path: `/${key}`, message }] });
  if (values.length > IN_LIMIT) throw fail(`holds ${values.length} values, at most ${IN_LIMIT} are allowed`);
  values.forEach((v, i) => {
    const problem = valueProblem(f, v);
    if (problem) throw fail(`value ${i + 1} ${problem}`);
  });
  return values;
}

const INTEGER = /^-?(0|[1-9]\d{0,9})$/;
const DECIMAL = /^-?(0|[1-9]\d{0,37})(\.\d{1,38})?$/;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^(\d{4})-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-](0\d|1[0-5]):[0-5]\d)$/;

/** Why `v` is no value of `f` as a list compares it; undefined when it is one. */
export function valueProblem(f: FieldModel, v: string): string | undefined {
  switch (f.type) {
    case 'integer':
      return INTEGER.test(v) && Math.abs(Number(v)) <= 2147483647 ? undefined : 'must be an integer';
    case 'decimal':
      return DECIMAL.test(v) ? undefined : 'must be a decimal number';
    case 'date': {
      const m = DATE.exec(v);
      const d = m && new Date(`${v}T00:00:00Z`);
      return m && Number(m[1]) >= 1 && d && d.toISOString().slice(0, 10) === v ? undefined : 'must be a date (YYYY-MM-DD)';
    }
    case 'datetime': {
      const m = DATE_TIME.exec(v);
      return m && Number(m[1]) >= 1 && !Number.isNaN(Date.parse(v)) ? undefined : 'must be an RFC 3339 date-time';
    }
    case 'ref':
      return UUID.test(v) || (v === ME && refersToUser(f)) ? undefined : refersToUser(f) ? 'must be a UUID or me' : 'must be a UUID';
    case 'enum':
      return f.values!.includes(v) ? undefined : `must be one of ${f.values!.join(', ')}`;
    default: {
      const limit = f.maxLength ?? (f.type === 'string' ? 255 : undefined);
      return limit !== undefined && v.length > limit ? `is longer than ${limit} characters` : undefined;
    }
  }
}

/** The value a filter on a ref to the user entity takes for the caller. */
export const ME = 'me';
export const refersToUser = (f: FieldModel) => f.type === 'ref' && f.entity === USER_ENTITY;

/**
 * The query with the entity's listDefaults (manifest) for each field the
 * query names no filter on: `{ archived: false }` lists archived rows only
 * when a filter on archived asks for them.
 */
export function withListDefaults<T extends Record<string, unknown>>(model: EntityModel, query: T): T {
  const defaults = model.definition.listDefaults;
  if (!defaults) return query;
  const out: Record<string, unknown> = { ...query };
  for (const [field, value] of Object.entries(defaults)) {
    const named = Object.keys(query).some((k) => query[k] !== undefined && (k === field || k === `${field}From` || k === `${field}To` || k.startsWith(`${field}[`)));
    if (!named) out[field] = value;
  }
  return out as T;
}

/** The named filters (manifest "filters") a query sets: each condition, and whether `false` asks for the rows it does not hold. */
export function namedFilterConditions(model: EntityModel, query: Record<string, unknown>): { where: Record<string, unknown>; negate: boolean }[] {
  return Object.entries(model.definition.filters ?? {}).flatMap(([name, f]) => {
    const v = query[name];
    if (v === undefined) return [];
    return [{ where: f.where, negate: !(v === true || v === 'true') }];
  });
}
