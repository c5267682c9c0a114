// One MikroORM instance per database connection key. "main" holds the tenant
// registry; without DATABASE_URL it is an embedded PGlite under the data dir.
// Requests never use these directly: they get a fork for their tenant's schema.
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { MikroORM, createPostgreSqlTypeParsers } from '@mikro-orm/postgresql';
import { PgliteDriver } from '@mikro-orm/pglite';
import type { EntitySchema } from '@mikro-orm/core';
import { PostgresDialect, type PostgresPool } from 'kysely';
import type { Config } from '../config.ts';
import { VERSION_TABLE } from './schema-versions.ts';
import { guardPool, poolStats, type PoolStats } from './pool-guard.ts';
import { LanePool, type LaneStats } from './lane-pool.ts';
import { prepareStatements } from './prepared-statements.ts';
import pg, { TEXT_ARRAY_OID, type LanePgClient } from './pg.ts';

export type Orm = MikroORM;

export class Databases {
  readonly orms = new Map<string, Orm>();
  readonly #pools = new Map<string, LanePool<LanePgClient>>();
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

  /** What operators see of each PostgreSQL connection key's lanes (none for embedded PGlite). */
  laneStats(): ({ database: string } & LaneStats)[] {
    return [...this.#pools].map(([database, pool]) => ({ database, ...pool.stats() }));
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
      // behind a transaction pooler (it has a session URL of its own) a statement may run on a server connection that never prepared it
      const prepared = this.#config.dbPreparedStatements ?? (this.#config.sessionDatabases?.[key] ? 0 : DEFAULT_PREPARED_STATEMENTS);
      const pool = openLanePool(url, { ...this.#config, dbPreparedStatements: prepared });
      this.#pools.set(key, pool);
      // the dialect is ours, so the pool is: one connection per lane (db/lane-pool.ts)
      return MikroORM.init({ ...common, clientUrl: url, driverOptions: () => new PostgresDialect({ pool: pool as unknown as PostgresPool }) } as never);
    }
    const dir = this.#config.pgliteInMemory ? 'memory://' : join(this.#config.dataDir, 'pglite');
    if (dir !== 'memory://') mkdirSync(dir, { recursive: true });
    const snapshot = dir === 'memory://' && this.#config.pgliteSnapshot;
    // MikroORM hands driverOptions on to PGlite.create, which can load a dumped cluster.
    // Not a Blob: MikroORM copies its options, and a copied Blob loses its data.
    const dump = snapshot ? readFileSync(snapshot) : undefined;
    // gzip or plain tar, told by gzip's magic bytes
    const type = dump?.[0] === 0x1f && dump[1] === 0x8b ? 'application/x-gzip' : 'application/x-tar';
    const driverOptions = dump ? { loadDataDir: { type, arrayBuffer: async () => dump } } : undefined;
    return MikroORM.init({ ...common, driver: PgliteDriver, dbName: dir, driverOptions } as never);
  }

  async close(): Promise<void> {
    for (const orm of this.orms.values()) await orm.close(true);
    this.orms.clear();
    this.#pools.clear();
  }
}

/** per pooled connection; a cached plan of a GET by id holds about 66 KB of its backend's memory */
const DEFAULT_PREPARED_STATEMENTS = 1000;

type LaneConfig = Pick<Config, 'poolSize' | 'dbAcquireTimeoutMs' | 'dbConnectionMaxUses' | 'dbConnectionMaxAgeSeconds' | 'dbLaneWaitMs'> & { dbPreparedStatements: number };

/** DB_POOL_SIZE lanes of one connection each, with what MikroORM gives the pool it would make itself. */
export function openLanePool(url: string, config: LaneConfig): LanePool<LanePgClient> {
  const types = new pg.TypeOverrides();
  for (const [oid, parse] of Object.entries(createPostgreSqlTypeParsers(pg.types.getTypeParser(TEXT_ARRAY_OID)))) types.setTypeParser(Number(oid), parse);
  const lanes = Array.from({ length: Math.max(1, config.poolSize) }, () => {
    const lane = new pg.Pool({
      connectionString: url,
      min: 0,
      max: 1,
      types,
      connectionTimeoutMillis: config.dbAcquireTimeoutMs,
      // recycled: a backend's catalog cache grows with every tenant table it touches and never shrinks
      maxUses: config.dbConnectionMaxUses,
      maxLifetimeSeconds: config.dbConnectionMaxAgeSeconds,
      // kept while idle (pg-pool closes them after 10 s otherwise): at low traffic a lane sees a request every
      // few seconds, and each would pay a new connection and a cold backend; age still ends it
      idleTimeoutMillis: 0,
      // how operators tell Plinth's backends apart in pg_stat_activity; PGAPPNAME names them otherwise
      fallback_application_name: 'plinth',
    });
    guardPool(lane);
    // a connection dropped by the server emits 'error': on the client while checked out, on the
    // pool while idle; unheard, either ends the process. The query in flight rejects on its own.
    lane.on('connect', (client) => {
      client.on('error', () => {});
      prepareStatements(client, config.dbPreparedStatements);
    });
    lane.on('error', () => {});
    return lane;
  });
  return new LanePool(lanes, { patienceMs: config.dbLaneWaitMs, acquireTimeoutMs: config.dbAcquireTimeoutMs });
}
