// Configuration from the environment, read once. buildApp() takes a Config, so
// tests and scripts can override any part without touching process.env.
import { existsSync, linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join, resolve } from 'node:path';
import type { Clock } from './clock.ts';

export interface Config {
  /** what "now" is for module code (ctx.now()); default the system clock, tests pass a ManualClock */
  clock?: Clock;
  /** connection key → PostgreSQL URL; no "main" entry means embedded PGlite */
  databases: Record<string, string>;
  /**
   * connection key → a direct URL for what needs a session of its own (LISTEN:
   * the registry, revocation and cache notifications, the job runner), where
   * `databases` goes through a transaction pooler (PgBouncer); default the key's URL
   */
  sessionDatabases: Record<string, string>;
  dataDir: string;
  /** PGlite: run in memory (tests) instead of persisting under dataDir */
  pgliteInMemory: boolean;
  /** in-memory PGlite: start from this dumpDataDir() file instead of a fresh initdb (tests: ~0.7 s instead of ~5 s) */
  pgliteSnapshot?: string;
  host: string;
  port: number;
  jwtSecret: string;
  /** key of secret fields' encryption at rest (SECRET_KEY) */
  secretKey: string;
  accessTokenTtlSeconds: number;
  refreshTokenTtlSeconds: number;
  poolSize: number;
  /** ms a request waits for a pooled connection (or a new one) before it answers 503 */
  dbAcquireTimeoutMs: number;
  /**
   * A pooled connection is closed after this many uses (DB_CONNECTION_MAX_USES) or
   * seconds (DB_CONNECTION_MAX_AGE_SECONDS): a PostgreSQL backend keeps the catalog
   * entries of every table it touched, across tenants (36 MB per 1,000 tenants).
   */
  dbConnectionMaxUses: number;
  dbConnectionMaxAgeSeconds: number;
  /** ms a tenant's statement waits for its own lane's connection while it serves other tenants (DB_LANE_WAIT_MS; db/lane-pool.ts) */
  dbLaneWaitMs: number;
  /**
   * statements each pooled connection keeps prepared (DB_PREPARED_STATEMENTS; db/prepared-statements.ts); unset: 1000, and none
   * on a database with a DATABASE_SESSION_URL (its URL is a transaction pooler, which before PgBouncer 1.21 loses them)
   */
  dbPreparedStatements: number | undefined;
  /** where a tenant provisioned without a connection key goes (TENANT_PLACEMENT): "main", or "fewest" (the database holding the fewest tenants) */
  tenantPlacement: 'main' | 'fewest';
  /** tenant schemas migrated at once (MIGRATE_CONCURRENCY); never more than half the pool (tenancy/migrate-tenants.ts) */
  migrateConcurrency: number;
  /** tenant schemas built ahead, ready for the next provisionings (PROVISION_SPARES; tenancy/spare-schemas.ts) */
  provisionSpares: number;
  bodyLimit: number;
  /** uploaded files: where the local file store keeps them (FILES_DIR, default <dataDir>/files), and the largest file one upload may carry (UPLOAD_MAX_BYTES, default 25 MiB) */
  files: { dir: string; uploadMaxBytes: number };
  /** rows one bulk request (POST <collection>/bulk) may create, change and delete together */
  bulkMaxRows: number;
  /** origins browsers may call the API from (CORS_ORIGINS); empty: no CORS headers at all; ['*']: any origin */
  corsOrigins: string[];
  /** TRUST_PROXY=true: behind a reverse proxy, X-Forwarded-For/-Proto give the client's address and scheme (rate limits, Secure cookies) */
  trustProxy: boolean;
  /** languages the console's switcher offers (CONSOLE_LANGUAGES), for data and, where translated, the interface */
  consoleLanguages: string[];
  /** tenants whose roles, abilities and interface texts a process keeps (TENANT_CACHE_SIZE); the least recently used go first */
  tenantCacheSize: number;
  /** requests per caller (or address) and window; processes on one database add their counts up every syncMs (auth/shared-rate-limits.ts) */
  rateLimit: { max: number; windowMs: number; syncMs: number };
  /** failed logins: per (tenant, e-mail, address) and per (tenant, e-mail); lockMs is window and lock time */
  loginThrottle: { addressMaxFailures: number; accountMaxFailures: number; lockMs: number };
  logLevel: string;
  defaultLanguage: string;
  manifestsDir: string;
  pluginsDir: string;
  /** schema of the tenant registry on the main database (default "platform") */
  registrySchema: string;
  platformAdmin?: { email: string; password: string };
  demoData: boolean;
  /** this process dispatches events and works jobs (WORKERS=false: it only serves requests and sends jobs) */
  workers: boolean;
  /** connections the job runner opens per PostgreSQL database */
  jobsPoolSize: number;
  events: {
    /** writes record events (EVENTS=off: no outbox rows, so no subscribers or webhooks hear of them) */
    enabled: boolean;
    /** ms the dispatcher waits when the outbox had nothing (more) to hand on */
    pollMs: number;
    /** outbox rows per dispatch transaction */
    batchSize: number;
    /** at most this many of them of one tenant */
    perTenant: number;
    /** jobs of one tenant the workers run at once (every process together) */
    tenantConcurrency: number;
    /** days dispatched events and their receipts are kept (delivery logs, replays) */
    retentionDays: number;
    /** every job's first retry delay in seconds, instead of its declaration's (tests, development) */
    retryDelaySeconds?: number;
  };
  /** results of analytics kept for callers whose statement is the same, until a table they read changes (RESULT_CACHE_MB, RESULT_CACHE_TTL_SECONDS; 0 MB: no cache) */
  resultCache: { maxBytes: number; ttlMs: number };
  /** HTTP calls module code makes (webhooks): where to and how much */
  outbound: {
    /** allow loopback, private and link-local targets (a local receiver in development); never in production */
    allowPrivate: boolean;
    timeoutMs: number;
    maxResponseBytes: number;
    /** resolves host names instead of the system's DNS (tests: every name to loopback, so nothing leaves the machine) */
    lookup?: (hostname: string) => Promise<{ address: string; family: number }[]>;
  };
  /** read-only connections to PostgreSQL databases tenants configure (BI's external data sources): where to and how much */
  externalDb: ExternalDbConfig;
}

