// Moving a tenant to another database (npm run tenant:move): its schema is built
// on the target from the create script and its rows copied from a snapshot while
// writes go on; then the source tables are locked against writes (reads go on),
// the copy is brought up to date (rows whose hash differs, by id, copied again;
// rows gone, deleted), every table counted and checksummed on both sides, and
// the registry switched. Writes wait only for that catch-up, not for the copy.
// The lock is asked for with a short lock_timeout (a write queued behind a waiting
// EXCLUSIVE request waits too) and asked again a few times when it times out or
// the server picks the move as a deadlock victim. A catch-up that meets a unique
// value two rows swapped meanwhile copies the tenant again whole, under the lock.
// Before the lock is released, every source table
// gets a trigger that refuses writes with SQLSTATE 57P03 (answered as 503
// DATABASE_UNAVAILABLE, Retry-After): a write that waited on the lock, or comes
// from a process that has not heard of the switch yet, fails and is retried on
// the target; none is acknowledged on the source and lost. Any failure before the
// switch rolls both sides back: the tenant stays where it was.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Databases } from '../db/databases.ts';
import type { ModuleVersion } from '../db/schema-versions.ts';
import type { TenantRegistry } from './registry.ts';
import { buildSchema, type Run } from '../db/migrator.ts';
import { VERSION_TABLE } from '../db/schema-versions.ts';
import { TenantError } from './errors.ts';
import { sqlStateOf } from '../db/failures.ts';

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
  /** how long writes were held (the source tables locked: the catch-up after the copy, and the checks) */
  writesHeldMs: number;
  totalMs: number;
  /** how the target was brought up to date under the lock: row by row, or (a unique value swapped meanwhile) copied again whole */
  catchUp: 'caught-up' | 'copied-again';
  /** times the lock was asked for */
  lockAttempts: number;
}

export interface MoveOptions {
  /** rows per statement while copying */
  batch?: number;
  /** after each table checked, writes held */
  onTable?: (t: MovedTable) => void;
  /** after each table copied from the snapshot, writes going on */
  onCopied?: (table: string) => void | Promise<void>;
  /** ms the move waits for its lock on the source tables before it lets the writes queued behind it go and tries again */
  lockTimeoutMs?: number;
  /** times the move asks for the lock (a lock timeout, or a deadlock the server ended in the writes' favour) */
  lockAttempts?: number;
  /** after each attempt at the lock that failed */
  onLockRetry?: (attempt: number, reason: string) => void;
}

/** SQLSTATEs after which the hold phase is tried again: lock_timeout (55P03), deadlock (40P01). */
const LOCK_RETRY_STATES = new Set(['55P03', '40P01']);

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

/** Copies every row of `table` from the source transaction to the target one, `batch` rows a statement. */
async function copyRows(srun: Run, trun: Run, schema: string, table: string, batch: number): Promise<void> {
  for (let offset = 0; ; offset += batch) {
    const [{ rows }] = (await srun(`select coalesce(json_agg(t), '[]') as rows from (select * from "${schema}"."${table}" order by 1 limit ? offset ?) t`, [batch, offset])) as { rows: Row[] }[];
    if (!rows.length) break;
    await trun(`insert into "${schema}"."${table}" select * from json_populate_recordset(null::"${schema}"."${table}", ?::json)`, [JSON.stringify(rows)]);
    if (rows.length < batch) break;
  }
}

/** The table's columns by name (their order differs between a migrated schema and a new one), and whether its primary key is `id` alone. */
async function shapeOf(run: Run, schema: string, table: string): Promise<{ cols: string[]; keyed: boolean }> {
  const rel = `"${schema}"."${table}"`;
  const cols = ((await run(`select attname as c from pg_attribute where attrelid = ?::regclass and attnum > 0 and not attisdropped order by attname`, [rel])) as { c: string }[]).map((r) => r.c);
  const key = (await run(`select a.attname as c from pg_index i join pg_attribute a on a.attrelid = i.indrelid and a.attnum = any(i.indkey) where i.indrelid = ?::regclass and i.indisprimary`, [
    rel,
  ])) as { c: string }[];
  return { cols, keyed: key.length === 1 && key[0].c === 'id' };
}

