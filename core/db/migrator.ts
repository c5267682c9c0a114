// Migrates tenant schemas. A new schema gets its tables from the create script
// (no diff). An existing one is fingerprinted from its own catalog rows; the
// first schema of each fingerprint is diffed by MikroORM against that schema
// only (never the whole database: see STACK-NOTES on the migrator that drops
// other tenants' tables), and every schema holding the same fingerprint takes
// the same statements. Additive changes are applied in one transaction per
// schema, all or nothing; anything that could lose data is refused; tables the
// entities do not know are kept and reported.
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

/** One statement, in a transaction or on its own. */
export type Run = (sql: string, params?: unknown[]) => Promise<unknown>;
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

function tableOids(names: string, schema: string): string {
  return `array(select t.oid from pg_class t where t.relname in (${names}) and t.relnamespace = ${schema}::regnamespace)`;
}

/**
 * MikroORM 7.2.1's introspection queries (PostgreSqlSchemaHelper) name the
 * schema but still join other schemas' rows: the columns by table name alone
 * (every tenant's table of that name: 274,000 rows for 250 at 500 tenants), the
 * indexes to constraints by name alone, the checks through
 * information_schema.constraint_column_usage over every schema. Each rewrite
 * adds the missing schema condition to the text MikroORM sends; a rewrite that
 * no longer matches (another MikroORM version) leaves the query as it was,
 * correct but slow, and test/core/db/migrations.test.ts says so.
 */
