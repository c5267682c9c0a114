// How much room a tenant schema's tables take, from the catalog (pg_class
// over one namespace: cheap, and no information_schema scan across every
// tenant's schema). The dashboard's size card and module code (ctx.storage())
// read the same figures.
import type { EntityManager } from '@mikro-orm/core';
import { run } from './sql.ts';

const RELATIONS = `c.relkind in ('r', 'p', 'm')`;

const TABLES_SQL = `select c.relname as "name", pg_total_relation_size(c.oid)::bigint as "bytes"
  from pg_class c join pg_namespace n on n.oid = c.relnamespace
  where n.nspname = $1 and ${RELATIONS} order by 2 desc, 1`;

export const SCHEMAS_SQL = `select n.nspname as "name", coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint as "bytes"
  from pg_namespace n left join pg_class c on c.relnamespace = n.oid and ${RELATIONS}
  where n.nspname not in ('pg_catalog', 'information_schema', 'pg_toast') and n.nspname not like 'pg\\_%'
  group by n.nspname order by 2 desc, 1`;

/** The tables of `schema` with their size in bytes (indexes and TOAST included), largest first. */
export async function tableSizes(em: EntityManager, schema: string): Promise<{ name: string; bytes: number }[]> {
  const rows = await run(em, TABLES_SQL, [schema]);
  return rows.map((r) => ({ name: r.name as string, bytes: Number(r.bytes) }));
}

/** The server's version, as PostgreSQL says it ("15.14"). */
export async function serverVersion(em: EntityManager): Promise<string> {
  const [row] = await run(em, `select current_setting('server_version') as "version"`, []);
  return String(row.version);
}