/** id → hash of the row, over its columns by name. */
async function rowHashes(run: Run, schema: string, table: string, cols: string[]): Promise<Map<string, string>> {
  const rows = (await run(`select id::text as id, md5(row(${cols.map((c) => `"${c}"`).join(', ')})::text) as h from "${schema}"."${table}"`)) as { id: string; h: string }[];
  return new Map(rows.map((r) => [r.id, r.h]));
}

/**
 * Brings the target's copy up to date with the source, whose tables are locked:
 * by id, rows gone from the source are deleted (referencing tables first) and
 * rows new or changed since the snapshot copied again (referenced tables
 * first); a table without an `id` key is copied again whole.
 */
async function catchUp(srun: Run, trun: Run, schema: string, order: string[], batch: number): Promise<void> {
  const work: { table: string; cols: string[]; upsert: string[]; remove: string[] }[] = [];
  for (const table of order) {
    const { cols, keyed } = await shapeOf(srun, schema, table);
    if (!keyed) {
      await trun(`delete from "${schema}"."${table}"`);
      await copyRows(srun, trun, schema, table, batch);
      continue;
    }
    const [source, target] = [await rowHashes(srun, schema, table, cols), await rowHashes(trun, schema, table, cols)];
    const upsert = [...source].filter(([id, h]) => target.get(id) !== h).map(([id]) => id);
    const remove = [...target.keys()].filter((id) => !source.has(id));
    work.push({ table, cols, upsert, remove });
  }
  const ids = (list: string[]) => JSON.stringify(list);
  for (const w of [...work].reverse()) {
    if (w.remove.length) await trun(`delete from "${schema}"."${w.table}" where id::text in (select jsonb_array_elements_text(?::jsonb))`, [ids(w.remove)]);
  }
  for (const w of work) {
    const set = w.cols.filter((c) => c !== 'id');
    for (let i = 0; i < w.upsert.length; i += batch) {
      const [{ rows }] = (await srun(`select coalesce(json_agg(t), '[]') as rows from (select * from "${schema}"."${w.table}" where id::text in (select jsonb_array_elements_text(?::jsonb))) t`, [
        ids(w.upsert.slice(i, i + batch)),
      ])) as { rows: Row[] }[];
      await trun(
        `insert into "${schema}"."${w.table}" select * from json_populate_recordset(null::"${schema}"."${w.table}", ?::json)
         on conflict (id) do update set (${set.map((c) => `"${c}"`).join(', ')}) = row(${set.map((c) => `excluded."${c}"`).join(', ')})`,
        [JSON.stringify(rows)],
      );
    }
  }
}

/**
 * The catch-up, or, when it meets a unique value two rows swapped since the snapshot (an upsert of one
 * conflicts with the other's old value, which a row-by-row upsert cannot order around), the target
 * emptied and every table copied again: slower, and still correct.
 */
async function catchUpOrCopyAgain(srun: Run, trun: Run, schema: string, order: string[], batch: number): Promise<'caught-up' | 'copied-again'> {
  await trun('savepoint plinth_catch_up');
  try {
    await catchUp(srun, trun, schema, order, batch);
    return 'caught-up';
  } catch (err) {
    if (sqlStateOf(err) !== '23505') throw err;
    await trun('rollback to savepoint plinth_catch_up');
    await trun(`truncate ${order.map((t) => `"${schema}"."${t}"`).join(', ')}`);
    for (const table of order) await copyRows(srun, trun, schema, table, batch);
    return 'copied-again';
  }
}

