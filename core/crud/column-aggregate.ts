// An aggregate over a table of typed columns whose SQL names the kernel knows
// only from a list: a table of another database (a BI data source, from its
// introspection) or the groups of another aggregate (a saved query used as a
// table: `derived`). Every name is looked up in that list (a wrong one is 400
// naming its place), identifiers come only from it and are quoted, every value
// is checked against its column's type and bound with a cast, and the
// semantics follow the entity aggregates (aggregate.ts): dates YYYY-MM-DD,
// instants ISO in UTC, counts and integer sums as numbers, decimals as exact
// text, `notEquals` and `notIn` matching rows without a value, `contains`
// case-insensitive with % and _ taken literally, weeks from Monday, days of
// datetimes in the given time zone. A timestamp without a time zone is read
// as UTC. References lead nowhere: such a table joins no other table.
import { httpError } from '../errors.ts';
import { FILTER_OPS, filterValue, type FieldFilter } from './aggregate-filters.ts';
import type { AggregateColumn, AggregateQuery, AggregateRow, TypedColumn } from './aggregate.ts';

/** A table of typed columns: `from` is its SQL (a quoted table, or a parenthesised select). */
export interface ColumnTable {
  /** the table's name, for messages (a query names its columns, not the table) */
  name: string;
  /** the columns a query may name */
  columns: TypedColumn[];
}

/** compileColumnAggregate()'s statement, for the caller to run on its own connection. */
export interface ColumnStatement {
  /** the statement's text, values only as $n */
  sql: string;
  /** the values of its $n, in order */
  values: unknown[];
  /** each group key and measure: key, type and label */
  columns: AggregateColumn[];
  /** the groups asked for: the statement selects one more (unless derived), to tell whether there were more */
  wanted: number;
  /** the statement's result rows with their values typed as aggregate() answers them */
  shape(rows: Record<string, unknown>[]): AggregateRow[];
  /** derived: the result as a table of typed columns (c0, c1, … in SQL), for an aggregate over it */
  derived: TypedColumn[];
}

const NUMERIC = new Set(['integer', 'decimal']);
const ORDERED = new Set(['integer', 'decimal', 'date', 'datetime', 'string', 'enum']);
const SCALAR = new Set(['integer', 'decimal', 'string', 'uuid', 'boolean', 'date', 'datetime', 'enum']);
const GRANULARITIES = new Set(['day', 'week', 'month', 'quarter', 'year']);
const KIND_LABELS: Record<string, string> = { count: 'Count', countDistinct: 'Distinct', sum: 'Sum', avg: 'Average', min: 'Minimum', max: 'Maximum' };
const MAX_VALUES = 100;
const UTC_ISO = `'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`;

const invalid = (path: string, message: string) => httpError('VALIDATION_FAILED', `${path} ${message}`, { errors: [{ path, message }] });
/** an identifier of the introspected model, quoted */
const qi = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** A group key or measure of the statement. */
interface Part {
  key: string;
  inner: string;
  outer: (col: string) => string;
  type: string;
  label: string;
  raw: (col: string) => string;
  /** how the raw value is held, for an aggregate over this one */
  as: Pick<TypedColumn, 'dbType' | 'scale' | 'values'>;
}

/** How a column's raw value is held in a derived table (enums are compared as text). */
function valueOf(c: TypedColumn): Part['as'] {
  return { dbType: c.type === 'enum' ? 'text' : c.dbType, ...(c.scale !== undefined ? { scale: c.scale } : {}), ...(c.values ? { values: c.values } : {}) };
}

/** How a column is compared and how a value is bound to compare with it. */
function comparison(c: TypedColumn): { col: string; cast: string; bound: (param: string) => string } {
  const col = `t.${qi(c.column ?? c.name)}`;
  if (c.type === 'enum') return { col: `${col}::text`, cast: 'text', bound: (p) => p };
  // a timestamp without a time zone holds UTC: the instant is turned into its UTC wall-clock time, so an index still serves
  if (c.dbType === 'timestamp') return { col, cast: 'timestamptz', bound: (p) => `(${p} at time zone 'UTC')` };
  const cast = { integer: 'int8', decimal: c.dbType === 'numeric' ? 'numeric' : 'float8', uuid: 'uuid', boolean: 'bool', date: 'date', datetime: 'timestamptz' }[c.type] ?? 'text';
  return { col, cast, bound: (p) => p };
}