/** The kernel's policy for external PostgreSQL databases (core/db/external-db.ts); every EXTERNAL_DB_* setting. */
export interface ExternalDbConfig {
  /** allow loopback, private and link-local targets (EXTERNAL_DB_ALLOW_PRIVATE=true: development, tests); never in production */
  allowPrivate: boolean;
  /** host names and addresses or CIDR ranges (EXTERNAL_DB_ALLOW_HOSTS, comma-separated) allowed although private: a warehouse on the internal network */
  allowHosts: string[];
  /** ms a connection (or a free pooled one) may take */
  connectTimeoutMs: number;
  /** longest statement time a caller may ask for; a call may shorten it */
  timeoutMs: number;
  /** most rows one query answers; a call may lower it */
  maxRows: number;
  /** connections per source (per tenant and credentials) */
  poolSize: number;
  /** ms an unused connection stays open; a source unused for that long holds none */
  idleMs: number;
  /** sources with open pools at once in this process; the least recently used closes beyond it */
  maxPools: number;
  /** resolves host names instead of the system's DNS (tests) */
  lookup?: (hostname: string) => Promise<{ address: string; family: number }[]>;
}

const int = (v: string | undefined, fallback: number) => (v && /^\d+$/.test(v) ? Number(v) : fallback);

/** EXTERNAL_DB_* from the environment. */
export function externalDbConfig(env: NodeJS.ProcessEnv = process.env): ExternalDbConfig {
  return {
    allowPrivate: env.EXTERNAL_DB_ALLOW_PRIVATE === 'true',
    allowHosts: (env.EXTERNAL_DB_ALLOW_HOSTS ?? '')
      .split(',')
      .map((h) => h.trim().toLowerCase())
      .filter(Boolean),
    connectTimeoutMs: Math.max(100, int(env.EXTERNAL_DB_CONNECT_TIMEOUT_MS, 5000)),
    timeoutMs: Math.max(100, int(env.EXTERNAL_DB_TIMEOUT_MS, 30_000)),
    maxRows: Math.max(1, int(env.EXTERNAL_DB_MAX_ROWS, 10_000)),
    poolSize: Math.max(1, int(env.EXTERNAL_DB_POOL_SIZE, 2)),
    idleMs: Math.max(100, int(env.EXTERNAL_DB_IDLE_MS, 10_000)),
    maxPools: Math.max(1, int(env.EXTERNAL_DB_MAX_POOLS, 50)),
  };
}

