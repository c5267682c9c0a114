// Migrates one tenant schema at a time. MikroORM diffs the module entities
// against that schema only (never the whole database: see STACK-NOTES on the
// migrator that drops other tenants' tables). Additive changes are applied in
// one transaction, all or nothing; anything that could lose data is refused.
import { DatabaseSchema } from '@mikro-orm/postgresql';
import { PgliteDriver } from '@mikro-orm/pglite';
import type { Orm } from './databases.ts';
import { VERSION_TABLE, versionTableSql, type ModuleVersion } from './schema-versions.ts';

/** The change would drop, rename or retype stored data: a person has to write that migration. */
export class DestructiveChangeError extends Error {
  readonly code = 'DESTRUCTIVE_MIGRATION';
  readonly schema: string;
  readonly statements: string[];
  constructor(schema: string, statements: string[]) {
    super(
      `refusing to migrate schema "${schema}": the change would drop, rename or retype existing data. ` +
        `Write a data migration for it, or restore the removed fields/modules. Statements:\n  ${statements.join('\n  ')}`,
    );
    this.name = 'DestructiveChangeError';
    this.schema = schema;
    this.statements = statements;
  }
}

/** A statement the data of this schema does not allow; the whole migration was rolled back. */
export class MigrationFailedError extends Error {
  readonly code = 'MIGRATION_FAILED';
  readonly schema: string;
  readonly statement: string;
  constructor(schema: string, statement: string, reason: string, cause?: unknown) {
    super(`migrating schema "${schema}" failed, nothing was applied: ${reason}\n  ${statement}`, { cause });
    this.name = 'MigrationFailedError';
    this.schema = schema;
    this.statement = statement;
  }
}

/** Cuts `text` where `boundary` (a sticky regex) matches outside quoted strings and identifiers. */
function splitUnquoted(text: string, boundary: RegExp): string[] {
  const out: string[] = [];
  let quote: string | null = null;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote) {
      if (c === quote) quote = null;
      continue;
    } // a doubled quote re-enters at once
    if (c === "'" || c === '"') {
      quote = c;
      continue;
    }
    boundary.lastIndex = i;
    if (boundary.test(text)) {
      out.push(text.slice(start, i));
      start = boundary.lastIndex;
      i = start - 1;
    }
  }
  out.push(text.slice(start));
  return out.map((s) => s.trim()).filter(Boolean);
}

/** MikroORM's script, one statement each: `;` + newline ends a statement. */
export function splitStatements(sql: string): string[] {
  return splitUnquoted(sql, /;[ \t\r]*(?:\n|$)/y)
    .map((s) => s.replace(/;$/, ''))
    .filter((s) => !/^set names/i.test(s));
}

