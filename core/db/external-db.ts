// Read-only access to PostgreSQL databases a tenant configured (BI's external
// data sources), for module code through ctx.externalDb(target).
//
// A tenant must not reach this machine or its network through it, so targets
// are judged as outbound-http.ts judges webhooks: a literal address before any
// connection, a name in the socket's own lookup on every connection (DNS
// rebinding gains nothing); loopback, private, link-local and other non-public
// addresses are refused unless EXTERNAL_DB_ALLOW_PRIVATE or
// EXTERNAL_DB_ALLOW_HOSTS allow them. Every statement runs in a READ ONLY
// transaction that is rolled back, with a statement timeout, in the extended
// protocol (one statement, never several) and inside a select that caps its
// rows. Connections are pooled per tenant and credentials, a few per source,
// closed when idle; only so many sources keep a pool at once, so thousands of
// tenants do not hold thousands of connections.
import { createHash } from 'node:crypto';
import { isIP, Socket, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import type { ExternalDbConfig } from '../config.ts';
import { guardedLookup, refusedAddress, systemResolve } from '../outbound-http.ts';
import pg, { type QueryResult } from './pg.ts';
import { describeSchema, type ExternalSchema, type Run } from './external-schema.ts';
import { ExternalDbError, type ExternalDbErrorCode } from './external-error.ts';

export type { ExternalSchema, ExternalTable, ExternalColumn } from './external-schema.ts';
export { ExternalDbError, type ExternalDbErrorCode } from './external-error.ts';

export const SSL_MODES = ['disable', 'require', 'verify-full'] as const;
export type SslMode = (typeof SSL_MODES)[number];

/** Where to connect: postgres://user@host:port/database (no password in it), the password on its own. */
export interface ExternalTarget {
  /** postgres://user@host:port/database, without the password */
  url: string;
  /** the user's password, if the server asks for one */
  password?: string | null;
  /** disable: plain; require: TLS without checking the certificate; verify-full: TLS with a certificate valid for the host. Default: the URL's sslmode, else require */
  sslMode?: SslMode;
}

export interface ExternalResult {
  /** every value as PostgreSQL's text (or null): the caller knows what it selected */
  rows: Record<string, string | null>[];
  /** the result's columns in order: name and PostgreSQL type oid */
  columns: { name: string; typeId: number }[];
  /** more rows than maxRows came back: only maxRows are here */
  truncated: boolean;
  /** how long the statement took, in ms */
  durationMs: number;
}

/** One external database as module code sees it (ctx.externalDb(target)). */
export interface ExternalDb {
  /** the server's version and the tables and views of `schema` the user may select from, with their columns (NO_SCHEMA when it does not exist or may not be used) */
  describe(schema: string, opts: { timeoutMs: number; maxTables: number }): Promise<ExternalSchema>;
  /** one select, read-only, with bound values ($1…): at most maxRows rows, within timeoutMs (both lowered to the kernel's limits) */
  query(sql: string, values: unknown[], opts: { timeoutMs: number; maxRows: number }): Promise<ExternalResult>;
}

interface Endpoint {
  host: string;
  port: number;
  database: string;
  user: string;
  password: string | undefined;
  ssl: SslMode;
}

// pg.ts types what the kernel's own pools use; these are the few options and members more an external pool needs
interface PooledClient {
  query(q: { text: string; values: unknown[]; queryMode: 'extended'; query_timeout: number }): Promise<QueryResult & { fields: { name: string; dataTypeID: number }[] }>;
  release(destroy?: Error | boolean): void;
}
interface ExternalPool {
  connect(): Promise<PooledClient>;
  end(): Promise<void>;
  on(event: 'error', fn: (err: Error) => void): void;
  readonly totalCount: number;
}
type PoolConstructor = new (o: Record<string, unknown>) => ExternalPool;

const HOST = /^([A-Za-z0-9-]+\.)*[A-Za-z0-9-]+\.?$/;
/** every value as text: the caller decides what it means (and no driver guess loses a bigint's or a numeric's digits) */
const TEXT_TYPES = { getTypeParser: () => (value: string) => value };
/** how much longer than the statement timeout the client waits for an answer before it gives up on the connection */
const GRACE_MS = 2000;
const PG_CODES: Record<string, ExternalDbErrorCode> = {
  '28P01': 'AUTH_FAILED',
  '28000': 'AUTH_FAILED',
  '3D000': 'NO_DATABASE',
  '57014': 'TIMEOUT',
  '25006': 'READ_ONLY',
  '53300': 'UNREACHABLE',
  '57P03': 'UNREACHABLE',
};
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'ETIMEDOUT', 'EPIPE', 'EADDRNOTAVAIL']);

const invalid = (message: string) => new ExternalDbError('INVALID_TARGET', message);

function decoded(part: string, what: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    throw invalid(`its ${what} is not valid percent-encoding`);
  }
}

