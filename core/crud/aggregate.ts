// Aggregates over one entity, for module code (reports, dashboards): counts,
// sums, averages, minima and maxima, optionally grouped by fields (dates by
// day, week, month or year) and each measure optionally filtered by its own
// condition. One SQL statement, grouped in PostgreSQL: rows are never loaded
// to be counted in memory.
//
// The caller's read scope (company and grant conditions, relational ones
// included) is always part of the statement, so an aggregate counts exactly
// the rows a list would show. A field the caller's field rules hide on every
// row may not be grouped, measured or filtered on (403); one hidden on some
// rows reads as null there, as in lists. Field names are looked up in the
// model (an unknown one is 400, never SQL), values are bound parameters, and
// the SQL names its columns g0…, m0…: no name the caller chose reaches SQL.
import type { EntityManager } from '@mikro-orm/core';
import { and, columnOf, compileCondition, type Condition, type Fragment } from '../data/scope.ts';
import { iso, run, type Params } from '../data/sql.ts';
import { FieldResolver, hidden, invalid, type AggregateSource, type Field } from './aggregate-fields.ts';
import { compileFilter, type FieldFilter } from './aggregate-filters.ts';

export type { AggregateSource, FieldFilter };
export type Granularity = 'day' | 'week' | 'month' | 'quarter' | 'year';
/** A field, or a date/datetime field truncated to a period (the period's first day, YYYY-MM-DD; weeks start on Monday). */
export type GroupKey =
  string | { field: string; by: Granularity; /** datetime only: the zone whose days count (default UTC) */ timeZone?: string; /** the result's key (default the field) */ as?: string };
/** One measure; `where` counts only the rows meeting it (SQL `filter (where …)`). */
export type Measure = ({ count: true } | { countDistinct: string } | { sum: string } | { avg: string } | { min: string } | { max: string }) & { where?: Condition };

/**
 * Field names may follow declared refs: `projectId.name` is the name of the
 * row `projectId` points at, read in the caller's own scope of that entity
 * (null where they could not read the row; 403 for an entity they may not
 * read at all). Grouping by, measuring and filtering on such paths joins the
 * referenced tables (crud/aggregate-fields.ts).
 */
export interface AggregateQuery {
  /**
   * one result row per distinct combination: fields, ref paths, or dates truncated to a period,
   * e.g. ['projectId.name', { field: 'dueDate', by: 'week' }]; none: one row over all rows
   */
  groupBy?: GroupKey[];
  /** by result key, e.g. { open: { count: true, where: { category: { $nin: ['done'] } } }, hours: { sum: 'estimate' } }; at least one measure or one group key */
  measures?: Record<string, Measure>;
  /** rows to aggregate, in grant-condition syntax ($exists included), within the read scope; fields of the entity itself */
  where?: Condition;
  /** more conditions on fields, ref paths included, with a fixed set of operators (crud/aggregate-filters.ts) */
  filters?: FieldFilter[];
  /** group keys and measure names, "-" for descending, comma-separated; default the group keys in order (nulls last) */
  orderBy?: string;
  /** most groups returned (default 1000, at most 10000) */
  limit?: number;
  /** groups skipped first (default 0) */
  offset?: number;
}

/**
 * A group's values: group keys as the API shows the field (dates YYYY-MM-DD,
 * decimals as strings); counts as numbers; sums of integers as numbers, of
 * decimals as decimal strings of the field's scale (0 over no rows); averages
 * as decimal strings of the field's scale (decimals) or 2 places (integers),
 * null over no rows; min and max as the field's values.
 */
export type AggregateRow = Record<string, string | number | boolean | null>;

/** A result column: its key, the type of its values (as the API shows them) and a label from the manifests. */
export interface AggregateColumn {
  /** the group key or measure name, as in the rows */
  key: string;
  /** the API type of its values (integer, decimal, string, date, …) */
  type: string;
  /** from the manifests: a group key's field label ("Due date (week)"), a measure's kind and field ("Sum of Estimate", "Count") */
  label: string;
}

/** A column an aggregate may name: its API type and how PostgreSQL holds it. */
/** (a table of another database, the groups of another aggregate: crud/column-aggregate.ts) */
export interface TypedColumn {
  /** as queries name it */
  name: string;
  /** as people read it */
  label: string;
  /** integer, decimal, string, uuid, boolean, date, datetime or enum */
  type: string;
  /** the PostgreSQL type (int8, numeric, timestamptz…): how values are bound and compared */
  dbType: string;
  /** decimal: digits after the point */
  scale?: number;
  /** enum: the values it takes */
  values?: string[];
  /** the column's SQL name, when it is not `name` */
  column?: string;
}