const DESTRUCTIVE = [
  /^drop table/i,
  /^drop schema/i,
  /^truncate/i,
  /^alter table \S+ drop column\b/i,
  // MikroORM guesses renames (a removed and an added column of one type); a manifest cannot declare one
  /^alter table \S+ rename\b/i,
];
const RETYPE = /^alter table "([^"]+)"\."([^"]+)" alter column "([^"]+)" type ([a-z ]+(?:\(\d+(?:,\s*\d+)?\))?) using /i;
const ADD_COLUMNS = /^alter table "([^"]+)"\."([^"]+)" (add "[\s\S]*)$/i;

type Run = (sql: string, params?: unknown[]) => Promise<unknown>;
interface ColumnType {
  data_type: string;
  character_maximum_length: number | null;
  numeric_precision: number | null;
  numeric_scale: number | null;
}

/** A retype that keeps every value: a longer varchar, varchar to text, a wider numeric. */
async function isWidening(run: Run, statement: string): Promise<boolean> {
  const m = RETYPE.exec(statement);
  if (!m) return false;
  const [, schema, table, column, target] = m;
  const [old] = (await run(
    `select data_type, character_maximum_length, numeric_precision, numeric_scale from information_schema.columns
    where table_schema = ? and table_name = ? and column_name = ?`,
    [schema, table, column],
  )) as ColumnType[];
  if (!old) return false;
  const varchar = /^varchar\((\d+)\)$/i.exec(target);
  if (old.data_type === 'character varying') {
    return /^text$/i.test(target) || (!!varchar && Number(varchar[1]) >= (old.character_maximum_length ?? Infinity));
  }
  const numeric = /^numeric\((\d+),\s*(\d+)\)$/i.exec(target);
  if (old.data_type === 'numeric' && numeric && old.numeric_precision !== null && old.numeric_scale !== null) {
    const [p, s] = [Number(numeric[1]), Number(numeric[2])];
    return s >= old.numeric_scale && p - s >= old.numeric_precision - old.numeric_scale;
  }
  return false;
}

async function destructiveStatements(run: Run, statements: string[]): Promise<string[]> {
  const refused: string[] = [];
  for (const s of statements) {
    const retype = / alter column "[^"]+" type /i.test(s);
    if (DESTRUCTIVE.some((re) => re.test(s)) || (retype && !(await isWidening(run, s)))) refused.push(s);
  }
  return refused;
}

/** Columns a statement adds as NOT NULL without a default: they fail on a table with rows. */
export function requiredColumnsAdded(statement: string): { schema: string; table: string; columns: string[] } | undefined {
  const m = ADD_COLUMNS.exec(statement);
  if (!m) return undefined;
  const columns = splitUnquoted(m[3], /, (?=add ")/y)
    .map((clause) => /^add "([^"]+)" ([\s\S]*)$/.exec(clause))
    .filter((c) => c && / not null\b/i.test(c[2]) && !/ default /i.test(c[2]))
    .map((c) => c![1]);
  return columns.length ? { schema: m[1], table: m[2], columns } : undefined;
}

/**
 * The tenant schema as it is, read from that schema alone. MikroORM 7.2's own
 * introspection (getUpdateSchemaSQL without fromSchema) reads every table of
 * every schema in the database and only then keeps the one asked for: its cost
 * grows with the number of tenants, and it fails when another tenant's schema
 * is dropped while it runs.
 */
async function introspect(orm: Orm, schema: string): Promise<DatabaseSchema> {
  const conn = orm.em.getConnection();
  const platform = orm.em.getPlatform();
  const tables = await conn.execute(
    `select c.relname as table_name, n.nspname as schema_name, obj_description(c.oid, 'pg_class') as table_comment
    from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = ? and c.relkind in ('r', 'p') and not c.relispartition and c.relname <> ? order by c.relname`,
    [schema, VERSION_TABLE],
  );
  const current = new DatabaseSchema(platform, schema);
  await platform.getSchemaHelper()!.loadInformationSchema(current, conn, tables as never, [schema]);
  return current;
}

/** The statements that bring `schema` to the loaded entities, one per entry. */
export async function pendingStatements(orm: Orm, schema: string): Promise<string[]> {
  return splitStatements(await orm.schema.getUpdateSchemaSQL({ schema, wrap: false, fromSchema: await introspect(orm, schema) }));
}

/** Whether `schema` holds no table of ours yet (a new tenant): its tables are known without reading the catalog. */
async function isEmpty(run: Run, schema: string): Promise<boolean> {
  const rows = (await run(
    `select 1 from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = ? and c.relkind in ('r', 'p') and c.relname <> ? limit 1`,
    [schema, VERSION_TABLE],
  )) as unknown[];
  return rows.length === 0;
}

/** Every table, index and key of the loaded entities in a new `schema`: what a new tenant holds, known without a diff. */
async function createStatements(orm: Orm, schema: string): Promise<string[]> {
  return splitStatements(await orm.schema.getCreateSchemaSQL({ schema, wrap: false })).filter((st) => !/^create schema /i.test(st));
}

export async function migrateSchema(orm: Orm, schema: string, versions: ModuleVersion[]): Promise<{ applied: number }> {
  const em = orm.em.fork();
  const locked = <T>(fn: (run: Run) => Promise<T>) =>
    em.transactional(async (tem) => {
      const ctx = tem.getTransactionContext();
      const run: Run = (sql, params = []) => tem.getConnection().execute(sql, params as unknown[], 'all', ctx);
      // two processes never migrate one schema at once
      await run('select pg_advisory_xact_lock(hashtext(?))', [`plinth:migrate:${schema}`]);
      return fn(run);
    });
  // Under the lock: concurrent "create schema if not exists" calls collide in PostgreSQL's catalog.
  // A new schema gets its tables in the same transaction, straight from the create script.
  const created = await locked(async (run) => {
    await run(`create schema if not exists "${schema}"`);
    for (const s of versionTableSql(schema)) await run(s);
    if (!(await isEmpty(run, schema))) return null;
    const statements = await createStatements(orm, schema);
    // PostgreSQL: one script, one round trip (a query without parameters may hold several statements);
    // PGlite's driver prepares every query, so there one statement at a time
    const batches = orm.em.getDriver() instanceof PgliteDriver ? statements : [statements.join(';\n')];
    for (const batch of batches) {
      try {
        await run(batch);
      } catch (err) {
        throw new MigrationFailedError(schema, batches.length > 1 ? batch : '(the script creating a new schema)', (err as Error).message, err);
      }
    }
    await recordVersions(run, schema, versions);
    return statements.length;
  });
  if (created !== null) return { applied: created };
  // The diff reads the catalog on its own connection, so it runs outside the transaction.
  const statements = await pendingStatements(orm, schema);
  const conn = em.getConnection();
  const refused = await destructiveStatements((sql, params = []) => conn.execute(sql, params as unknown[]), statements);
  if (refused.length) throw new DestructiveChangeError(schema, refused);
  return locked(async (run) => {
    // Another process may have migrated this schema meanwhile.
    const rows = (await run(`select module, digest from "${schema}"."${VERSION_TABLE}"`)) as { module: string; digest: string }[];
    const have = new Map(rows.map((r) => [r.module, r.digest]));
    if (versions.every((v) => have.get(v.module) === v.digest)) return { applied: 0 };
    for (const s of statements) {
      const added = requiredColumnsAdded(s);
      if (added && ((await run(`select 1 from "${added.schema}"."${added.table}" limit 1`)) as unknown[]).length) {
        throw new MigrationFailedError(
          schema,
          s,
          `table "${added.table}" has rows, so the new required column(s) ${added.columns.map((c) => `"${c}"`).join(', ')} need a default (or make the field optional)`,
        );
      }
    }
    for (const s of statements) {
      try {
        await run(s);
      } catch (err) {
        throw new MigrationFailedError(schema, s, (err as Error).message, err);
      }
    }
    await recordVersions(run, schema, versions);
    return { applied: statements.length };
  });
}

async function recordVersions(run: Run, schema: string, versions: ModuleVersion[]): Promise<void> {
  for (const v of versions) {
    await run(
      `insert into "${schema}"."${VERSION_TABLE}" (module, version, digest) values (?, ?, ?)
      on conflict (module) do update set version = excluded.version, digest = excluded.digest, applied_at = now()`,
      [v.module, v.version, v.digest],
    );
  }
}