/** The target's parts, or INVALID_TARGET saying what is wrong with it. */
export function parseTarget(target: ExternalTarget): Endpoint {
  let url: URL;
  try {
    url = new URL(target.url);
  } catch {
    throw invalid('is not a URL: postgres://user@host:5432/database');
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') throw invalid(`is a ${url.protocol} URL, not postgres://user@host:5432/database`);
  if (url.password) throw invalid('holds a password: give it on its own, so it is kept encrypted');
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  if (!host || (!isIP(host) && !HOST.test(host))) throw invalid('names no host name or address');
  const user = decoded(url.username, 'user');
  if (!user) throw invalid('names no user: postgres://user@host:5432/database');
  const database = decoded(url.pathname.replace(/^\//, ''), 'database');
  if (!database || database.includes('/')) throw invalid('names no database: postgres://user@host:5432/database');
  for (const key of url.searchParams.keys()) if (key !== 'sslmode') throw invalid(`takes no parameter "${key}" (only sslmode)`);
  const sslmode = url.searchParams.get('sslmode');
  if (sslmode !== null && !(SSL_MODES as readonly string[]).includes(sslmode)) throw invalid(`sslmode is one of ${SSL_MODES.join(', ')}`);
  if (target.sslMode !== undefined && !(SSL_MODES as readonly string[]).includes(target.sslMode)) throw invalid(`its sslMode is one of ${SSL_MODES.join(', ')}`);
  const port = url.port ? Number(url.port) : 5432;
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw invalid('names no port from 1 to 65535');
  return { host, port, database, user, password: target.password ?? undefined, ssl: target.sslMode ?? (sslmode as SslMode | null) ?? 'require' };
}

/** The error a failure of the driver, the network or the policy means; `connecting`: nothing ran yet. */
function translated(err: unknown, connecting: boolean): ExternalDbError {
  if (err instanceof ExternalDbError) return err;
  const e = err as { code?: string; message?: string };
  const message = e.message ?? String(err);
  const code = e.code && PG_CODES[e.code];
  if (code) return new ExternalDbError(code, code === 'TIMEOUT' ? 'the statement ran longer than its time limit' : message, { cause: err });
  if (e.code && NETWORK_CODES.has(e.code)) return new ExternalDbError('UNREACHABLE', message, { cause: err });
  if (/\b(SSL|TLS)\b|certificate/i.test(message)) return new ExternalDbError('TLS_FAILED', message, { cause: err });
  if (e.code && /^[0-9A-Z]{5}$/.test(e.code)) return new ExternalDbError('QUERY_FAILED', message, { cause: err });
  if (!connecting && /timeout/i.test(message)) return new ExternalDbError('TIMEOUT', 'the server did not answer within the time limit', { cause: err });
  return new ExternalDbError('UNREACHABLE', connecting && /timeout/i.test(message) ? 'no connection within the time limit' : message, { cause: err });
}

export class ExternalDatabases {
  #config: ExternalDbConfig;
  /** by tenant and credentials, least recently used first */
  #pools = new Map<string, { pool: ExternalPool; used: number }>();

  constructor(config: ExternalDbConfig) {
    this.#config = config;
  }

  /** `target` as seen by a module of `tenantId`: its pools are the tenant's own. */
  of(tenantId: string, target: ExternalTarget): ExternalDb {
    return {
      describe: (schema, opts) => this.#session(tenantId, target, opts.timeoutMs, (run) => describeSchema(run, schema, opts.maxTables)),
      query: (sql, values, opts) => this.#query(tenantId, target, sql, values, opts),
    };
  }

  async close(): Promise<void> {
    const pools = [...this.#pools.values()];
    this.#pools.clear();
    await Promise.all(pools.map((p) => p.pool.end().catch(() => {})));
  }

  async #query(tenantId: string, target: ExternalTarget, sql: string, values: unknown[], opts: { timeoutMs: number; maxRows: number }): Promise<ExternalResult> {
    const max = Math.max(1, Math.min(this.#config.maxRows, Math.trunc(opts.maxRows)));
    return this.#session(tenantId, target, opts.timeoutMs, async (run) => {
      const started = performance.now();
      // a select around it: a query, never a write, of at most max + 1 rows (the one more says there were more);
      // the line break ends a trailing comment of the caller's text
      const r = await run(`select * from (${sql}\n) as plinth_query limit ${max + 1}`, values);
      return {
        rows: r.rows.slice(0, max) as Record<string, string | null>[],
        columns: r.fields.map((f) => ({ name: f.name, typeId: f.dataTypeID })),
        truncated: r.rows.length > max,
        durationMs: Math.round(performance.now() - started),
      };
    });
  }

  /** `fn` on a pooled connection in a read-only transaction with a statement timeout, rolled back after it. */
  async #session<T>(tenantId: string, target: ExternalTarget, timeoutMs: number, fn: (run: Run) => Promise<T>): Promise<T> {
    const ms = Math.max(1, Math.min(this.#config.timeoutMs, Math.trunc(timeoutMs)));
    const pool = this.#poolFor(tenantId, this.#endpoint(target));
    let client: PooledClient;
    try {
      client = await pool.connect();
    } catch (err) {
      throw translated(err, true);
    }
    let broken: Error | undefined;
    const run: Run = async (text, values = []) => {
      try {
        return await client.query({ text, values, queryMode: 'extended', query_timeout: ms + GRACE_MS });
      } catch (err) {
        // a statement PostgreSQL refused leaves the connection usable; anything else (a client-side timeout, a lost socket) does not
        if (!/^[0-9A-Z]{5}$/.test(String((err as { code?: unknown }).code))) broken = err as Error;
        throw translated(err, false);
      }
    };
    try {
      await run('begin transaction read only');
      await run(`set local statement_timeout = ${ms}`);
      return await fn(run);
    } finally {
      // rolled back, never committed: whatever the statement set (a setting, a temporary object) goes with it
      if (!broken) await run('rollback').catch(() => undefined);
      client.release(broken ?? undefined);
    }
  }

  /** The target parsed and, when it is a literal address, judged (a name is judged on every connection, in the lookup). */
  #endpoint(target: ExternalTarget): Endpoint {
    const endpoint = parseTarget(target);
    if (isIP(endpoint.host)) {
      const why = this.#refused(endpoint.host, endpoint.host);
      if (why) throw new ExternalDbError('REFUSED_TARGET', why);
    }
    return endpoint;
  }

  /** Why `address` (of `host`) may not be connected to, or null. */
  #refused(host: string, address: string): string | null {
    const why = refusedAddress(address);
    if (!why || this.#config.allowPrivate) return null;
    return this.#config.allowHosts.some((entry) => entry === host || matches(entry, address)) ? null : why;
  }

  #poolFor(tenantId: string, endpoint: Endpoint): ExternalPool {
    const now = Date.now();
    // sources nobody used for a while hold no connection any more: drop their pools
    for (const [key, entry] of this.#pools) {
      if (entry.pool.totalCount === 0 && now - entry.used > this.#config.idleMs) {
        this.#pools.delete(key);
        void entry.pool.end().catch(() => {});
      }
    }
    const key = createHash('sha256')
      .update(JSON.stringify([tenantId, endpoint]))
      .digest('base64url');
    const entry = this.#pools.get(key) ?? { pool: this.#newPool(endpoint), used: now };
    entry.used = now;
    this.#pools.delete(key);
    this.#pools.set(key, entry);
    for (const [oldest, old] of this.#pools) {
      if (this.#pools.size <= this.#config.maxPools) break;
      // its connections close once their statements end
      this.#pools.delete(oldest);
      void old.pool.end().catch(() => {});
    }
    return entry.pool;
  }

  #newPool(endpoint: Endpoint): ExternalPool {
    const Pool = pg.Pool as unknown as PoolConstructor;
    const pool = new Pool({
      host: endpoint.host,
      port: endpoint.port,
      database: endpoint.database,
      user: endpoint.user,
      password: endpoint.password,
      ssl: endpoint.ssl === 'disable' ? false : { rejectUnauthorized: endpoint.ssl === 'verify-full' },
      application_name: 'plinth',
      max: this.#config.poolSize,
      idleTimeoutMillis: this.#config.idleMs,
      connectionTimeoutMillis: this.#config.connectTimeoutMs,
      // idle connections never keep the process alive
      allowExitOnIdle: true,
      types: TEXT_TYPES,
      stream: () => this.#socket(),
    });
    // an idle connection the server closed: the pool drops it, the next statement opens another
    pool.on('error', () => {});
    return pool;
  }

  /** A socket whose connect (pg calls connect(port, host)) resolves the host through the guarded lookup. */
  #socket(): Socket {
    const socket = new Socket();
    const connect = socket.connect.bind(socket);
    Object.assign(socket, { connect: (port: number, host: string) => connect({ port, host, lookup: this.#lookup() }) });
    return socket;
  }

  /** The guarded lookup of outbound-http.ts, judged by this policy (EXTERNAL_DB_ALLOW_*). */
  #lookup(): LookupFunction {
    return guardedLookup(
      this.#config.lookup ?? systemResolve,
      (host, address) => this.#refused(host.toLowerCase(), address),
      (kind, message) => new ExternalDbError(kind === 'refused' ? 'REFUSED_TARGET' : 'UNREACHABLE', message),
    );
  }
}

/** Whether an allow-list entry (an address or a CIDR range) holds `address`. */
function matches(entry: string, address: string): boolean {
  try {
    const ip = ipaddr.process(address);
    if (entry.includes('/')) {
      const [range, bits] = ipaddr.parseCIDR(entry);
      return ip.kind() === range.kind() && ip.match(range, bits);
    }
    return ipaddr.isValid(entry) && ipaddr.process(entry).toString() === ip.toString();
  } catch {
    return false;
  }
}