/** A statement ready to run: its text (values only as $n), values, columns and how rows become results. */
export interface AggregateStatement {
  sql: string;
  values: unknown[];
  columns: AggregateColumn[];
  shape(rows: Record<string, unknown>[]): AggregateRow[];
  /** the result as a table of typed columns (c0, c1, … in a derived statement), for an aggregate over it (column-aggregate.ts) */
  derived: TypedColumn[];
}

const KINDS = ['count', 'countDistinct', 'sum', 'avg', 'min', 'max'] as const;
type Kind = (typeof KINDS)[number];
const GRANULARITIES = new Set<string>(['day', 'week', 'month', 'quarter', 'year']);
const NUMERIC = new Set(['integer', 'decimal']);
const ORDERED = new Set(['integer', 'decimal', 'date', 'datetime', 'string', 'enum']);
/** what a field may be grouped by and counted distinct on: scalar values (no documents, translations or secrets) */
const SCALAR = new Set(['string', 'text', 'enum', 'boolean', 'integer', 'decimal', 'ref', 'date', 'datetime']);
const MAX_LIMIT = 10_000;
const MAX_OFFSET = 1_000_000;
const MAX_FILTERS = 50;
const KIND_LABELS: Record<Kind, string> = { count: 'Count', countDistinct: 'Distinct', sum: 'Sum', avg: 'Average', min: 'Minimum', max: 'Maximum' };

/** Runs `query` over the rows of `source.model` that `scope` (the caller's read scope) holds. */
export async function aggregate(em: EntityManager, p: Params, source: AggregateSource, scope: Fragment, query: AggregateQuery): Promise<AggregateRow[]> {
  const statement = compileAggregate(p, source, scope, query);
  return statement.shape(await run(em, statement.sql, statement.values));
}

/**
 * The one statement of `query`, without running it. `derived`: its groups as
 * a table for another aggregate (raw values in columns c0, c1, …; a limit only
 * when the query names one).
 */
