// node-postgres, typed: pg ships CommonJS without types (and @types/pg is not a
// dependency), so the few parts Plinth and its bench use are declared here,
// once. createRequire loads the same module instance MikroORM's
// `import { Pool } from 'pg'` gets (pg's ESM entry re-exports its CommonJS one).
import { createRequire } from 'node:module';

export interface QueryResult {
  rows: Record<string, any>[];
}
export interface PoolClient {
  query(sql: string, values?: unknown[]): Promise<QueryResult>;
  release(): void;
}
export interface Pool {
  query(sql: string, values?: unknown[]): Promise<QueryResult>;
  connect(): Promise<PoolClient>;
  end(): Promise<void>;
  on(event: 'error', fn: (err: Error) => void): void;
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
  Pool: new (o: { connectionString?: string; max: number; min: number; types: TypeOverrides }) => Pool;
  TypeOverrides: new () => TypeOverrides;
  escapeLiteral(s: string): string;
}

const pg = createRequire(import.meta.url)('pg') as PgModule;
export default pg;
