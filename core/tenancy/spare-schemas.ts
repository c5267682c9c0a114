// Spare tenant schemas: built ahead with every table of the loaded modules, so
// provisioning renames one (a catalog update) instead of running some 300 DDL
// statements while the caller waits. They live in the registry's database, so
// the rename commits with the tenant's registry row, and are listed in
// "<registry>".spare_schemas with the digest they were built at: a spare of
// another digest (the modules changed) is dropped and built again.
import { randomBytes } from 'node:crypto';
import type { Databases } from '../db/databases.ts';
import type { ModuleVersion } from '../db/schema-versions.ts';
import { buildSchema, type Run } from '../db/migrator.ts';

export interface SpareSchemasOptions {
  registrySchema: string;
  /** spares kept ready (PROVISION_SPARES); 0 builds none */
  target: number;
  versions: ModuleVersion[];
  digest: string;
}

export class SpareSchemas {
  readonly #dbs: Pick<Databases, 'main'>;
  readonly #opts: SpareSchemasOptions;
  readonly #table: string;
  #refilling: Promise<number> | undefined;
  /** why the last background refill failed (a lost connection); the next provisioning tries again */
  lastError: Error | undefined;

  constructor(dbs: Pick<Databases, 'main'>, opts: SpareSchemasOptions) {
    this.#dbs = dbs;
    this.#opts = opts;
    this.#table = `"${opts.registrySchema}".spare_schemas`;
  }

  /**
   * In the caller's transaction on the registry's database: renames a spare
   * built at the loaded digest to `schema`. False when none is ready. A spare
   * another provisioning is taking is skipped, not waited for.
   */
  async claim(run: Run, schema: string): Promise<boolean> {
    const [spare] = (await run(
      `delete from ${this.#table} where schema_name = (select schema_name from ${this.#table} where digest = ? order by created_at limit 1 for update skip locked) returning schema_name as "name"`,
      [this.#opts.digest],
    )) as { name: string }[];
    if (!spare) return false;
    await run(`alter schema "${spare.name}" rename to "${schema}"`);
    return true;
  }

  /** Spares built at the loaded digest. */
  async ready(): Promise<number> {
    const [row] = (await this.#dbs.main.em.getConnection().execute(`select count(*)::int as n from ${this.#table} where digest = ?`, [this.#opts.digest])) as { n: number }[];
    return row.n;
  }

  /**
   * Drops spares of another digest, then builds spares until the target is
   * ready, one transaction each (a provisioning can take the first while the
   * next is built). One process refills at a time: the others return at once.
   * Resolves with how many this call built.
   */
  refill(): Promise<number> {
    this.#refilling ??= this.#refill().finally(() => (this.#refilling = undefined));
    return this.#refilling;
  }

  /** Refills in the background (after a provisioning took a spare); a failure is kept in lastError. */
  refillSoon(): void {
    if (this.#opts.target === 0) return;
    this.refill().then(
      () => (this.lastError = undefined),
      (err: Error) => (this.lastError = err),
    );
  }

  /** Waits for a refill under way (closing the kernel). */
  async idle(): Promise<void> {
    await this.#refilling?.catch(() => undefined);
  }

  async #refill(): Promise<number> {
    let built = 0;
    while (await this.#buildOne()) built++;
    return built;
  }

  async #buildOne(): Promise<boolean> {
    const orm = this.#dbs.main;
    const { registrySchema, target, versions, digest } = this.#opts;
    return orm.em.fork().transactional(async (tem) => {
      const ctx = tem.getTransactionContext();
      const run: Run = (sql, params = []) => tem.getConnection().execute(sql, params as unknown[], 'all', ctx);
      const [{ locked }] = (await run('select pg_try_advisory_xact_lock(hashtext(?)) as locked', [`plinth:spares:${registrySchema}`])) as { locked: boolean }[];
      if (!locked) return false;
      const stale = (await run(`delete from ${this.#table} where digest <> ? returning schema_name as "name"`, [digest])) as { name: string }[];
      for (const s of stale) await run(`drop schema if exists "${s.name}" cascade`);
      const [{ n }] = (await run(`select count(*)::int as n from ${this.#table} where digest = ?`, [digest])) as { n: number }[];
      if (n >= target) return false;
      const name = `plinth_spare_${randomBytes(6).toString('hex')}`;
      await buildSchema(run, orm, name, versions);
      await run(`insert into ${this.#table} (schema_name, digest) values (?, ?)`, [name, digest]);
      return true;
    });
  }

  /** Drops every spare (tests, and an installation being removed). */
  async dropAll(): Promise<void> {
    const conn = this.#dbs.main.em.getConnection();
    const rows = (await conn.execute(`delete from ${this.#table} returning schema_name as "name"`)) as { name: string }[];
    for (const s of rows) await conn.execute(`drop schema if exists "${s.name}" cascade`);
  }
}