/** "https://app.example.com, http://localhost:5173" → the origins; each must be exactly what a browser sends in Origin. */
function origins(v: string | undefined): string[] {
  const list = (v ?? '')
    .split(',')
    .map((o) => o.trim())
    .filter(Boolean);
  if (list.includes('*')) return ['*'];
  for (const o of list) {
    // a trailing slash or a path would never equal a browser's Origin header: fail at start, not silently
    let origin: string | undefined;
    try {
      origin = new URL(o).origin;
    } catch {
      origin = undefined;
    }
    if (origin !== o) throw new Error(`CORS_ORIGINS: "${o}" is not an origin (scheme://host[:port], no path or trailing slash)`);
  }
  return list;
}

/** A secret from the environment, else one generated once and kept in the data directory. */
function persistedSecret(env: NodeJS.ProcessEnv, dataDir: string, variable: string, fileName: string): string {
  const given = env[variable];
  if (given) {
    if (given.length < 32) throw new Error(`${variable} must be at least 32 characters`);
    return given;
  }
  const file = join(dataDir, fileName);
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  mkdirSync(dataDir, { recursive: true });
  // written aside, then linked into place: of processes starting together one wins
  // and every one of them reads the winner's secret, never a half-written file
  const draft = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  writeFileSync(draft, randomBytes(48).toString('base64url'), { mode: 0o600 });
  try {
    linkSync(draft, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    unlinkSync(draft);
  }
  return readFileSync(file, 'utf8').trim();
}

function placement(value: string | undefined): Config['tenantPlacement'] {
  if (value === undefined || value === '' || value === 'main' || value === 'fewest') return (value || 'main') as Config['tenantPlacement'];
  throw new Error(`TENANT_PLACEMENT must be "main" or "fewest", not "${value}"`);
}

/** `<NAME>` as key main, `<NAME>_<KEY>` as key <key> (lower case). */
function urlsByKey(env: NodeJS.ProcessEnv, name: string): Record<string, string> {
  const urls: Record<string, string> = {};
  if (env[name]) urls.main = env[name];
  const pattern = new RegExp(`^${name}_([A-Z0-9_]+)$`);
  for (const [key, value] of Object.entries(env)) {
    const m = pattern.exec(key);
    if (m && value) urls[m[1].toLowerCase()] = value;
  }
  return urls;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const dataDir = resolve(env.DATA_DIR ?? 'data');
  const databases = urlsByKey(env, 'DATABASE_URL');
  const sessionDatabases = urlsByKey(env, 'DATABASE_SESSION_URL');
  const stray = Object.keys(sessionDatabases).find((key) => !databases[key]);
  if (stray) throw new Error(`DATABASE_SESSION_URL${stray === 'main' ? '' : `_${stray.toUpperCase()}`} is set without its DATABASE_URL${stray === 'main' ? '' : `_${stray.toUpperCase()}`}`);
  const admin = env.PLATFORM_ADMIN_EMAIL && env.PLATFORM_ADMIN_PASSWORD ? { email: env.PLATFORM_ADMIN_EMAIL, password: env.PLATFORM_ADMIN_PASSWORD } : undefined;
  return {
    databases,
    sessionDatabases,
    dataDir,
    pgliteInMemory: env.PGLITE_MEMORY === 'true',
    pgliteSnapshot: env.PGLITE_SNAPSHOT || undefined,
    host: env.HOST ?? '127.0.0.1',
    port: int(env.PORT, 3000),
    jwtSecret: persistedSecret(env, dataDir, 'JWT_SECRET', 'jwt-secret'),
    // losing it makes every stored secret unreadable: set it (and back it up) in production
    secretKey: persistedSecret(env, dataDir, 'SECRET_KEY', 'secret-key'),
    accessTokenTtlSeconds: int(env.ACCESS_TOKEN_TTL, 900),
    refreshTokenTtlSeconds: int(env.REFRESH_TOKEN_TTL, 30 * 24 * 3600),
    poolSize: int(env.DB_POOL_SIZE, 10),
    dbAcquireTimeoutMs: int(env.DB_ACQUIRE_TIMEOUT_MS, 5000),
    dbConnectionMaxUses: Math.max(1, int(env.DB_CONNECTION_MAX_USES, 1_000_000)),
    dbConnectionMaxAgeSeconds: Math.max(0, int(env.DB_CONNECTION_MAX_AGE_SECONDS, 1800)),
    dbLaneWaitMs: Math.max(0, int(env.DB_LANE_WAIT_MS, 25)),
    dbPreparedStatements: env.DB_PREPARED_STATEMENTS === undefined ? undefined : Math.max(0, int(env.DB_PREPARED_STATEMENTS, 0)),
    tenantPlacement: placement(env.TENANT_PLACEMENT),
    migrateConcurrency: Math.max(1, int(env.MIGRATE_CONCURRENCY, 4)),
    provisionSpares: Math.min(50, Math.max(0, int(env.PROVISION_SPARES, 2))),
    bodyLimit: int(env.BODY_LIMIT, 1024 * 1024),
    files: { dir: resolve(env.FILES_DIR ?? join(dataDir, 'files')), uploadMaxBytes: Math.max(1, int(env.UPLOAD_MAX_BYTES, 25 * 1024 * 1024)) },
    bulkMaxRows: Math.max(1, int(env.BULK_MAX_ROWS, 100)),
    corsOrigins: origins(env.CORS_ORIGINS),
    trustProxy: env.TRUST_PROXY === 'true',
    consoleLanguages: (env.CONSOLE_LANGUAGES ?? 'en,de,fr,es')
      .split(',')
      .map((l) => l.trim().toLowerCase())
      .filter((l) => /^[a-z]{2,3}(-[a-z0-9]{2,8})?$/.test(l)),
    tenantCacheSize: Math.max(100, int(env.TENANT_CACHE_SIZE, 20_000)),
    rateLimit: { max: int(env.RATE_LIMIT_MAX, 1200), windowMs: int(env.RATE_LIMIT_WINDOW_MS, 60_000), syncMs: Math.max(50, int(env.RATE_LIMIT_SYNC_MS, 1000)) },
    loginThrottle: {
      addressMaxFailures: Math.max(1, int(env.LOGIN_MAX_FAILURES, 5)),
      accountMaxFailures: Math.max(1, int(env.LOGIN_ACCOUNT_MAX_FAILURES, 50)),
      lockMs: Math.max(1, int(env.LOGIN_LOCK_SECONDS, 900)) * 1000,
    },
    logLevel: env.LOG_LEVEL ?? 'info',
    defaultLanguage: env.DEFAULT_LANGUAGE ?? 'en',
    manifestsDir: resolve(env.MANIFESTS_DIR ?? 'manifests'),
    pluginsDir: resolve(env.PLUGINS_DIR ?? 'plugins'),
    registrySchema: env.REGISTRY_SCHEMA ?? 'platform',
    platformAdmin: admin,
    demoData: env.DEMO_DATA ? env.DEMO_DATA === 'true' : true,
    workers: env.WORKERS !== 'false',
    jobsPoolSize: Math.max(2, int(env.JOBS_POOL_SIZE, 4)),
    events: {
      enabled: env.EVENTS !== 'off',
      pollMs: Math.max(10, int(env.EVENTS_POLL_MS, 250)),
      batchSize: Math.max(1, int(env.EVENTS_BATCH_SIZE, 500)),
      perTenant: Math.max(1, int(env.EVENTS_PER_TENANT, 100)),
      tenantConcurrency: Math.max(1, int(env.JOBS_TENANT_CONCURRENCY, 50)),
      retentionDays: Math.max(1, int(env.EVENTS_RETENTION_DAYS, 7)),
      retryDelaySeconds: env.JOBS_RETRY_DELAY_SECONDS ? Math.max(1, int(env.JOBS_RETRY_DELAY_SECONDS, 5)) : undefined,
    },
    resultCache: { maxBytes: int(env.RESULT_CACHE_MB, 64) * 1024 * 1024, ttlMs: Math.max(1, int(env.RESULT_CACHE_TTL_SECONDS, 600)) * 1000 },
    outbound: {
      allowPrivate: env.OUTBOUND_ALLOW_PRIVATE === 'true',
      timeoutMs: Math.max(100, int(env.OUTBOUND_TIMEOUT_MS, 10_000)),
      maxResponseBytes: Math.max(0, int(env.OUTBOUND_MAX_RESPONSE_BYTES, 64 * 1024)),
    },
    externalDb: externalDbConfig(env),
  };
}
