// An analytics query over a table of an external data source, compiled into
// one select for that database. The query was parsed into the kernel's
// aggregate shape (query.ts) as for entities; here every name is looked up in
// the table the source's test introspected (a wrong one is 400 naming its
// place), identifiers come only from that model and are quoted, every value
// is checked against its column's type and bound with a cast, and the
// semantics follow the kernel's aggregates (crud/aggregate.ts): dates
// YYYY-MM-DD, instants ISO in UTC, counts and integer sums as numbers,
// decimals as exact text, `notEquals` and `notIn` matching rows without a
// value, `contains` case-insensitive with % and _ taken literally, weeks from
// Monday, days of datetimes in the tenant's time zone. A timestamp without a
// time zone is read as UTC. References lead nowhere: an external table joins
// no other table.
import { FILTER_OPS, filterValue, validationError, type AggregateQuery, type AggregateRow, type FieldFilter } from '../../core/plugin-api.ts';
import type { SourceColumn, SourceTable } from './external-model.ts';

export interface ExternalStatement {
  sql: string;
  values: unknown[];
  columns: { key: string; type: string; label: string }[];
  /** the groups asked for: the statement selects one more, to tell whether there were more */
  wanted: number;
  shape(rows: Record<string, string | null>[]): AggregateRow[];
}

const NUMERIC = new Set(['integer', 'decimal']);
const ORDERED = new Set(['integer', 'decimal', 'date', 'datetime', 'string', 'enum']);
const SCALAR = new Set(['integer', 'decimal', 'string', 'uuid', 'boolean', 'date', 'datetime', 'enum']);
const GRANULARITIES = new Set(['day', 'week', 'month', 'quarter', 'year']);
const KIND_LABELS: Record<string, string> = { count: 'Count', countDistinct: 'Distinct', sum: 'Sum', avg: 'Average', min: 'Minimum', max: 'Maximum' };
const MAX_VALUES = 100;
const UTC_ISO = `'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`;

const invalid = (path: string, message: string) => validationError([{ path, message }]);
/** an identifier of the introspected model, quoted */
const qi = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** How a column is compared and how a value is bound to compare with it. */
function comparison(c: SourceColumn): { col: string; cast: string; bound: (param: string) => string } {
  const col = `t.${qi(c.name)}`;
  if (c.type === 'enum') return { col: `${col}::text`, cast: 'text', bound: (p) => p };
  // a timestamp without a time zone holds UTC: the instant is turned into its UTC wall-clock time, so an index still serves
  if (c.dbType === 'timestamp') return { col, cast: 'timestamptz', bound: (p) => `(${p} at time zone 'UTC')` };
  const cast = { integer: 'int8', decimal: c.dbType === 'numeric' ? 'numeric' : 'float8', uuid: 'uuid', boolean: 'bool', date: 'date', datetime: 'timestamptz' }[c.type] ?? 'text';
  return { col, cast, bound: (p) => p };
}

/** A value of the column as the API shows it: dates YYYY-MM-DD, instants ISO in UTC, decimals as text. */
function shown(c: SourceColumn, expr: string): string {
  if (c.type === 'date') return `to_char(${expr}, 'YYYY-MM-DD')`;
  if (c.type === 'datetime') return c.dbType === 'timestamp' ? `to_char(${expr}, ${UTC_ISO})` : `to_char(${expr} at time zone 'UTC', ${UTC_ISO})`;
  if (c.type === 'enum') return `${expr}::text`;
  return expr;
}

/** `\`, `%` and `_` match themselves in a like pattern. */
const literal = (s: string) => s.replace(/[\\%_]/g, (ch) => `\\${ch}`);

/** Integer text as a number while it is exact; booleans as booleans. */
function typed(type: string, v: string | null): string | number | boolean | null {
  if (v === null) return null;
  if (type === 'integer') return Number.isSafeInteger(Number(v)) ? Number(v) : v;
  if (type === 'boolean') return v === 't' || v === 'true';
  return v;
}