export function compileAggregate(p: Params, source: AggregateSource, scope: Fragment, query: AggregateQuery, opts: { maxLimit?: number; peek?: boolean; derived?: boolean } = {}): AggregateStatement {
  const maxLimit = opts.maxLimit ?? MAX_LIMIT;
  const { model } = source;
  const fields = new FieldResolver(source);
  const field = (name: unknown, path: string, allowed: Set<string>, what: string): Field => {
    const f = fields.resolve(name, path);
    if (!allowed.has(f.type)) throw invalid(path, `${model.name}.${f.name} (${f.type}) cannot be ${what}`);
    return f;
  };
  if (query.groupBy !== undefined && !Array.isArray(query.groupBy)) throw invalid('/groupBy', 'is a list');
  // outer: as the API shows it; raw and as: as an aggregate over this one reads it
  const keys: { key: string; inner: Fragment; outer: (col: string) => string; type: string; label: string; raw?: (col: string) => string; as: Held }[] = [];
  (query.groupBy ?? []).forEach((g, i) => {
    const path = `/groupBy/${i}`;
    if (typeof g === 'string') {
      const f = field(g, path, SCALAR, 'grouped by');
      keys.push({ key: f.name, inner: f.value, outer: (col) => shaped(f.type, col), type: f.type, label: f.label, as: held(f) });
      return;
    }
    if (!g || typeof g !== 'object' || !GRANULARITIES.has(g.by) || (g.as !== undefined && typeof g.as !== 'string')) {
      throw invalid(path, 'is a field name or { field, by: day|week|month|quarter|year, timeZone?, as? }');
    }
    const f = field(g.field, `${path}/field`, new Set(['date', 'datetime']), `grouped by ${g.by}`);
    const zone = g.timeZone ?? 'UTC';
    if (f.type === 'datetime' && (typeof zone !== 'string' || !isTimeZone(zone))) throw invalid(`${path}/timeZone`, 'is no IANA time zone');
    // the truncation's unit is one of five words checked above; the zone is a bound value
    const inner: Fragment = f.type === 'date' ? (x) => `date_trunc('${g.by}', (${f.value(x)})::timestamp)::date` : (x) => `date_trunc('${g.by}', (${f.value(x)}) at time zone ${x.add(zone)})::date`;
    keys.push({ key: g.as ?? f.name, inner, outer: (col) => shaped('date', col), type: 'date', label: `${f.label} (${g.by})`, as: { type: 'date', dbType: 'date' } });
  });

  if (query.measures !== undefined && (!query.measures || typeof query.measures !== 'object' || Array.isArray(query.measures))) throw invalid('/measures', 'is an object of measures by name');
  const measures: { key: string; inner: Fragment; outer: (col: string) => string; number?: boolean; type: string; label: string; raw?: (col: string) => string; as: Held }[] = [];
  for (const [key, m] of Object.entries(query.measures ?? {})) {
    const path = `/measures/${key}`;
    const kinds = m && typeof m === 'object' ? KINDS.filter((k) => k in m) : [];
    if (kinds.length !== 1) throw invalid(path, `names one of ${KINDS.join(', ')}`);
    const kind: Kind = kinds[0];
    const named = (m as Record<string, unknown>)[kind];
    const filter = m.where === undefined ? () => '' : conditionOf(source, m.where, `${path}/where`);
    const where = (x: Params) => {
      const c = filter(x);
      return c ? ` filter (where ${c})` : '';
    };
    if (kind === 'count') {
      if (named !== true) throw invalid(`${path}/count`, 'is true');
      measures.push({ key, inner: (x) => `count(*)${where(x)}`, outer: (col) => `${col}::int`, type: 'integer', label: KIND_LABELS.count, as: COUNT });
      continue;
    }
    const allowed = kind === 'countDistinct' ? SCALAR : kind === 'sum' || kind === 'avg' ? NUMERIC : ORDERED;
    const f = field(named, `${path}/${kind}`, allowed, kind === 'countDistinct' ? 'counted distinct' : kind === 'avg' ? 'averaged' : kind === 'sum' ? 'summed' : `measured by ${kind}`);
    const scale = f.type === 'decimal' ? f.scale : kind === 'avg' ? 2 : 0;
    const label = `${KIND_LABELS[kind]} of ${f.label}`;
    const exact = { dbType: 'numeric', scale };
    if (kind === 'countDistinct') measures.push({ key, inner: (x) => `count(distinct ${f.value(x)})${where(x)}`, outer: (col) => `${col}::int`, type: 'integer', label, as: COUNT });
    else if (kind === 'sum') {
      const raw = (col: string) => `round(coalesce(${col}, 0), ${scale})`;
      measures.push({
        key,
        inner: (x) => `sum(${f.value(x)})${where(x)}`,
        outer: (col) => `${raw(col)}::text`,
        number: f.type === 'integer',
        type: f.type,
        label,
        raw,
        as: { type: f.type, ...exact },
      });
    } else if (kind === 'avg') {
      const raw = (col: string) => `round(${col}, ${scale})`;
      measures.push({ key, inner: (x) => `avg(${f.value(x)})${where(x)}`, outer: (col) => `${raw(col)}::text`, type: 'decimal', label, raw, as: { type: 'decimal', ...exact } });
    } else measures.push({ key, inner: (x) => `${kind}(${f.value(x)})${where(x)}`, outer: (col) => shaped(f.type, col), type: f.type, label, as: held(f) });
  }

  const names = [...keys.map((k) => k.key), ...measures.map((m) => m.key)];
  if (!names.length) throw invalid('/measures', 'names at least one measure (or groupBy one field)');
  const twice = names.find((n, i) => names.indexOf(n) !== i);
  if (twice !== undefined) throw invalid('/measures', `names "${twice}" twice (group keys and measures share the row)`);
  const limit = query.limit ?? 1000;
  if (!Number.isInteger(limit) || limit < 1 || limit > maxLimit) throw invalid('/limit', `is an integer from 1 to ${maxLimit}`);
  const offset = query.offset ?? 0;
  if (!Number.isInteger(offset) || offset < 0 || offset > MAX_OFFSET) throw invalid('/offset', `is an integer from 0 to ${MAX_OFFSET}`);

  if (query.filters !== undefined && (!Array.isArray(query.filters) || query.filters.length > MAX_FILTERS)) throw invalid('/filters', `is a list of at most ${MAX_FILTERS} filters`);
  const filters = (query.filters ?? []).map((f, i) => {
    const path = `/filters/${i}`;
    if (!f || typeof f !== 'object') throw invalid(path, 'is { field, op, value | values }');
    return compileFilter(fields.resolve(f.field, `${path}/field`), f, path);
  });
  const where = and([scope, query.where === undefined ? () => 'true' : conditionOf(source, query.where, '/where'), ...filters]);
  const alias = new Map([...keys.map((k, i) => [k.key, `g${i}`] as const), ...measures.map((m, i) => [m.key, `m${i}`] as const)]);
  const order = orderOf(query.orderBy, alias, keys.length);
  const inner = [...keys.map((k, i) => `${k.inner(p)} as "g${i}"`), ...measures.map((m, i) => `${m.inner(p)} as "m${i}"`)];
  const from = `from ${p.table(model.table)} t${fields.joins()(p)} where ${where(p)}`;
  const grouped = keys.length ? ` group by ${keys.map((_, i) => i + 1).join(', ')}` : '';
  const outer = [...keys.map((k, i) => `${k.outer(`s."g${i}"`)} as "g${i}"`), ...measures.map((m, i) => `${m.outer(`s."m${i}"`)} as "m${i}"`)];
  // peek: one row more than asked, so the caller learns that the result was cut
  const rows = opts.derived ? (query.limit === undefined ? '' : ` limit ${p.add(limit)}`) : ` limit ${p.add(opts.peek ? limit + 1 : limit)}`;
  const paging = `${rows}${offset ? ` offset ${p.add(offset)}` : ''}`;
  const parts = [...keys.map((k, i) => [k, `g${i}`] as const), ...measures.map((m, i) => [m, `m${i}`] as const)];
  const selected = opts.derived ? parts.map(([k, name], i) => `${(k.raw ?? ((col: string) => col))(`s."${name}"`)} as "c${i}"`) : outer;
  const sql = `select ${selected.join(', ')} from (select ${inner.join(', ')} ${from}${grouped}) s${order ? ` order by ${order}` : ''}${paging}`;
  return {
    sql,
    values: p.values,
    columns: [...keys.map((k) => ({ key: k.key, type: k.type, label: k.label })), ...measures.map((m) => ({ key: m.key, type: m.number ? 'integer' : m.type, label: m.label }))],
    derived: parts.map(([k], i) => ({ name: k.key, label: k.label, column: `c${i}`, ...k.as })),
    shape: (rows) =>
      rows.map((r) =>
        Object.fromEntries([
          ...keys.map((k, i) => [k.key, r[`g${i}`] ?? null]),
          ...measures.map((m, i) => {
            const v = r[`m${i}`] ?? null;
            return [m.key, m.number && v !== null ? Number(v) : v];
          }),
        ]),
      ) as AggregateRow[],
  };
}