const SCOPED_INTROSPECTION: [RegExp, string][] = [
  [/join pg_class pgc on cols\.table_name = pgc\.relname\b/, 'join pg_class pgc on cols.table_name = pgc.relname and pgc.relnamespace = cols.table_schema::regnamespace'],
  [/left join pg_constraint as c on c\.conname = i\.relname\b/, 'left join pg_constraint as c on c.conname = i.relname and c.conrelid = idx.indrelid'],
  [
    /join information_schema\.constraint_column_usage ccu on/,
    `join (select nr.nspname::text as table_schema, r.relname::text as table_name, a.attname::text as column_name, nc.nspname::text as constraint_schema, k.conname::text as constraint_name
      from pg_constraint k join pg_class r on r.oid = k.conrelid join pg_namespace nr on nr.oid = r.relnamespace join pg_namespace nc on nc.oid = k.connamespace
      join pg_attribute a on a.attrelid = r.oid and a.attnum = any(k.conkey) where k.contype = 'c') ccu on`,
  ],
  // checks and foreign keys: the constraints of the schema's tables, found by (relname, relnamespace), pg_class's index
  [/\(ccu\.table_name in \(([^)]*)\) and ccu\.table_schema = ('[^']*')\)/, `$& and pgc.conrelid = any(${tableOids('$1', '$2')})`],
  [/\(cls\.relname in \(([^)]*)\) and nsp\.nspname = ('[^']*')\)/, `$& and pgc.conrelid = any(${tableOids('$1', '$2')})`],
  [/\(cls1\.relname in \(([^)]*)\) and nsp1\.nspname = ('[^']*')\)/, `$& and con.conrelid = any(${tableOids('$1', '$2')})`],
];

/** How many of SCOPED_INTROSPECTION's rewrites the last introspection applied (a test checks all of them still match). */
export const scopedIntrospection = { rewrites: SCOPED_INTROSPECTION.length, applied: new Set<number>() };

function scoped(sql: string): string {
  let out = sql;
  SCOPED_INTROSPECTION.forEach(([pattern, replacement], i) => {
    if (!pattern.test(out)) return;
    out = out.replace(pattern, replacement);
    scopedIntrospection.applied.add(i);
  });
  return out;
}

/**
 * The tenant schema as it is, read from that schema alone. MikroORM 7.2's own
 * introspection (getUpdateSchemaSQL without fromSchema) reads every table of
 * every schema in the database and only then keeps the one asked for: its cost
 * grows with the number of tenants, and it fails when another tenant's schema
 * is dropped while it runs.
 */
async function introspect(orm: Orm, schema: string): Promise<DatabaseSchema> {
  const raw = orm.em.getConnection();
  // the same connection, with each introspection query scoped to the schema (SCOPED_INTROSPECTION)
  const execute: typeof raw.execute = (sql, ...rest) => raw.execute(typeof sql === 'string' ? scoped(sql) : sql, ...rest);
  const conn = new Proxy(raw, {
    get: (target, prop) => {
      if (prop === 'execute') return execute;
      const value = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  const platform = orm.em.getPlatform();
  const tables = await raw.execute(
    `select c.relname as table_name, n.nspname as schema_name, obj_description(c.oid, 'pg_class') as table_comment
    from ${SCHEMA_RELATIONS} join pg_namespace n on n.oid = c.relnamespace
    where c.relkind in ('r', 'p') and not c.relispartition and c.relname <> ? order by c.relname`,
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

/**
 * The relations of one schema, found through pg_depend's index on the
 * referenced schema. pg_class has no index on its schema column: a filter on
 * it reads every relation of every tenant (millions at 10,000 tenants).
 */
const SCHEMA_RELATIONS = `pg_depend d join pg_class c on c.oid = d.objid
  and d.classid = 'pg_class'::regclass and d.refclassid = 'pg_namespace'::regclass and d.objsubid = 0
  and d.refobjid = (select oid from pg_namespace where nspname = ?)`;

/** What a schema holds, as far as a migration plan depends on it: equal hashes, equal plans. */
export interface Fingerprint {
  hash: string;
  tables: string[];
}

/**
 * One query over the schema's own catalog rows: its relations, columns (type,
 * null, default, identity, comment), indexes and constraints, with the schema's
 * own name taken out, hashed. Two tenants of one history hash alike.
 */
export async function fingerprint(run: Run, schema: string): Promise<Fingerprint> {
  const [row] = (await run(
    `with rels as (select c.oid, c.relname, c.relkind from ${SCHEMA_RELATIONS}),
    lines as (
      select 'rel ' || relkind::text || ' ' || relname || coalesce(' -- ' || obj_description(oid, 'pg_class'), '') as line from rels
      union all
      select 'col ' || r.relname || '.' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod) || case when a.attnotnull then ' not null' else '' end
        || ' ' || a.attidentity::text || a.attgenerated::text || coalesce(' default ' || pg_get_expr(ad.adbin, ad.adrelid), '') || coalesce(' -- ' || col_description(r.oid, a.attnum), '')
      from rels r join pg_attribute a on a.attrelid = r.oid and a.attnum > 0 and not a.attisdropped
      left join pg_attrdef ad on ad.adrelid = r.oid and ad.adnum = a.attnum
      union all
      select 'idx ' || pg_get_indexdef(i.indexrelid) from rels r join pg_index i on i.indrelid = r.oid
      union all
      select 'con ' || r.relname || ' ' || k.conname || ' ' || pg_get_constraintdef(k.oid) from rels r join pg_constraint k on k.conrelid = r.oid
    )
    select md5(coalesce(string_agg(replace(line, ? || '.', ''), E'\\n' order by line), '')) as hash,
      (select coalesce(array_agg(relname::text order by relname), '{}') from rels where relkind in ('r', 'p')) as tables
    from lines`,
    [schema, schema],
  )) as Fingerprint[];
  return row;
}

/** The tables of the loaded entities, by name. */
const entityTables = (orm: Orm): Set<string> => new Set([...orm.getMetadata().getAll().values()].filter((m) => !m.embeddable && !m.virtual && m.tableName).map((m) => m.tableName));

/** A schema name inside statements that fit every tenant of a plan. */
const PLACEHOLDER = '"plinth:schema"';
const quoted = (schema: string) => `"${schema}"`;
const forSchema = (statements: string[], schema: string) => statements.map((s) => s.replaceAll(PLACEHOLDER, quoted(schema)));
const asTemplate = (statements: string[], schema: string) => statements.map((s) => s.replaceAll(quoted(schema), PLACEHOLDER));

/** The change from one fingerprint to the loaded entities, for any schema holding that fingerprint. */
interface Plan {
  fingerprint: string;
  statements: string[];
  /** statements that would lose data: every schema of this plan refuses the change */
  refused: string[];
  /** tables the entities do not know: kept and reported, never dropped */
  unknownTables: string[];
}

/** Statements about a table the entities do not know (a removed module's, an operator's): left out, the table is kept. */
function aboutUnknownTable(statement: string, unknown: Set<string>): boolean {
  const m = /^(?:alter|drop) table (?:if exists )?"plinth:schema"\."([^"]+)"/i.exec(statement);
  return !!m && unknown.has(m[1]);
}

/**
 * Plans computed in one migration run, by fingerprint: tenants that hold the same
 * schema take the same statements, diffed once (MikroORM's diff costs 0.3-0.5 s;
 * a fingerprint a few ms). A tenant that drifted has a fingerprint of its own.
 */
export class MigrationPlans {
  readonly #plans = new Map<string, Promise<Plan>>();
  readonly #ready = new Map<string, Plan>();
  #computed = 0;

  /** The plan made for this fingerprint, once it is made. */
  ready(connectionKey: string, fp: Fingerprint): Plan | undefined {
    return this.#ready.get(`${connectionKey}:${fp.hash}`);
  }

  /** how many diffs this run made (one per distinct schema state) */
  get computed(): number {
    return this.#computed;
  }

  for(orm: Orm, connectionKey: string, schema: string, fp: Fingerprint): Promise<Plan> {
    const key = `${connectionKey}:${fp.hash}`;
    let plan = this.#plans.get(key);
    if (!plan) {
      plan = this.#plan(orm, schema, fp);
      this.#plans.set(key, plan);
      plan.then(
        (made) => this.#ready.set(key, made),
        () => this.#plans.delete(key), // a lost connection is no plan: the next tenant tries again
      );
    }
    return plan;
  }

  async #plan(orm: Orm, schema: string, fp: Fingerprint): Promise<Plan> {
    this.#computed++;
    const known = entityTables(orm);
    const unknown = new Set(fp.tables.filter((t) => t !== VERSION_TABLE && !known.has(t)));
    const all = asTemplate(await pendingStatements(orm, schema), schema);
    const statements = all.filter((s) => !aboutUnknownTable(s, unknown));
    const conn = orm.em.getConnection();
    const refused = await destructiveStatements((sql, params = []) => conn.execute(sql, params as unknown[]), forSchema(statements, schema));
    return { fingerprint: fp.hash, statements, refused: asTemplate(refused, schema), unknownTables: [...unknown] };
  }
}

/** Whether `schema` holds any table of the entities (none: a new tenant, or a spare's tables not built yet). */
async function hasEntityTables(run: Run, orm: Orm, schema: string): Promise<boolean> {
  const names = [...entityTables(orm)];
  const rows = (await run(`select 1 from pg_class where relnamespace = (select oid from pg_namespace where nspname = ?) and relname in (${names.map(() => '?').join(', ')}) limit 1`, [
    schema,
    ...names,
  ])) as unknown[];
  return rows.length > 0;
}

const createScripts = new WeakMap<Orm, string[]>();

/** Every table, index and key of the loaded entities in a new `schema`: known without a diff, computed once per database. */
function createStatements(orm: Orm, schema: string): Promise<string[]> | string[] {
  const template = createScripts.get(orm);
  if (template) return forSchema(template, schema);
  return orm.schema.getCreateSchemaSQL({ schema: 'plinth:schema', wrap: false }).then((sql) => {
    const statements = splitStatements(sql).filter((st) => !/^create schema /i.test(st));
    createScripts.set(orm, statements);
    return forSchema(statements, schema);
  });
}

/**
 * Creates `schema` with every table of the loaded entities and records their
 * versions, inside the caller's transaction (`run`): a new tenant's tables, or
 * a spare schema's. The caller holds the schema's lock.
 */
export async function buildSchema(run: Run, orm: Orm, schema: string, versions: ModuleVersion[]): Promise<number> {
  await run(`create schema if not exists "${schema}"`);
  for (const s of versionTableSql(schema)) await run(s);
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
}

export interface SchemaMigration {
  /** statements applied; 0 when the schema was current */
  applied: number;
  /** tables in the schema the loaded entities do not know: kept, reported */
  unknownTables: string[];
}

/** Runs `fn` in a transaction holding the schema's migration lock: two processes never migrate one schema at once. */
function underLock<T>(orm: Orm, schema: string, fn: (run: Run) => Promise<T>): Promise<T> {
  return orm.em.fork().transactional(async (tem) => {
    const ctx = tem.getTransactionContext();
    const run: Run = (sql, params = []) => tem.getConnection().execute(sql, params as unknown[], 'all', ctx);
    await run('select pg_advisory_xact_lock(hashtext(?))', [`plinth:migrate:${schema}`]);
    return fn(run);
  });
}

/**
 * Brings one schema to the loaded entities. A new schema gets its tables
 * straight from the create script; an existing one the plan for its
 * fingerprint (from `plans`, diffed once for every schema that holds the same
 * fingerprint), re-checked under the lock.
 */
export async function migrateSchema(orm: Orm, schema: string, versions: ModuleVersion[], plans = new MigrationPlans(), connectionKey = 'main'): Promise<SchemaMigration> {
  for (let attempt = 1; ; attempt++) {
    // One transaction under the schema's lock (concurrent "create schema if not exists" calls collide in
    // PostgreSQL's catalog): a new schema is built from the create script, an existing one takes the plan
    // made for its fingerprint.
    const outcome = await underLock(orm, schema, async (run): Promise<SchemaMigration | Fingerprint> => {
      await run(`create schema if not exists "${schema}"`);
      for (const s of versionTableSql(schema)) await run(s);
      if (!(await hasEntityTables(run, orm, schema))) return { applied: await buildSchema(run, orm, schema, versions), unknownTables: [] };
      const fp = await fingerprint(run, schema);
      const plan = plans.ready(connectionKey, fp);
      if (!plan) return fp;
      if (plan.refused.length) throw new DestructiveChangeError(schema, forSchema(plan.refused, schema));
      return { applied: await applyPlan(run, schema, versions, plan), unknownTables: plan.unknownTables };
    });
    if ('applied' in outcome) return outcome;
    if (attempt === 3) throw new MigrationFailedError(schema, '(planning)', 'the schema changed each time it was planned; try again');
    // no plan for this fingerprint yet: the diff reads the catalog on its own connection, so it runs outside the transaction
    await plans.for(orm, connectionKey, schema, outcome);
  }
}

/** Whether the schema records every module at the loaded digest. */
async function holdsVersions(run: Run, schema: string, versions: ModuleVersion[]): Promise<boolean> {
  const rows = (await run(`select module, digest from "${schema}"."${VERSION_TABLE}"`)) as { module: string; digest: string }[];
  const have = new Map(rows.map((r) => [r.module, r.digest]));
  return versions.every((v) => have.get(v.module) === v.digest);
}

async function applyPlan(run: Run, schema: string, versions: ModuleVersion[], plan: Plan): Promise<number> {
  // Another process may have migrated this schema meanwhile.
  if (await holdsVersions(run, schema, versions)) return 0;
  const statements = forSchema(plan.statements, schema);
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
  return statements.length;
}

async function recordVersions(run: Run, schema: string, versions: ModuleVersion[]): Promise<void> {
  if (!versions.length) return;
  await run(
    `insert into "${schema}"."${VERSION_TABLE}" (module, version, digest) values ${versions.map(() => '(?, ?, ?)').join(', ')}
    on conflict (module) do update set version = excluded.version, digest = excluded.digest, applied_at = now()`,
    versions.flatMap((v) => [v.module, v.version, v.digest]),
  );
}
