// node-postgres, typed: pg ships CommonJS without types (and @types/pg is not a
// dependency), so the few parts Plinth and its bench use are declared here,
// once. createRequire loads the same module instance MikroORM's
// `import { Pool } from 'pg'` gets (pg's ESM entry re-exports its CommonJS one).
import { createRequire } from 'node:module';

export interface QueryResult {
  rows: Record<string, any>[];
}
/** a named statement is prepared once per connection */
export interface QueryConfig {
  name?: string;
  text: string;
  values?: unknown[];
}
export interface PoolClient {
  query(sql: string | QueryConfig, values?: unknown[]): Promise<QueryResult>;
  release(): void;
}
export interface Pool {
  query(sql: string | QueryConfig, values?: unknown[]): Promise<QueryResult>;
  connect(): Promise<PoolClient>;
  end(): Promise<void>;
  on(event: 'error', fn: (err: Error) => void): void;
}
/** text[]: its parser gives the elements as PostgreSQL sent them */
export const TEXT_ARRAY_OID = 1009;

/** A pooled client as the lanes (db/lane-pool.ts) and the pool guard (db/pool-guard.ts) see it. */
export interface LanePgClient {
  release(err?: Error | boolean): void;
  on(event: 'error', fn: (err: Error) => void): void;
  once(event: 'end', fn: () => void): void;
  off(event: 'end', fn: () => void): void;
}
/** A pg.Pool of one connection: a lane. */
export interface LanePgPool {
  connect(): Promise<LanePgClient>;
  end(): Promise<void>;
  readonly totalCount: number;
  readonly idleCount: number;
  readonly options: object;
  on(event: 'connect' | 'acquire', fn: (client: LanePgClient) => void): void;
  on(event: 'release', fn: (err: unknown, client: LanePgClient) => void): void;
  on(event: 'error', fn: (err: Error) => void): void;
}
export interface LanePgPoolOptions {
  connectionString: string;
  min: number;
  max: number;
  types: TypeOverrides;
  connectionTimeoutMillis: number;
  maxUses: number;
  maxLifetimeSeconds: number;
  idleTimeoutMillis: number;
  fallback_application_name: string;
}
export interface TypeOverrides {
  setTypeParser(oid: number, parse: (text: string) => unknown): void;
}
export interface Notification {
  channel: string;
  payload?: string;
}

/** One connection of its own, outside any pool (LISTEN, health probes, the bench). */
export interface Client {
  connect(): Promise<void>;
  query(sql: string, values?: unknown[]): Promise<QueryResult>;
  on(event: 'notification', fn: (n: Notification) => void): void;
  on(event: 'error' | 'end', fn: (err?: Error) => void): void;
  end(): Promise<void>;
}

interface PgModule {
  Client: (new (o: { connectionString: string; connectionTimeoutMillis?: number }) => Client) & { prototype: { query: (...args: unknown[]) => unknown } };
  Pool: (new (o: { connectionString?: string; max: number; min: number; types: TypeOverrides }) => Pool) & (new (o: LanePgPoolOptions) => LanePgPool);
  TypeOverrides: new () => TypeOverrides;
  types: { getTypeParser(oid: typeof TEXT_ARRAY_OID): (text: string) => string[] };
  escapeLiteral(s: string): string;
}

const pg = createRequire(import.meta.url)('pg') as PgModule;
export default pg;