/** A condition compiled by the scope compiler, its field names checked first (so a wrong one is a 400 or 403, never SQL). */
function conditionOf(source: AggregateSource, cond: unknown, path: string): Fragment {
  if (!cond || typeof cond !== 'object' || Array.isArray(cond)) throw invalid(path, 'is a condition object');
  for (const name of fieldsOf(cond as Condition)) {
    if (!columnOf(source.model, name)) throw invalid(path, `names no field "${name}" of ${source.model.name}`);
    hidden(source.model, source.ability, name, path);
  }
  return compileCondition(source.models, source.model, cond as Condition);
}

/** The field names a condition tests on its own entity ($exists tests another). */
function fieldsOf(cond: Condition, out: string[] = []): string[] {
  for (const [key, value] of Object.entries(cond)) {
    if (key === '$and' || key === '$or') for (const c of Array.isArray(value) ? value : []) fieldsOf(c as Condition, out);
    else if (key === '$not') fieldsOf(value as Condition, out);
    else if (key !== '$exists') out.push(key);
  }
  return out;
}

/** `order by` of the outer select from "a,-b": names only, mapped to the statement's own column names. */
function orderOf(spec: string | undefined, alias: Map<string, string>, groups: number): string {
  const given = (spec ?? '').split(',').filter(Boolean);
  const parts = given.map((part) => {
    const desc = part.startsWith('-');
    const col = alias.get(desc ? part.slice(1) : part);
    if (!col) throw invalid('/orderBy', `"${part}" is no group key or measure of this aggregate`);
    return `s."${col}" ${desc ? 'desc nulls last' : 'asc nulls last'}`;
  });
  // then every group key, so equal rows come in one order every time
  for (let i = 0; i < groups; i++) if (!given.some((g) => alias.get(g.replace(/^-/, '')) === `g${i}`)) parts.push(`s."g${i}" asc nulls last`);
  return parts.join(', ');
}

/** How a derived table holds a group key or measure: its type for the aggregate over it, and PostgreSQL's. */
type Held = Pick<TypedColumn, 'type' | 'dbType' | 'scale' | 'values'>;
const COUNT: Held = { type: 'integer', dbType: 'int8' };
const DB_TYPES: Record<string, string> = { string: 'text', text: 'text', enum: 'text', integer: 'int4', decimal: 'numeric', boolean: 'bool', date: 'date', datetime: 'timestamptz', ref: 'uuid' };

/** A field's values as a derived table holds them: texts as strings, references as UUIDs. */
function held(f: Field): Held {
  const type = f.type === 'ref' ? 'uuid' : f.type === 'text' ? 'string' : f.type;
  return { type, dbType: DB_TYPES[f.type] ?? 'text', ...(f.type === 'decimal' ? { scale: f.scale } : {}), ...(f.values ? { values: f.values } : {}) };
}

/** A value in the API's shape: dates YYYY-MM-DD, instants ISO, decimals as exact text. */
function shaped(type: string, col: string): string {
  if (type === 'date') return `to_char(${col}, 'YYYY-MM-DD')`;
  if (type === 'datetime') return iso(col);
  if (type === 'decimal') return `${col}::text`;
  return col;
}

function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}
