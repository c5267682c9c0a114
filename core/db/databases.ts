// One MikroORM instance per database connection key. "main" holds the tenant
// registry; without DATABASE_URL it is an embedded PGlite under the data dir.
// Requests never use these directly: they get a fork for their tenant's schema.
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { MikroORM } from '@mikro-orm/postgresql';
import { PgliteDriver } from '@mikro-orm/pglite';
import type { EntitySchema } from '@mikro-orm/core';
import type { Config } from '../config.ts';
import { VERSION_TABLE } from './schema-versions.ts';
import { guardPool, poolStats, type PoolStats } from './pool-guard.ts';

type PgPool = Parameters<typeof guardPool>[0] & Parameters<typeof poolStats>[0];

export type Orm = MikroORM;

export class Databases {
  readonly orms = new Map<string, Orm>();
  readonly #pools = new Map<string, PgPool>();
  readonly embedded: boolean;
  #config: Config;
  #entities: EntitySchema[];

  constructor(config: Config, entities: EntitySchema[]) {
    this.#config = config;
    this.#entities = entities;
    this.embedded = !config.databases.main;
  }

  async open(): Promise<void> {
    const keys = ['main', ...Object.keys(this.#config.databases).filter((k) => k !== 'main')];
    for (const key of keys) this.orms.set(key, await this.#init(key)); // close() ends the ones opened if a later one fails
  }

  get(key: string): Orm {
    const orm = this.orms.get(key);
    if (!orm) throw new Error(`no database connection "${key}" is configured (DATABASE_URL_${key.toUpperCase()})`);
    return orm;
  }

  /** The PostgreSQL URL of a connection key; undefined for embedded PGlite. */
  url(key: string): string | undefined {
    return this.#config.databases[key];
  }

  /** A direct URL of a connection key for what needs a session (LISTEN): not through a transaction pooler. */
  sessionUrl(key: string): string | undefined {
    return this.#config.sessionDatabases?.[key] ?? this.#config.databases[key];
  }

  get main(): Orm {
    return this.get('main');
  }

  /** Pool counters per PostgreSQL connection key (none for embedded PGlite). */
  poolStats(): Record<string, PoolStats> {
    return Object.fromEntries([...this.#pools].map(([key, pool]) => [key, poolStats(pool)]));
  }

  async #init(key: string): Promise<Orm> {
    const common = {
      // MikroORM finds a transaction under way by this name: one per database, so a transaction on one
      // database never takes over work meant for another (a tenant move copies between two at once)
      contextName: key,
      entities: this.#entities,
      allowGlobalContext: false,
      discovery: { warnWhenNoEntities: false },
      schemaGenerator: { skipTables: [VERSION_TABLE] },
      pool: { min: 0, max: this.#config.poolSize },
      ensureIndexes: false,
    };
    const url = this.#config.databases[key];
    if (url) {
      const driverOptions = {
        connectionTimeoutMillis: this.#config.dbAcquireTimeoutMs,
        // recycled: a backend's catalog cache grows with every tenant table it touches and never shrinks
        maxUses: this.#config.dbConnectionMaxUses,
        maxLifetimeSeconds: this.#config.dbConnectionMaxAgeSeconds,
        // how operators tell Plinth's backends apart in pg_stat_activity; PGAPPNAME names them otherwise
        fallback_application_name: 'plinth',
        onPoolCreated: (pool: PgPool) => {
          guardPool(pool);
          this.#pools.set(key, pool);
        },
      };
      return MikroORM.init({ ...common, clientUrl: url, driverOptions } as never);
    }
    const dir = this.#config.pgliteInMemory ? 'memory://' : join(this.#config.dataDir, 'pglite');
    if (dir !== 'memory://') mkdirSync(dir, { recursive: true });
    const snapshot = dir === 'memory://' && this.#config.pgliteSnapshot;
    // MikroORM hands driverOptions on to PGlite.create, which can load a dumped cluster.
    // Not a Blob: MikroORM copies its options, and a copied Blob loses its data.
    const dump = snapshot ? readFileSync(snapshot) : undefined;
    const driverOptions = dump ? { loadDataDir: { type: 'application/x-gzip', arrayBuffer: async () => dump } } : undefined;
    return MikroORM.init({ ...common, driver: PgliteDriver, dbName: dir, driverOptions } as never);
  }

  async close(): Promise<void> {
    for (const orm of this.orms.values()) await orm.close(true);
    this.orms.clear();
    this.#pools.clear();
  }
}
