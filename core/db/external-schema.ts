// What an external PostgreSQL database holds in one schema: its tables, views,
// materialised views and foreign tables the connecting user may select from,
// with their columns. Read from pg_catalog filtered by the schema's oid (never
// information_schema, whose cost grows with every schema of the database), in
// the read-only session external-db.ts opens.
import type { QueryResult } from './pg.ts';
import { ExternalDbError } from './external-error.ts';

/** Runs one statement of the session with bound values. */
export type Run = (text: string, values?: unknown[]) => Promise<QueryResult & { fields: { name: string; dataTypeID: number }[] }>;

export interface ExternalColumn {
  /** the column's name */
  name: string;
  /** the PostgreSQL type (a domain's base type): int4, numeric, text, timestamptz, a user-defined enum's name… */
  type: string;
  /** the type's category (pg_type.typcategory): N numeric, S string, D date/time, B boolean, E enum, U user-defined, A array… */
  category: string;
  /** it may hold null (no not-null constraint) */
  nullable: boolean;
  /** numeric(p, s): s */
  scale?: number;
  /** an enum's labels, in their order */
  values?: string[];
  /** the column's comment (COMMENT ON COLUMN), if it has one */
  description?: string;
}

export interface ExternalTable {
  /** the table's name in the schema */
  name: string;
  /** what pg_class says it is (partitions are left out: their parent holds their rows) */
  kind: 'table' | 'view' | 'materialized view' | 'foreign table' | 'partitioned table';
  /** the planner's estimate; null before the table was first analysed */
  rowEstimate: number | null;
  /** the table's comment (COMMENT ON TABLE), if it has one */
  description?: string;
  /** the columns the user may select, in table order */
  columns: ExternalColumn[];
}

export interface ExternalSchema {
  /** the server's server_version setting ("16.4") */
  serverVersion: string;
  /** the tables and views the user may select from, by name */
  tables: ExternalTable[];
  /** more tables than maxTables: the first ones by name are here */
  truncated: boolean;
}

const KINDS: Record<string, ExternalTable['kind']> = { r: 'table', v: 'view', m: 'materialized view', f: 'foreign table', p: 'partitioned table' };

const SCHEMA = `select current_setting('server_version') as version, n.oid as oid, has_schema_privilege(n.oid, 'USAGE') as usable
  from (select 1) one left join pg_namespace n on n.nspname = $1`;

// partitions are left out: their parent holds their rows
const TABLES = `select c.oid, c.relname, c.relkind, c.reltuples::bigint as estimate, obj_description(c.oid, 'pg_class') as description
  from pg_class c
  where c.relnamespace = $1 and c.relkind in ('r', 'v', 'm', 'f', 'p') and not c.relispartition and has_table_privilege(c.oid, 'SELECT')
  order by c.relname limit $2`;

const COLUMNS = `select a.attrelid as table_oid, a.attname as name, not a.attnotnull as nullable, b.typname as type, b.typcategory as category,
    case when b.typname = 'numeric' and a.atttypmod >= 4 then (a.atttypmod - 4) & 65535 end as scale,
    case when b.typtype = 'e' then (select json_agg(e.enumlabel order by e.enumsortorder) from pg_enum e where e.enumtypid = b.oid)::text end as enum_values,
    col_description(a.attrelid, a.attnum) as description
  from pg_attribute a
  join pg_type t on t.oid = a.atttypid
  join pg_type b on b.oid = case when t.typtype = 'd' then t.typbasetype else t.oid end
  where a.attrelid = any($1::oid[]) and a.attnum > 0 and not a.attisdropped and has_column_privilege(a.attrelid, a.attnum, 'SELECT')
  order by a.attrelid, a.attnum`;

/** The tables of `schema` the session's user may read (at most `maxTables`, by name), or NO_SCHEMA. */
export async function describeSchema(run: Run, schema: string, maxTables: number): Promise<ExternalSchema> {
  const [found] = (await run(SCHEMA, [schema])).rows;
  if (found.oid === null) throw new ExternalDbError('NO_SCHEMA', `the database has no schema "${schema}"`);
  if (found.usable !== 't') throw new ExternalDbError('NO_SCHEMA', `the user may not use schema "${schema}" (no USAGE privilege)`);
  const tables = (await run(TABLES, [found.oid, maxTables + 1])).rows;
  const listed = tables.slice(0, maxTables);
  const columns = listed.length ? (await run(COLUMNS, [listed.map((t) => t.oid)])).rows : [];
  const byTable = Map.groupBy(columns, (c) => c.table_oid as string);
  return {
    serverVersion: found.version,
    truncated: tables.length > maxTables,
    tables: listed.map((t) => ({
      name: t.relname,
      kind: KINDS[t.relkind],
      rowEstimate: Number(t.estimate) >= 0 ? Number(t.estimate) : null,
      ...(t.description ? { description: t.description } : {}),
      columns: (byTable.get(t.oid) ?? []).map((c) => ({
        name: c.name,
        type: c.type,
        category: c.category,
        nullable: c.nullable === 't',
        ...(c.scale !== null ? { scale: Number(c.scale) } : {}),
        ...(c.enum_values !== null ? { values: JSON.parse(c.enum_values) as string[] } : {}),
        ...(c.description ? { description: c.description } : {}),
      })),
    })),
  };
}