/** The one statement of `query` over `table` in schema `schemaName`, at most `maxRows` groups. */
export function compileExternal(schemaName: string, table: SourceTable, query: AggregateQuery, opts: { maxRows: number }): ExternalStatement {
  const values: unknown[] = [];
  const bind = (v: unknown, cast: string) => {
    values.push(v);
    return `$${values.length}::${cast}`;
  };
  const column = (name: unknown, path: string, allowed: Set<string>, what: string): SourceColumn => {
    if (typeof name !== 'string') throw invalid(path, 'is a column name');
    if (name.includes('.')) throw invalid(path, `follows a reference: a table of a data source joins no other table`);
    const c = table.columns.find((x) => x.name === name);
    if (!c) throw invalid(path, `names no column of ${table.name}`);
    if (!allowed.has(c.type)) throw invalid(path, `${table.name}.${c.name} (${c.type}) cannot be ${what}`);
    return c;
  };
  // inner: the value grouped, measured and ordered by; outer: as the API shows it
  const keys: { key: string; inner: string; outer: (col: string) => string; type: string; label: string }[] = [];
  (query.groupBy ?? []).forEach((g, i) => {
    const path = `/groupBy/${i}`;
    if (typeof g === 'string') {
      const c = column(g, path, SCALAR, 'grouped by');
      keys.push({ key: c.name, inner: comparison(c).col, outer: (col) => shown(c, col), type: c.type, label: c.label });
      return;
    }
    if (!GRANULARITIES.has(g.by)) throw invalid(path, 'is grouped by day, week, month, quarter or year');
    const c = column(g.field, `${path}/field`, new Set(['date', 'datetime']), `grouped by ${g.by}`);
    const col = `t.${qi(c.name)}`;
    // the unit is one of five words checked above; the zone is bound
    const local = c.type === 'date' ? `${col}::timestamp` : `${c.dbType === 'timestamp' ? `(${col} at time zone 'UTC')` : col} at time zone ${bind(g.timeZone ?? 'UTC', 'text')}`;
    keys.push({ key: g.as ?? c.name, inner: `date_trunc('${g.by}', ${local})::date`, outer: (x) => `to_char(${x}, 'YYYY-MM-DD')`, type: 'date', label: `${c.label} (${g.by})` });
  });
  // trim: an average of a numeric without scale, whose text PostgreSQL pads with zeros
  const measures: { key: string; inner: string; outer: (col: string) => string; type: string; label: string; trim?: boolean }[] = [];
  for (const [key, m] of Object.entries(query.measures ?? {})) {
    const path = `/measures/${key}`;
    if (m.where !== undefined) throw invalid(`${path}/where`, 'is not supported on a table of a data source');
    const kind = Object.keys(KIND_LABELS).find((k) => k in m)!;
    if (kind === 'count') {
      measures.push({ key, inner: 'count(*)', outer: (x) => x, type: 'integer', label: KIND_LABELS.count });
      continue;
    }
    const field = (m as Record<string, unknown>)[kind];
    const allowed = kind === 'countDistinct' ? SCALAR : kind === 'sum' || kind === 'avg' ? NUMERIC : ORDERED;
    const c = column(field, `${path}/${kind}`, allowed, kind === 'countDistinct' ? 'counted distinct' : kind === 'avg' ? 'averaged' : kind === 'sum' ? 'summed' : `measured by ${kind}`);
    const col = comparison(c).col;
    const label = `${KIND_LABELS[kind]} of ${c.label}`;
    // decimals keep their column's scale; an integer average two places; a float or a numeric without scale as PostgreSQL prints it
    const rounded = (x: string, integer: number) => (c.scale !== undefined ? `round((${x})::numeric, ${c.scale})` : c.type === 'integer' ? `round((${x})::numeric, ${integer})` : x);
    if (kind === 'countDistinct') measures.push({ key, inner: `count(distinct ${col})`, outer: (x) => x, type: 'integer', label });
    else if (kind === 'sum') measures.push({ key, inner: `sum(${col})`, outer: (x) => `${rounded(`coalesce(${x}, 0)`, 0)}::text`, type: c.type, label });
    else if (kind === 'avg') measures.push({ key, inner: `avg(${col})`, outer: (x) => `${rounded(x, 2)}::text`, type: 'decimal', label, trim: c.scale === undefined && c.dbType === 'numeric' });
    else measures.push({ key, inner: `${kind}(${col})`, outer: (x) => shown(c, x), type: c.type, label });
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
  const outer = [...keys.map((k, i) => `${k.outer(`s."g${i}"`)} as "g${i}"`), ...measures.map((m, i) => `${m.outer(`s."m${i}"`)} as "m${i}"`)];
  const grouped = keys.length ? ` group by ${keys.map((_, i) => i + 1).join(', ')}` : '';
  const where = filters.length ? ` where ${filters.join(' and ')}` : '';
  const paging = ` limit ${wanted + 1}${query.offset ? ` offset ${bind(query.offset, 'int8')}` : ''}`;
  const sql = `select ${outer.join(', ')} from (select ${inner.join(', ')} from ${qi(schemaName)}.${qi(table.name)} t${where}${grouped}) s${order.length ? ` order by ${order.join(', ')}` : ''}${paging}`;
  const columns = [...keys, ...measures].map((k) => ({ key: k.key, type: k.type, label: k.label }));
  return {
    sql,
    values,
    columns,
    wanted,
    shape: (rows) =>
      rows.map((r) =>
        Object.fromEntries([
          ...keys.map((k, i) => [k.key, typed(k.type, r[`g${i}`])]),
          ...measures.map((m, i) => {
            const v = r[`m${i}`];
            return [m.key, m.trim && v !== null ? v.replace(/(\.\d*?)0+$/, '$1').replace(/\.$/, '') : typed(m.type, v)];
          }),
        ]),
      ),
  };
}

/** One filter as SQL on the column, its values checked and bound. */
function filterSql(c: SourceColumn, f: FieldFilter, path: string, bind: (v: unknown, cast: string) => string): string {
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
