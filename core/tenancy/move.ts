// Moving a tenant to another database (npm run tenant:move): its schema is built
// on the target from the create script, its rows copied, counted and checksummed
// on both sides, and the registry switched, while the source tables are locked
// against writes (reads go on). Before the lock is released, every source table
// gets a trigger that refuses writes with SQLSTATE 57P03 (answered as 503
// DATABASE_UNAVAILABLE, Retry-After): a write that waited on the lock, or comes
// from a process that has not heard of the switch yet, fails and is retried on
// the target; none is acknowledged on the source and lost. Any failure before the
// switch rolls both sides back: the tenant stays where it was.
import type { Databases } from '../db/databases.ts';
import type { ModuleVersion } from '../db/schema-versions.ts';
import type { TenantRegistry } from './registry.ts';
import { buildSchema, type Run } from '../db/migrator.ts';
import { VERSION_TABLE } from '../db/schema-versions.ts';
import { TenantError } from './errors.ts';

export interface MovedTable {
  table: string;
  rows: number;
  /** md5 over the rows' text, the same on both sides */
  checksum: string;
}

export interface MoveResult {
  tenant: string;
  from: string;
  to: string;
  tables: MovedTable[];
  /** how long writes were held (the source tables locked) */
  writesHeldMs: number;
  totalMs: number;
}

export interface MoveOptions {
  /** rows per statement while copying */
  batch?: number;
  /** after each table copied */
  onTable?: (t: MovedTable) => void;
}

/** What a move needs of the kernel. */
interface Deps {
  dbs: Pick<Databases, 'get' | 'orms' | 'main'>;
  tenants: Pick<TenantRegistry, 'find' | 'forget' | 'announce' | 'table'>;
  versions: ModuleVersion[];
  digest: string;
}
type Row = Record<string, unknown>;

/** The tables of a schema in an order that inserts referenced rows first (self-references are checked at the end of their statement). */
async function tablesInOrder(run: Run, schema: string): Promise<string[]> {
  const tables = ((await run(`select relname as t from pg_class where relnamespace = ?::regnamespace and relkind in ('r', 'p') order by relname`, [schema])) as { t: string }[]).map((r) => r.t);
  const deps = (await run(
    `select c.relname as t, r.relname as ref from pg_constraint k join pg_class c on c.oid = k.conrelid join pg_class r on r.oid = k.confrelid
    where k.contype = 'f' and c.relnamespace = ?::regnamespace and k.conrelid <> k.confrelid`,
    [schema],
  )) as { t: string; ref: string }[];
  const order: string[] = [];
  const placed = new Set<string>();
  const visit = (t: string, path: Set<string>) => {
    if (placed.has(t) || path.has(t)) return;
    path.add(t);
    for (const d of deps) if (d.t === t) visit(d.ref, path);
    placed.add(t);
    order.push(t);
  };
  for (const t of tables) visit(t, new Set());
  return order;
}

/** Count and checksum of a table's rows, over its columns by name (their order differs between a migrated schema and a new one). */
async function summary(run: Run, schema: string, table: string): Promise<{ rows: number; checksum: string }> {
  const cols = (
    (await run(`select attname as c from pg_attribute where attrelid = ?::regclass and attnum > 0 and not attisdropped order by attname`, [`"${schema}"."${table}"`])) as { c: string }[]
  ).map((r) => `"${r.c}"`);
  const [row] = (await run(
    `select count(*)::int as rows, md5(coalesce(string_agg(h, '' order by h), '')) as checksum from (select md5(row(${cols.join(', ')})::text) as h from "${schema}"."${table}") x`,
  )) as {
    rows: number;
    checksum: string;
  }[];
  return row;
}

/** Copies every table in `order` from the source transaction to the target one, and checks rows and checksums match. */
async function copyTables(srun: Run, trun: Run, schema: string, order: string[], batch: number, where: { from: string; to: string }, onTable?: (t: MovedTable) => void): Promise<MovedTable[]> {
  const moved: MovedTable[] = [];
  for (const table of order) {
    for (let offset = 0; ; offset += batch) {
      const [{ rows }] = (await srun(`select coalesce(json_agg(t), '[]') as rows from (select * from "${schema}"."${table}" order by 1 limit ? offset ?) t`, [batch, offset])) as { rows: Row[] }[];
      if (!rows.length) break;
      await trun(`insert into "${schema}"."${table}" select * from json_populate_recordset(null::"${schema}"."${table}", ?::json)`, [JSON.stringify(rows)]);
      if (rows.length < batch) break;
    }
    const [before, after] = [await summary(srun, schema, table), await summary(trun, schema, table)];
    if (before.rows !== after.rows || before.checksum !== after.checksum) {
      throw new TenantError('MOVE_MISMATCH', `table "${table}": ${before.rows} rows (${before.checksum}) on "${where.from}", ${after.rows} (${after.checksum}) on "${where.to}"; nothing was switched`);
    }
    const done = { table, ...after };
    moved.push(done);
    onTable?.(done);
  }
  return moved;
}