/** Checks that every table holds the same rows on both sides (count and checksum). */
async function verify(srun: Run, trun: Run, schema: string, order: string[], where: { from: string; to: string }, onTable?: (t: MovedTable) => void): Promise<MovedTable[]> {
  const moved: MovedTable[] = [];
  for (const table of order) {
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
  const lockTimeoutMs = opts.lockTimeoutMs ?? 2000;
  const lockAttempts = Math.max(1, opts.lockAttempts ?? 5);
  let heldAt = 0;
  let tables: MovedTable[] = [];
  let caughtUp: MoveResult['catchUp'] = 'caught-up';
  let attempts: number;
  let order: string[] = [];

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
    // the copy, from one snapshot of the source, while writes go on there
    await source.em.fork().transactional(async (sem) => {
      const sctx = sem.getTransactionContext();
      const srun: Run = (sql, params = []) => sem.getConnection().execute(sql, params as unknown[], 'all', sctx);
      await srun('set transaction isolation level repeatable read, read only');
      order = await tablesInOrder(srun, schema);
      await target.em.fork().transactional(async (tem) => {
        const tctx = tem.getTransactionContext();
        const trun: Run = (sql, params = []) => tem.getConnection().execute(sql, params as unknown[], 'all', tctx);
        for (const table of order) {
          await copyRows(srun, trun, schema, table, batch);
          await opts.onCopied?.(table);
        }
      });
    });
    const hold = () =>
      source.em.fork().transactional(async (sem) => {
        const sctx = sem.getTransactionContext();
        const srun: Run = (sql, params = []) => sem.getConnection().execute(sql, params as unknown[], 'all', sctx);
        await srun(`set local lock_timeout = ${Math.max(1, Math.round(lockTimeoutMs))}`);
        // writes wait from here (EXCLUSIVE conflicts with every row lock; plain reads go on). Referencing tables
        // first: a write locks its own table, then (checking its references) the tables it points at, so taking
        // ours in the same order does not deadlock with it
        await srun(
          `lock table ${[...order]
            .reverse()
            .map((t) => `"${schema}"."${t}"`)
            .join(', ')} in exclusive mode`,
        );
        await srun('set local lock_timeout = 0');
        heldAt = performance.now();
        tables = await target.em.fork().transactional(async (tem) => {
          const tctx = tem.getTransactionContext();
          const trun: Run = (sql, params = []) => tem.getConnection().execute(sql, params as unknown[], 'all', tctx);
          caughtUp = await catchUpOrCopyAgain(srun, trun, schema, order, batch);
          return verify(srun, trun, schema, order, { from, to }, opts.onTable);
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
    for (let attempt = 1; ; attempt++) {
      attempts = attempt;
      try {
        await hold();
        break;
      } catch (err) {
        // not switched, so the tenant is still served from the source; the catch-up of the next attempt
        // compares row by row again, whatever the target holds by now
        const state = sqlStateOf(err);
        if (switched || attempt >= lockAttempts || !state || !LOCK_RETRY_STATES.has(state)) throw err;
        opts.onLockRetry?.(attempt, state === '55P03' ? `no lock within ${lockTimeoutMs} ms` : 'deadlock');
        await sleep(Math.min(1000, 50 * 2 ** attempt));
      }
    }
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
  return { tenant: id, from, to, tables, writesHeldMs: Math.round(writesHeldMs), totalMs: Math.round(performance.now() - started), catchUp: caughtUp, lockAttempts: attempts };
}

/** The source schema a move left behind (its writes refused), dropped once no process reads it any more. */
export async function dropMovedSource(kernel: Deps, id: string, from: string): Promise<void> {
  const tenant = await kernel.tenants.find(id);
  if (!tenant) throw new TenantError('UNKNOWN_TENANT', `no tenant "${id}"`);
  if (tenant.connectionKey === from) throw new TenantError('SAME_CONNECTION', `tenant "${id}" is served from "${from}": its schema there is not a left-over`);
  await kernel.dbs.get(from).em.getConnection().execute(`drop schema if exists "${tenant.schema}" cascade`);
}
