// Migrates one tenant schema at a time. MikroORM diffs the module entities
// against that schema only (never the whole database: see STACK-NOTES on the
// migrator that drops other tenants' tables). Additive changes are applied in
// one transaction; anything that could lose data is refused.
import type { Orm } from './databases.ts';
import { VERSION_TABLE, versionTableSql, type ModuleVersion } from './schema-versions.ts';

export class DestructiveChangeError extends Error {
  readonly code = 'DESTRUCTIVE_MIGRATION';
  readonly statements: string[];
  constructor(schema: string, statements: string[]) {
    super(`refusing to migrate schema "${schema}": the change would drop or retype existing data. `
      + `Write a data migration for it, or restore the removed fields/modules. Statements:\n  ${statements.join('\n  ')}`);
    this.statements = statements;
  }
}

const DESTRUCTIVE = [/^drop table/i, /\bdrop column\b/i, /\balter column "[^"]+" type\b/i, /^drop schema/i, /^truncate/i];

export function splitStatements(sql: string): string[] {
  return sql.split(/;\s*\n/).map((s) => s.trim().replace(/;$/, '')).filter((s) => s && !/^set names/i.test(s));
}

export function destructiveStatements(statements: string[]): string[] {
  return statements.filter((s) => DESTRUCTIVE.some((re) => re.test(s)));
}

/** Advisory lock key: two processes never migrate the same schema at once. */
const lockSql = (schema: string) => `select pg_advisory_xact_lock(hashtext('plinth:migrate:' || '${schema}'))`;

export async function migrateSchema(orm: Orm, schema: string, versions: ModuleVersion[]): Promise<{ applied: number }> {
  const em = orm.em.fork();
  const conn = em.getConnection();
  await conn.execute(`create schema if not exists "${schema}"`);
  for (const s of versionTableSql(schema)) await conn.execute(s);
  const statements = splitStatements(await orm.schema.getUpdateSchemaSQL({ schema, wrap: false }));
  const refused = destructiveStatements(statements);
  if (refused.length) throw new DestructiveChangeError(schema, refused);
  let applied = 0;
  await em.transactional(async (tem) => {
    const ctx = tem.getTransactionContext();
    const run = (sql: string, params: unknown[] = []) => tem.getConnection().execute(sql, params, 'all', ctx);
    await run(lockSql(schema));
    // Under the lock: another process may have migrated this schema meanwhile.
    const rows = await run(`select module, digest from "${schema}"."${VERSION_TABLE}"`) as { module: string; digest: string }[];
    const have = new Map(rows.map((r) => [r.module, r.digest]));
    if (versions.every((v) => have.get(v.module) === v.digest)) return;
    for (const s of statements) await run(s);
    for (const v of versions) {
      await run(`insert into "${schema}"."${VERSION_TABLE}" (module, version, digest) values (?, ?, ?)
        on conflict (module) do update set version = excluded.version, digest = excluded.digest, applied_at = now()`, [v.module, v.version, v.digest]);
    }
    applied = statements.length;
  });
  return { applied };
}
