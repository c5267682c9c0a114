// The analytics query language: a JSON document naming a table of the
// semantic model, its measures, dimensions (ref paths such as
// "projectId.name" included), time dimensions with a granularity and a date
// range, filters, order, limit and offset. It is checked here for shape and
// turned into the kernel's aggregate (ctx.data(table).analyze), which looks
// every name up in the model, binds every value and applies the caller's
// row-level rules of every table involved: no text of the query reaches SQL.
import { addDays, FILTER_OPS, Type, validationError, type AggregateQuery, type Analysis, type FieldFilter, type GroupKey, type Measure } from '../../core/plugin-api.ts';

export const AGGREGATIONS = ['count', 'countDistinct', 'sum', 'avg', 'min', 'max'] as const;
export const GRANULARITIES = ['day', 'week', 'month', 'quarter', 'year'] as const;
export type Role = 'dimension' | 'measure' | 'time';

// The rules parseQuery checks by hand, for messages of its own on GET ?query=: the same as
// the manifest's BiAnalyticsQuery (manifests/bi.json), which a test holds them to.
export const NAME = '^[A-Za-z_][A-Za-z0-9_.]{0,99}$';
// entity fields are camelCase; a data source's columns may hold _ (order_date)
export const FIELD = '^[A-Za-z_][A-Za-z0-9_]{0,62}(\\.[A-Za-z_][A-Za-z0-9_]{0,62}){0,3}$';
/** an entity (Opportunity), or a table of one of the application's data sources (warehouse.orders) */
export const TABLE = '^([A-Z][A-Za-z0-9]{0,62}|[a-z][a-z0-9_]{0,39}\\.[A-Za-z_][A-Za-z0-9_]{0,62}|query:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$';
export const DAY = '^\\d{4}-\\d{2}-\\d{2}$';

/**
 * The query's JSON Schema, declared once in manifests/bi.json ("schemas"):
 * POST /api/bi/analytics's body, a saved query's and a widget's query, and
 * what ?query= must parse to.
 */
export const AnalyticsQuery = Type.Ref('BiAnalyticsQuery');

/** A query's result with what the answer shows beside it; `currencies`: each money measure's currency column. */
export type QueryRun = Analysis & { table: string; roles: Map<string, Role>; currencies?: Map<string, string>; durationMs: number };

export interface ParsedQuery {
  table: string;
  /** the application whose data sources the query may read */
  app?: string;
  aggregate: AggregateQuery;
  /** each result column's role, by name */
  roles: Map<string, Role>;
  /** each money measure (an amount the model gives a currency) → the result column holding its currency */
  currencies: Map<string, string>;
  /** every field path the query names, with where (a JSON pointer into the query) */
  fields: { field: string; at: string }[];
  /** where in the query each part of the aggregate came from: the kernel's error paths, translated */
  origin: { groupBy: string[]; measures: Map<string, string>; filters: string[] };
}

type Json = Record<string, unknown>;
const bad = (path: string, message: string) => validationError([{ path, message }]);
const isObject = (v: unknown): v is Json => !!v && typeof v === 'object' && !Array.isArray(v);
const NAME_RE = new RegExp(NAME);
const FIELD_RE = new RegExp(FIELD);
const DAY_RE = new RegExp(DAY);
const TABLE_RE = new RegExp(TABLE);
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function only(obj: Json, keys: string[], path: string): void {
  const extra = Object.keys(obj).find((k) => !keys.includes(k));
  if (extra !== undefined) throw bad(`${path}/${extra}`, 'is not a property of the query language');
}
function list(v: unknown, path: string, max: number): unknown[] {
  if (v === undefined) return [];
  if (!Array.isArray(v) || v.length > max) throw bad(path, `is a list of at most ${max} entries`);
  return v;
}
function str(v: unknown, path: string, re: RegExp, what: string): string {
  if (typeof v !== 'string' || !re.test(v)) throw bad(path, `is ${what}`);
  return v;
}
function oneOf<T extends string>(v: unknown, path: string, values: readonly T[]): T {
  if (typeof v !== 'string' || !values.includes(v as T)) throw bad(path, `is one of ${values.join(', ')}`);
  return v as T;
}

/**
 * The query checked for shape (the kernel checks every name against the
 * model and every value against its field); `timeZone` is whose days the
 * granularities and date ranges of datetime fields count.
 */