/** A value of the column as the API shows it: dates YYYY-MM-DD, instants ISO in UTC, decimals as text. */
function shown(c: TypedColumn, expr: string): string {
  if (c.type === 'date') return `to_char(${expr}, 'YYYY-MM-DD')`;
  if (c.type === 'datetime') return c.dbType === 'timestamp' ? `to_char(${expr}, ${UTC_ISO})` : `to_char(${expr} at time zone 'UTC', ${UTC_ISO})`;
  if (c.type === 'enum') return `${expr}::text`;
  return expr;
}

/** `\`, `%` and `_` match themselves in a like pattern. */
const literal = (s: string) => s.replace(/[\\%_]/g, (ch) => `\\${ch}`);

/** Integer text as a number while it is exact; booleans as booleans. */
function typed(type: string, v: unknown): string | number | boolean | null {
  if (v === null || v === undefined) return null;
  if (type === 'integer') return Number.isSafeInteger(Number(v)) ? Number(v) : String(v);
  if (type === 'boolean') return v === true || v === 't' || v === 'true';
  return typeof v === 'number' ? v : String(v);
}

/**
 * The one statement of `query` over `table`, whose SQL is `from` (a quoted
 * table, or a parenthesised select whose values are already in `values`), at
 * most `maxRows` groups. `derived`: the groups as a table for another
 * aggregate (raw values, columns c0, c1, …; only a limit the query names).
 */