export async function moveTenant(kernel: Deps, id: string, to: string, opts: MoveOptions = {}): Promise<MoveResult> {
  const started = performance.now();
  const tenant = await kernel.tenants.find(id);
  if (!tenant) throw new TenantError('UNKNOWN_TENANT', `no tenant "${id}"`);
  if (!kernel.dbs.orms.has(to)) throw new TenantError('UNKNOWN_CONNECTION', `no database connection "${to}" is configured`);
  const from = tenant.connectionKey;
  if (from === to) throw new TenantError('SAME_CONNECTION', `tenant "${id}" is on "${to}" already`);
  if (tenant.schemaDigest !== kernel.digest) throw new TenantError('TENANT_OUTDATED', `tenant "${id}" is not at the loaded modules; run npm run migrate first`);
  const source = kernel.dbs.get(from);
  const target = kernel.dbs.get(to);
  const schema = tenant.schema;
  const registryOnSource = source === kernel.dbs.main;
  const batch = opts.batch ?? 2000;
  let heldAt = 0;
  let tables: MovedTable[] = [];

  // the target's tables first, before writes are held: an empty schema, dropped again if the move fails
  await target.em.fork().transactional(async (tem) => {
    const ctx = tem.getTransactionContext();
    const trun: Run = (sql, params = []) => tem.getConnection().execute(sql, params as unknown[], 'all', ctx);
    if (((await trun('select 1 from pg_namespace where nspname = ?', [schema])) as unknown[]).length) {
      throw new TenantError('TARGET_EXISTS', `"${to}" holds a schema "${schema}" already (a move that did not finish?); drop it there first`);
    }
    await buildSchema(trun, target, schema, kernel.versions);
    await trun(`delete from "${schema}"."${VERSION_TABLE}"`); // copied as they are on the source, below
  });
  let switched = false;
  try {
    await source.em.fork().transactional(async (sem) => {
      const sctx = sem.getTransactionContext();
      const srun: Run = (sql, params = []) => sem.getConnection().execute(sql, params as unknown[], 'all', sctx);
      const order = await tablesInOrder(srun, schema);
      // writes wait from here (EXCLUSIVE conflicts with every row lock; plain reads go on). Referencing tables
      // first: a write locks its own table, then (checking its references) the tables it points at, so taking
      // ours in the same order does not deadlock with it
      await srun(
        `lock table ${[...order]
          .reverse()
          .map((t) => `"${schema}"."${t}"`)
          .join(', ')} in exclusive mode`,
      );
      heldAt = performance.now();
      tables = await target.em.fork().transactional(async (tem) => {
        const tctx = tem.getTransactionContext();
        const trun: Run = (sql, params = []) => tem.getConnection().execute(sql, params as unknown[], 'all', tctx);
        return copyTables(srun, trun, schema, order, batch, { from, to }, opts.onTable);
      });
      // the target committed: from here the tenant is served there
      const refuse = `plinth_moved_${schema}`;
      await srun(
        `create or replace function "${schema}"."${refuse}"() returns trigger language plpgsql as $$ begin
          raise exception using errcode = '57P03', message = 'tenant ${id} moved to another database; retry';
        end $$`,
      );
      for (const table of order) await srun(`create trigger plinth_moved before insert or update or delete on "${schema}"."${table}" for each statement execute function "${schema}"."${refuse}"()`);
      const switchSql = `update ${kernel.tenants.table} set connection_key = ?, updated_at = now() where id = ? and connection_key = ?`;
      // on the registry's own database the switch commits with the triggers; elsewhere it commits first
      if (registryOnSource) await srun(switchSql, [to, id, from]);
      else await kernel.dbs.main.em.getConnection().execute(switchSql, [to, id, from]);
      switched = !registryOnSource;
    });
    switched = true;
  } catch (err) {
    // not switched: the tenant stays where it was, and the copy goes
    if (!switched)
      await target.em
        .getConnection()
        .execute(`drop schema if exists "${schema}" cascade`)
        .catch(() => undefined);
    throw err;
  }
  const writesHeldMs = performance.now() - heldAt;
  kernel.tenants.forget(id);
  await kernel.tenants.announce(id);
  return { tenant: id, from, to, tables, writesHeldMs: Math.round(writesHeldMs), totalMs: Math.round(performance.now() - started) };
}

/** The source schema a move left behind (its writes refused), dropped once no process reads it any more. */
export async function dropMovedSource(kernel: Deps, id: string, from: string): Promise<void> {
  const tenant = await kernel.tenants.find(id);
  if (!tenant) throw new TenantError('UNKNOWN_TENANT', `no tenant "${id}"`);
  if (tenant.connectionKey === from) throw new TenantError('SAME_CONNECTION', `tenant "${id}" is served from "${from}": its schema there is not a left-over`);
  await kernel.dbs.get(from).em.getConnection().execute(`drop schema if exists "${tenant.schema}" cascade`);
}