export function parseQuery(input: unknown, timeZone: string, fieldType: (table: string, path: string) => string | undefined): ParsedQuery {
  if (!isObject(input)) throw bad('', 'is a query object');
  only(input, ['table', 'app', 'measures', 'dimensions', 'timeDimensions', 'filters', 'order', 'limit', 'offset'], '');
  const table = str(input.table, '/table', TABLE_RE, 'an entity name, `<source>.<table>` or `query:<id>`');
  const app = input.app === undefined ? undefined : str(input.app, '/app', UUID_RE, 'the id of an application');
  const roles = new Map<string, Role>();
  const fields: ParsedQuery['fields'] = [];
  const origin: ParsedQuery['origin'] = { groupBy: [], measures: new Map(), filters: [] };
  const add = (name: string, role: Role, path: string) => {
    if (roles.has(name)) throw bad(path, `names the result column "${name}" twice`);
    roles.set(name, role);
  };
  const groupBy: GroupKey[] = [];
  list(input.dimensions, '/dimensions', 10).forEach((d, i) => {
    const field = str(d, `/dimensions/${i}`, FIELD_RE, 'a field or a path along references ("projectId.name")');
    add(field, 'dimension', `/dimensions/${i}`);
    fields.push({ field, at: `/dimensions/${i}` });
    origin.groupBy.push(`/dimensions/${i}`);
    groupBy.push(field);
  });
  const filters: FieldFilter[] = [];
  list(input.timeDimensions, '/timeDimensions', 3).forEach((t, i) => {
    const path = `/timeDimensions/${i}`;
    if (!isObject(t)) throw bad(path, 'is { field, granularity?, dateRange?, name? }');
    only(t, ['field', 'granularity', 'dateRange', 'name'], path);
    const field = str(t.field, `${path}/field`, FIELD_RE, 'a date or datetime field');
    if (t.granularity === undefined && t.dateRange === undefined) throw bad(path, 'needs a granularity, a dateRange or both');
    fields.push({ field, at: `${path}/field` });
    if (t.granularity !== undefined) {
      const by = oneOf(t.granularity, `${path}/granularity`, GRANULARITIES);
      const name = t.name === undefined ? `${field}.${by}` : str(t.name, `${path}/name`, NAME_RE, 'a column name');
      add(name, 'time', path);
      origin.groupBy.push(path);
      groupBy.push({ field, by, as: name, timeZone });
    } else if (t.name !== undefined) throw bad(`${path}/name`, 'names a grouped column: give a granularity');
    if (t.dateRange !== undefined) {
      const range = dateRange(t.dateRange, `${path}/dateRange`, field, fieldType(table, field), timeZone);
      filters.push(...range);
      origin.filters.push(...range.map(() => `${path}/dateRange`));
    }
  });
  const measures: Record<string, Measure> = {};
  list(input.measures, '/measures', 20).forEach((m, i) => {
    const path = `/measures/${i}`;
    if (!isObject(m)) throw bad(path, 'is { agg, field?, name? }');
    only(m, ['agg', 'field', 'name'], path);
    const agg = oneOf(m.agg, `${path}/agg`, AGGREGATIONS);
    if (agg === 'count' && m.field !== undefined) throw bad(`${path}/field`, 'count counts rows: it takes no field (countDistinct counts values)');
    const field = agg === 'count' ? undefined : str(m.field, `${path}/field`, FIELD_RE, 'the field to aggregate');
    const name = m.name === undefined ? (field ? `${agg}_${field}` : agg) : str(m.name, `${path}/name`, NAME_RE, 'a column name');
    add(name, 'measure', path);
    if (field) fields.push({ field, at: `${path}/field` });
    origin.measures.set(name, path);
    measures[name] = agg === 'count' ? { count: true } : ({ [agg]: field } as unknown as Measure);
  });
  if (!roles.size) throw bad('/measures', 'the query names at least one measure or dimension');
  list(input.filters, '/filters', 30).forEach((f, i) => {
    const path = `/filters/${i}`;
    if (!isObject(f)) throw bad(path, 'is { field, op, value | values }');
    only(f, ['field', 'op', 'value', 'values'], path);
    const field = str(f.field, `${path}/field`, FIELD_RE, 'a field or a path along references');
    const op = oneOf(f.op, `${path}/op`, FILTER_OPS);
    fields.push({ field, at: `${path}/field` });
    origin.filters.push(path);
    filters.push({ field, op, ...(f.value !== undefined ? { value: f.value } : {}), ...(f.values !== undefined ? { values: f.values as unknown[] } : {}) });
  });
  const orderBy = list(input.order, '/order', 10).map((o, i) => {
    const path = `/order/${i}`;
    if (!isObject(o)) throw bad(path, 'is { by, dir? }');
    only(o, ['by', 'dir'], path);
    const by = str(o.by, `${path}/by`, NAME_RE, 'a result column');
    if (!roles.has(by)) throw bad(`${path}/by`, `"${by}" is no column of the result`);
    const dir = o.dir === undefined ? 'asc' : oneOf(o.dir, `${path}/dir`, ['asc', 'desc'] as const);
    return dir === 'desc' ? `-${by}` : by;
  });
  const int = (v: unknown, path: string, min: number, max: number) => {
    if (v === undefined) return undefined;
    if (!Number.isInteger(v) || (v as number) < min || (v as number) > max) throw bad(path, `is an integer from ${min} to ${max}`);
    return v as number;
  };
  const limit = int(input.limit, '/limit', 1, 10_000);
  const offset = int(input.offset, '/offset', 0, 1_000_000);
  const aggregate: AggregateQuery = { groupBy, measures, filters, ...(orderBy.length ? { orderBy: orderBy.join(',') } : {}) };
  if (limit !== undefined) aggregate.limit = limit;
  if (offset !== undefined) aggregate.offset = offset;
  return { table, ...(app ? { app } : {}), aggregate, roles, currencies: new Map(), fields, origin };
}