export function compileColumnAggregate(from: string, table: ColumnTable, query: AggregateQuery, opts: { maxRows: number; values?: unknown[]; derived?: boolean }): ColumnStatement {
  const values: unknown[] = opts.values ?? [];
  const bind = (v: unknown, cast: string) => {
    values.push(v);
    return `$${values.length}::${cast}`;
  };
  const column = (name: unknown, path: string, allowed: Set<string>, what: string): TypedColumn => {
    if (typeof name !== 'string') throw invalid(path, 'is a column name');
    const c = table.columns.find((x) => x.name === name);
    if (!c && name.includes('.')) throw invalid(path, `follows a reference: ${table.name} joins no other table`);
    if (!c) throw invalid(path, `names no column of ${table.name}`);
    if (!allowed.has(c.type)) throw invalid(path, `${table.name}.${c.name} (${c.type}) cannot be ${what}`);
    return c;
  };
  // inner: the value grouped, measured and ordered by; outer: as the API shows it; raw (and its column): as an aggregate over it reads it
  const keys: Part[] = [];
  (query.groupBy ?? []).forEach((g, i) => {
    const path = `/groupBy/${i}`;
    if (typeof g === 'string') {
      const c = column(g, path, SCALAR, 'grouped by');
      keys.push({ key: c.name, inner: comparison(c).col, outer: (col) => shown(c, col), type: c.type, label: c.label, raw: (x) => x, as: valueOf(c) });
      return;
    }
    if (!GRANULARITIES.has(g.by)) throw invalid(path, 'is grouped by day, week, month, quarter or year');
    const c = column(g.field, `${path}/field`, new Set(['date', 'datetime']), `grouped by ${g.by}`);
    const col = `t.${qi(c.column ?? c.name)}`;
    // the unit is one of five words checked above; the zone is bound
    const local = c.type === 'date' ? `${col}::timestamp` : `${c.dbType === 'timestamp' ? `(${col} at time zone 'UTC')` : col} at time zone ${bind(g.timeZone ?? 'UTC', 'text')}`;
    keys.push({
      key: g.as ?? c.name,
      inner: `date_trunc('${g.by}', ${local})::date`,
      outer: (x) => `to_char(${x}, 'YYYY-MM-DD')`,
      type: 'date',
      label: `${c.label} (${g.by})`,
      raw: (x) => x,
      as: { dbType: 'date' },
    });
  });
  // trim: an average of a numeric without scale, whose text PostgreSQL pads with zeros
  const measures: (Part & { trim?: boolean })[] = [];
  for (const [key, m] of Object.entries(query.measures ?? {})) {
    const path = `/measures/${key}`;
    if (m.where !== undefined) throw invalid(`${path}/where`, `is not supported on ${table.name}`);
    const kind = Object.keys(KIND_LABELS).find((k) => k in m)!;
    if (kind === 'count') {
      measures.push({ key, inner: 'count(*)', outer: (x) => x, type: 'integer', label: KIND_LABELS.count, raw: (x) => x, as: { dbType: 'int8' } });
      continue;
    }
    const field = (m as Record<string, unknown>)[kind];
    const allowed = kind === 'countDistinct' ? SCALAR : kind === 'sum' || kind === 'avg' ? NUMERIC : ORDERED;
    const c = column(field, `${path}/${kind}`, allowed, kind === 'countDistinct' ? 'counted distinct' : kind === 'avg' ? 'averaged' : kind === 'sum' ? 'summed' : `measured by ${kind}`);
    const col = comparison(c).col;
    const label = `${KIND_LABELS[kind]} of ${c.label}`;
    // decimals keep their column's scale; an integer average two places; a float or a numeric without scale as PostgreSQL prints it
    const rounded = (x: string, integer: number) => (c.scale !== undefined ? `round((${x})::numeric, ${c.scale})` : c.type === 'integer' ? `round((${x})::numeric, ${integer})` : x);
    const exact = c.scale !== undefined || c.type === 'integer' || c.dbType === 'numeric';
    const number = (integer: number) => ({ dbType: exact ? 'numeric' : 'float8', ...(c.scale !== undefined || c.type === 'integer' ? { scale: c.scale ?? integer } : {}) });
    if (kind === 'countDistinct') measures.push({ key, inner: `count(distinct ${col})`, outer: (x) => x, type: 'integer', label, raw: (x) => x, as: { dbType: 'int8' } });
    else if (kind === 'sum') {
      const raw = (x: string) => rounded(`coalesce(${x}, 0)`, 0);
      measures.push({ key, inner: `sum(${col})`, outer: (x) => `${raw(x)}::text`, type: c.type, label, raw, as: number(0) });
    } else if (kind === 'avg') {
      const raw = (x: string) => rounded(x, 2);
      measures.push({ key, inner: `avg(${col})`, outer: (x) => `${raw(x)}::text`, type: 'decimal', label, trim: c.scale === undefined && c.dbType === 'numeric', raw, as: number(2) });
    } else measures.push({ key, inner: `${kind}(${col})`, outer: (x) => shown(c, x), type: c.type, label, raw: (x) => x, as: valueOf(c) });
  }
  const names = [...keys, ...measures].map((k) => k.key);
  if (!names.length) throw invalid('/measures', 'names at least one measure (or groupBy one field)');
  const filters = (query.filters ?? []).map((f, i) => filterSql(column(f.field, `/filters/${i}/field`, SCALAR, 'filtered on'), f, `/filters/${i}`, bind));
  const alias = new Map(names.map((n, i) => [n, i < keys.length ? `g${i}` : `m${i - keys.length}`]));
  const given = (query.orderBy ?? '').split(',').filter(Boolean);
  const order = given.map((part) => {
    const col = alias.get(part.replace(/^-/, ''));
    if (!col) throw invalid('/orderBy', `"${part}" is no group key or measure of this query`);
    return `s."${col}" ${part.startsWith('-') ? 'desc' : 'asc'} nulls last`;
  });
  // then every group key, so equal rows come in one order every time
  keys.forEach((_, i) => {
    if (!given.some((g) => alias.get(g.replace(/^-/, '')) === `g${i}`)) order.push(`s."g${i}" asc nulls last`);
  });
  if ((query.limit ?? 0) > opts.maxRows) throw invalid('/limit', `is an integer from 1 to ${opts.maxRows}`);
  const wanted = Math.min(query.limit ?? 1000, opts.maxRows);
  const inner = [...keys.map((k, i) => `${k.inner} as "g${i}"`), ...measures.map((m, i) => `${m.inner} as "m${i}"`)];
  const parts = [...keys.map((k, i) => [k, `g${i}`] as const), ...measures.map((m, i) => [m, `m${i}`] as const)];
  const outer = parts.map(([k, name], i) => (opts.derived ? `${k.raw(`s."${name}"`)} as "c${i}"` : `${k.outer(`s."${name}"`)} as "${name}"`));
  const grouped = keys.length ? ` group by ${keys.map((_, i) => i + 1).join(', ')}` : '';
  const where = filters.length ? ` where ${filters.join(' and ')}` : '';
  const limit = opts.derived ? (query.limit === undefined ? '' : ` limit ${bind(query.limit, 'int8')}`) : ` limit ${wanted + 1}`;
  const paging = `${limit}${query.offset ? ` offset ${bind(query.offset, 'int8')}` : ''}`;
  const sql = `select ${outer.join(', ')} from (select ${inner.join(', ')} from ${from} t${where}${grouped}) s${order.length ? ` order by ${order.join(', ')}` : ''}${paging}`;
  const columns = [...keys, ...measures].map((k) => ({ key: k.key, type: k.type, label: k.label }));
  return {
    sql,
    values,
    columns,
    wanted,
    derived: parts.map(([k], i) => ({ name: k.key, label: k.label, type: k.type, column: `c${i}`, ...k.as })),
    shape: (rows) =>
      rows.map((r) =>
        Object.fromEntries([
          ...keys.map((k, i) => [k.key, typed(k.type, r[`g${i}`])]),
          ...measures.map((m, i) => {
            const v = r[`m${i}`];
            return [m.key, m.trim && typeof v === 'string' ? v.replace(/(\.\d*?)0+$/, '$1').replace(/\.$/, '') : typed(m.type, v)];
          }),
        ]),
      ),
  };
}

