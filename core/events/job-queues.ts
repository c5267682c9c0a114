// The job runner: pg-boss, one instance per database connection key, its tables
// in "<registry schema>_jobs". Jobs are rows of the tenant's own database, so a
// job sent inside a write's transaction commits or rolls back with it.
//
// On PostgreSQL pg-boss has a small pool of its own (and LISTEN/NOTIFY, so a
// worker wakes when a job arrives). Embedded PGlite has one connection:
// pg-boss's statements go through PGlite's own query and exec, which wait while
// a transaction of the kernel holds the connection (kysely opens it with
// PGlite's exclusive transaction()), and a job sent inside such a transaction
// runs on that transaction itself (txDb). Never call pg-boss without `db`
// inside a transaction on PGlite: it would wait for itself.
import type { EntityManager } from '@mikro-orm/core';
import { PgBoss, fromPglite, type ConstructorOptions, type Db, type PGliteLike } from 'pg-boss';
import type { Databases } from '../db/databases.ts';
import { run } from '../data/sql.ts';
import { WakeUps } from './wake-ups.ts';

export interface JobQueueOptions {
  /** pg-boss schema; several installations sharing a database use their own */
  schema: string;
  /** connections pg-boss opens per PostgreSQL database */
  poolSize: number;
  /** run supervision and cron (processes that work jobs); a process that only sends jobs needs neither */
  maintain: boolean;
}

export class JobQueues {
  readonly #dbs: Databases;
  readonly #options: JobQueueOptions;
  readonly #bosses = new Map<string, PgBoss>();
  #errors: ((err: Error) => void)[] = [];
  /** wakes this process's workers when jobs come (wake-ups.ts) */
  readonly wakeUps = new WakeUps((err) => this.#errors.forEach((fn) => fn(err as Error)));

  constructor(dbs: Databases, options: JobQueueOptions) {
    this.#dbs = dbs;
    this.#options = options;
  }

  /** Installs or migrates pg-boss's tables on every database and starts one instance per database. */
  async start(): Promise<void> {
    for (const key of this.#dbs.orms.keys()) {
      const boss = new PgBoss(await this.#constructorOptions(key));
      boss.on('error', (err: Error) => this.#errors.forEach((fn) => fn(err)));
      await boss.start();
      this.#bosses.set(key, boss);
    }
  }

  async #constructorOptions(key: string): Promise<ConstructorOptions> {
    const { schema, poolSize, maintain } = this.#options;
    const common = { schema, supervise: maintain, schedule: maintain, migrate: true, persistWarnings: false };
    // direct: its workers LISTEN for new jobs, which a transaction pooler cannot serve
    const url = this.#dbs.sessionUrl(key);
    if (url) return { ...common, connectionString: url, max: poolSize, useListenNotify: maintain, application_name: 'plinth-jobs' };
    const native = (await (this.#dbs.get(key).em.getConnection() as unknown as { getNativeClient(): Promise<PGliteLike> }).getNativeClient()) as PGliteLike;
    // each of pg-boss's rounds is a query of the WASM database in this process, and several run per queue:
    // supervision (expiring jobs that outlived their timeout, retention, queue statistics) every 5 minutes
    // instead of every minute; flows (job dependencies, which Plinth does not use) looked at every minute
    const rarely = { superviseIntervalSeconds: 300, monitorIntervalSeconds: 300, flowIntervalSeconds: 60 };
    // NOTIFY works inside PGlite too: a job sent (in a transaction: once it commits) wakes its queue's workers
    return { ...common, ...rarely, useListenNotify: maintain, db: fromPglite(native), backend: 'pglite' };
  }

  onError(fn: (err: Error) => void): void {
    this.#errors.push(fn);
  }

  boss(key: string): PgBoss {
    const boss = this.#bosses.get(key);
    if (!boss) throw new Error(`no job queue on database "${key}" (is the kernel's job runner started?)`);
    return boss;
  }

  get keys(): string[] {
    return [...this.#bosses.keys()];
  }

  /** pg-boss's schema (its tables) */
  get schema(): string {
    return this.#options.schema;
  }

  async stop(): Promise<void> {
    this.wakeUps.stop();
    for (const boss of this.#bosses.values()) await boss.stop({ graceful: true, timeout: 5000, close: true });
    this.#bosses.clear();
  }
}

/** pg-boss statements on `em`'s connection: inside its open transaction, if any, so a job commits with the write. */
export function txDb(em: EntityManager): Db {
  return { executeSql: async (text: string, values: unknown[] = []) => ({ rows: await run(em, text, values) }) };
}