/** Aggregations whose result is an amount in the currency of the values: they never mix two currencies. */
const MONEY_AGGREGATIONS = new Set(['sum', 'avg', 'min', 'max']);

/**
 * Amounts of different currencies are never added up (nor averaged or
 * compared) into one figure: a sum, average, minimum or maximum of a field the
 * model gives a currency (`currencyOf`: the path of the field holding it, from
 * the query's table) is grouped by that currency too, unless the query groups
 * by it already; the group's column is named by its path. Each such measure's
 * currency column goes into `parsed.currencies`.
 */
export function perCurrency(parsed: ParsedQuery, currencyOf: (path: string) => string | undefined): ParsedQuery {
  const groupBy = parsed.aggregate.groupBy!;
  for (const [name, measure] of Object.entries(parsed.aggregate.measures ?? {})) {
    const [agg, field] = Object.entries(measure).find(([k]) => MONEY_AGGREGATIONS.has(k)) ?? [];
    const currency = typeof field === 'string' ? currencyOf(field) : undefined;
    if (!agg || !currency) continue;
    if (!groupBy.includes(currency)) {
      if (parsed.roles.has(currency)) throw bad(parsed.origin.measures.get(name)!, `adds amounts of money: they are grouped by their currency, whose column "${currency}" another column names`);
      groupBy.push(currency);
      parsed.roles.set(currency, 'dimension');
      // the kernel's faults about this group (a currency field out of reach) point at the measure
      parsed.origin.groupBy.push(`${parsed.origin.measures.get(name)!}/field`);
    }
    parsed.currencies.set(name, currency);
  }
  return parsed;
}

/** The kernel names parts of its aggregate (/groupBy/1, /measures/total/sum, /filters/0/value): say where they are in the query. */
export function retargeted(err: unknown, parsed: ParsedQuery): unknown {
  const errors = (err as { errors?: { path: string; message: string }[] }).errors;
  if (!Array.isArray(errors)) return err;
  for (const e of errors) {
    const m = /^\/(groupBy|measures|filters)\/([^/]+)(\/.*)?$/.exec(e.path);
    if (!m) continue;
    const base = m[1] === 'measures' ? parsed.origin.measures.get(m[2]) : parsed.origin[m[1] as 'groupBy' | 'filters'][Number(m[2])];
    if (base === undefined) continue;
    if (m[1] === 'measures' || (m[1] === 'groupBy' && base.startsWith('/timeDimensions'))) e.path = `${base}/field`;
    else if (base.endsWith('/dateRange') || m[1] === 'groupBy') e.path = base;
    else e.path = `${base}${m[3] ?? ''}`;
  }
  return err;
}

/** A date range as two filters: from the first day's start to the last day's end, in the tenant's zone for datetime fields. */
function dateRange(v: unknown, path: string, field: string, type: string | undefined, timeZone: string): FieldFilter[] {
  if (!Array.isArray(v) || v.length !== 2) throw bad(path, 'is [first day, last day]');
  const [from, to] = v.map((d, i) => str(d, `${path}/${i}`, DAY_RE, 'a date YYYY-MM-DD'));
  if (from > to) throw bad(path, 'starts after it ends');
  if (type === 'date') {
    return [
      { field, op: 'gte', value: from },
      { field, op: 'lte', value: to },
    ];
  }
  if (type !== 'datetime') throw bad(`${path.replace(/\/dateRange$/, '')}/field`, 'is a date or datetime field');
  const next = safeNext(to, path);
  return [
    { field, op: 'gte', value: startOfDay(from, timeZone, path) },
    { field, op: 'lt', value: startOfDay(next, timeZone, path) },
  ];
}

function safeNext(day: string, path: string): string {
  try {
    const next = addDays(day, 1);
    if (!DAY_RE.test(next)) throw new Error('out of range');
    return next;
  } catch {
    throw bad(path, 'holds a date that does not exist');
  }
}

/** The instant `day` starts in `timeZone`, as ISO 8601. */
function startOfDay(day: string, timeZone: string, path: string): string {
  const utc = new Date(`${day}T00:00:00Z`);
  if (Number.isNaN(utc.getTime()) || utc.toISOString().slice(0, 10) !== day) throw bad(path, `holds ${day}, which is no date`);
  // the zone's offset at that moment, then once more at the corrected moment (a day starting in a DST change)
  let at = utc.getTime() - offset(utc, timeZone);
  at = utc.getTime() - offset(new Date(at), timeZone);
  return new Date(at).toISOString();
}

function offset(at: Date, timeZone: string): number {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', { timeZone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' })
      .formatToParts(at)
      .map((p) => [p.type, p.value]),
  );
  const local = Date.UTC(Number(parts.year), Number(parts.month) - 1, Number(parts.day), Number(parts.hour), Number(parts.minute), Number(parts.second));
  return local - Math.floor(at.getTime() / 1000) * 1000;
}