/** One filter as SQL on the column, its values checked and bound. */
function filterSql(c: TypedColumn, f: FieldFilter, path: string, bind: (v: unknown, cast: string) => string): string {
  const { col, cast, bound } = comparison(c);
  const op = f.op;
  if (!(FILTER_OPS as readonly string[]).includes(op)) throw invalid(`${path}/op`, `is one of ${FILTER_OPS.join(', ')}`);
  if (op === 'set') return `${col} is not null`;
  if (op === 'notSet') return `${col} is null`;
  const one = (v: unknown, at: string) => {
    const ok = filterValue(c.type, v, c.values, { bigint: true });
    if ('error' in ok) throw invalid(at, ok.error);
    return ok.ok;
  };
  if (op === 'in' || op === 'notIn') {
    if (!Array.isArray(f.values) || !f.values.length || f.values.length > MAX_VALUES) throw invalid(`${path}/values`, `is a list of 1 to ${MAX_VALUES} values`);
    const list = f.values.map((v, i) => one(v, `${path}/values/${i}`));
    const any = `any(${c.dbType === 'timestamp' ? `array(select x at time zone 'UTC' from unnest(${bind(list, `${cast}[]`)}) x)` : bind(list, `${cast}[]`)})`;
    return op === 'in' ? `${col} = ${any}` : `(${col} is null or not (${col} = ${any}))`;
  }
  if (f.values !== undefined) throw invalid(`${path}/values`, `is for in and notIn; ${op} takes one value`);
  if (op === 'contains' || op === 'startsWith') {
    if (c.type !== 'string') throw invalid(`${path}/op`, `${op} applies to text columns, not ${c.name} (${c.type})`);
    const v = one(f.value, `${path}/value`) as string;
    return `${col} ilike ${bind(op === 'contains' ? `%${literal(v)}%` : `${literal(v)}%`, 'text')}`;
  }
  const v = bound(bind(one(f.value, `${path}/value`), cast));
  if (op === 'equals') return `${col} = ${v}`;
  if (op === 'notEquals') return `${col} is distinct from ${v}`;
  if (!ORDERED.has(c.type)) throw invalid(`${path}/op`, `${op} applies to numbers, dates and texts, not ${c.name} (${c.type})`);
  return `${col} ${{ gt: '>', gte: '>=', lt: '<', lte: '<=' }[op]} ${v}`;
}
