// Configuration from the environment, read once. buildApp() takes a Config, so
// tests and scripts can override any part without touching process.env.
import { existsSync, linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join, resolve } from 'node:path';
import type { Clock } from './clock.ts';

export interface Config {
  /** what "now" is for module code (ctx.now()); default the system clock, tests pass a ManualClock */
  clock?: Clock;
  /**
   * connection key → PostgreSQL URL (`postgres://user@host:5432/db`); no "main" entry means embedded PGlite.
   * DATABASE_URL_<KEY> adds a database: a tenant provisioned with connectionKey "<key>" (or placed there by TENANT_PLACEMENT) lives there
   */
  databases: Record<string, string>;
  /**
   * connection key → a direct URL for what needs a session of its own (LISTEN:
   * the registry, revocation and cache notifications, the job runner), where
   * `databases` goes through a transaction pooler (PgBouncer); default the key's URL
   */
  sessionDatabases: Record<string, string>;
  /** where the embedded database (<dataDir>/pglite) and the generated JWT_SECRET and SECRET_KEY are kept */
  dataDir: string;
  /** PGlite: run in memory (tests) instead of persisting under dataDir */
  pgliteInMemory: boolean;
  /** in-memory PGlite: start from this dumpDataDir() file instead of a fresh initdb (tests: ~0.7 s instead of ~5 s) */
  pgliteSnapshot?: string;
  /** address the HTTP server listens on */
  host: string;
  /** port the HTTP server listens on */
  port: number;
  /** HS256 signing secret of access tokens, at least 32 characters; set it in production (processes sharing a database must share it) */
  jwtSecret: string;
  /** key of secret fields' encryption at rest (SECRET_KEY) */
  secretKey: string;
  /** seconds an access token is valid */
  accessTokenTtlSeconds: number;
  /** seconds a refresh token is valid */
  refreshTokenTtlSeconds: number;
  /**
   * connections per database, each a lane (db/lane-pool.ts): a tenant's statements run on its lane's connection
   * when it is free, so a backend meets a pool-size share of the tenants and stays warm. pg_stat_activity shows
   * them as application `plinth` (PGAPPNAME names them otherwise), the job runner's as `plinth-jobs`
   */
  poolSize: number;
  /** ms a request waits for a pooled connection (or a new one) before it answers 503 DATABASE_UNAVAILABLE */
  dbAcquireTimeoutMs: number;
  /**
   * uses after which a pooled connection is closed (the next use opens a new one): a PostgreSQL backend keeps
   * the catalog entries of every table it touched, across tenants (about 36 MB per 1,000 tenants). Lanes keep
   * each backend to a pool-size share of the tenants, so age is what recycles; a low count throws warm caches away
   */
  dbConnectionMaxUses: number;
  /** seconds after which a pooled connection is closed, to give back the catalog entries its backend kept; 0: never */
  dbConnectionMaxAgeSeconds: number;
  /**
   * ms a tenant's statement waits for its own lane's connection while that serves other tenants, even with
   * another connection free (there it would be cold); past it, it takes the first free one. A tenant whose
   * lane serves itself takes a free one at once, so one busy tenant gets the whole pool (db/lane-pool.ts)
   */
  dbLaneWaitMs: number;
  /**
   * statements each pooled connection keeps prepared (db/prepared-statements.ts): a statement with bind values is
   * prepared when its text runs a second time, and past this many the least recently used is deallocated; a kept
   * plan holds about 66 KB of the backend's memory. Unset: 1000, and none on a database with a DATABASE_SESSION_URL
   * (its URL is a transaction pooler, which before PgBouncer 1.21 loses them)
   */
  dbPreparedStatements: number | undefined;
  /**
   * where POST /api/platform/tenants and `npm run tenant:create` put a tenant given no connection key: "main", or
   * "fewest" (the configured database holding the fewest tenants; a tie goes to main)
   */
  tenantPlacement: 'main' | 'fewest';
  /**
   * tenant schemas `npm run migrate` and the start's background migration work on at once, each in its own
   * transaction; never more than half of DB_POOL_SIZE, the other half serving requests (tenancy/migrate-tenants.ts)
   */
  migrateConcurrency: number;
  /**
   * tenant schemas kept built ahead with every table of the loaded modules: provisioning renames one (tens of ms)
   * instead of creating some 300 tables, indexes and keys. Refilled in the background after each one taken and at
   * start, rebuilt after a module change; 0 builds none (tenancy/spare-schemas.ts)
   */
  provisionSpares: number;
  /** largest JSON request body in bytes (413 beyond) */
  bodyLimit: number;
  /** uploaded files */
  files: {
    /** where the local file store keeps uploaded files, one folder per tenant */
    dir: string;
    /** bytes one uploaded file may have (413 PAYLOAD_TOO_LARGE beyond) */
    uploadMaxBytes: number;
  };
  /** rows one bulk request (POST <collection>/bulk) may create, change and delete together (400 beyond) */
  bulkMaxRows: number;
  /**
   * origins browsers may call the API from, comma-separated, each exactly as a browser sends it in Origin; empty: no
   * CORS headers at all; `*`: any origin. A listed origin's preflight (OPTIONS) answers 204, and answers expose
   * ETag, Location, Content-Language, Retry-After and X-Request-Id to it
   */
  corsOrigins: string[];
  /** TRUST_PROXY=true: behind a reverse proxy, X-Forwarded-For/-Proto give the client's address (rate limits, login throttling) and scheme (Secure cookies) */
  trustProxy: boolean;
  /** languages the console's switcher offers, for data and, where translated, the interface (the console sends the choice to the API as Accept-Language) */
  consoleLanguages: string[];
  /** tenants whose roles, abilities and interface texts a process keeps; the least recently used go first, and are read again when they come back */
  tenantCacheSize: number;
  /** request limits, counted together by every process on the database (auth/shared-rate-limits.ts) */
  rateLimit: {
    /** requests per caller (or address) and window (429 beyond) */
    max: number;
    /** ms of a window, from a caller's first request in it */
    windowMs: number;
    /** ms between a process's syncs: it adds its counts to the shared table and reads back everyone's */
    syncMs: number;
  };
  /** failed logins (auth/login-throttle.ts) */
  loginThrottle: {
    /** failures to one account (tenant and e-mail) from one address that lock that address out of it */
    addressMaxFailures: number;
    /** failures to one account from all addresses that lock it for the addresses it has not logged in from lately */
    accountMaxFailures: number;
    /** how close failures must follow each other to count together, and how long a lock lasts after the last one (LOGIN_LOCK_SECONDS × 1000) */
    lockMs: number;
  };
  /** pino log level; at info, one line per request with its request id, tenant and user */
  logLevel: string;
  /** default language of new tenants (and of a tenant that names none) */
  defaultLanguage: string;
  /** folder of the modules' manifests (<id>.json) */
  manifestsDir: string;
  /** folder of the modules' code (<id>/index.ts), demo data and console assets */
  pluginsDir: string;
  /**
   * schema of the tenant registry on the main database, and of the events outbox on every database; the job
   * runner's tables are in "<schema>_jobs". Another name lets several installations share a database
   */
  registrySchema: string;
  /** the first platform operator (PLATFORM_ADMIN_EMAIL and PLATFORM_ADMIN_PASSWORD, both or neither): created on start when the platform tenant does not exist yet */
  platformAdmin?: { email: string; password: string };
  /** create the demo tenant with sample data on start unless it exists (and a demo platform operator when no platform tenant exists and none is configured) */
  demoData: boolean;
  /** this process dispatches events and works jobs (WORKERS=false: it only serves requests and sends jobs) */
  workers: boolean;
  /** connections the job runner opens per PostgreSQL database */
  jobsPoolSize: number;
  events: {
    /** writes record events (EVENTS=off: no outbox rows, so no subscribers or webhooks hear of them) */
    enabled: boolean;
    /**
     * ms between the dispatcher's looks at the outbox for 5 s after a write (in this process, or announced by another);
     * idle it looks every 2 s (or this, if longer) on PostgreSQL and every 30 s on PGlite, and a write wakes it.
     * A full batch is followed at once (events/dispatcher.ts)
     */
    pollMs: number;
    /** outbox rows per dispatch transaction */
    batchSize: number;
    /** at most this many of one dispatch transaction's rows of one tenant, so one tenant's burst does not hold up the others */
    perTenant: number;
    /** jobs of one tenant that run at once per queue, counted in the database over every process's workers (pg-boss groupConcurrency) */
    tenantConcurrency: number;
    /** days dispatched events and their receipts are kept (delivery logs, replays) */
    retentionDays: number;
    /** every job's first retry delay in seconds, instead of its declaration's (tests, development) */
    retryDelaySeconds?: number;
  };
  /** results of analytics kept in each process for callers whose statement is the same, until a table they read changes */
  resultCache: {
    /** bytes each process's cache of analytics results may hold (RESULT_CACHE_MB × 1 MiB); 0: no cache */
    maxBytes: number;
    /** longest life of a cached analytics result (RESULT_CACHE_TTL_SECONDS × 1000); a write to a table it read ends it sooner */
    ttlMs: number;
  };
  /** HTTP calls module code makes (webhooks): where to and how much */
  outbound: {
    /** allow loopback, private and link-local targets (a local receiver in development); never in production */
    allowPrivate: boolean;
    /** ms one delivery try (one call) may take */
    timeoutMs: number;
    /** bytes of an answer read per try; then the connection is closed and the answer marked truncated */
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
