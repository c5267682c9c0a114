// Configuration from the environment, read once. buildApp() takes a Config, so
// tests and scripts can override any part without touching process.env.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join, resolve } from 'node:path';

export interface Config {
  /** connection key → PostgreSQL URL; no "main" entry means embedded PGlite */
  databases: Record<string, string>;
  dataDir: string;
  /** PGlite: run in memory (tests) instead of persisting under dataDir */
  pgliteInMemory: boolean;
  host: string;
  port: number;
  jwtSecret: string;
  accessTokenTtlSeconds: number;
  refreshTokenTtlSeconds: number;
  poolSize: number;
  bodyLimit: number;
  rateLimit: { max: number; windowMs: number };
  logLevel: string;
  defaultLanguage: string;
  manifestsDir: string;
  pluginsDir: string;
  /** schema of the tenant registry on the main database (default "platform") */
  registrySchema: string;
  platformAdmin?: { email: string; password: string };
  demoData: boolean;
}

const int = (v: string | undefined, fallback: number) => (v && /^\d+$/.test(v) ? Number(v) : fallback);

/** A secret from the environment, else one generated once and kept in the data directory. */
function jwtSecret(env: NodeJS.ProcessEnv, dataDir: string): string {
  if (env.JWT_SECRET) {
    if (env.JWT_SECRET.length < 32) throw new Error('JWT_SECRET must be at least 32 characters');
    return env.JWT_SECRET;
  }
  const file = join(dataDir, 'jwt-secret');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  mkdirSync(dataDir, { recursive: true });
  const secret = randomBytes(48).toString('base64url');
  writeFileSync(file, secret, { mode: 0o600 });
  return secret;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const dataDir = resolve(env.DATA_DIR ?? 'data');
  const databases: Record<string, string> = {};
  if (env.DATABASE_URL) databases.main = env.DATABASE_URL;
  for (const [key, value] of Object.entries(env)) {
    const m = /^DATABASE_URL_([A-Z0-9_]+)$/.exec(key);
    if (m && value) databases[m[1].toLowerCase()] = value;
  }
  const admin = env.PLATFORM_ADMIN_EMAIL && env.PLATFORM_ADMIN_PASSWORD
    ? { email: env.PLATFORM_ADMIN_EMAIL, password: env.PLATFORM_ADMIN_PASSWORD } : undefined;
  return {
    databases,
    dataDir,
    pgliteInMemory: env.PGLITE_MEMORY === 'true',
    host: env.HOST ?? '127.0.0.1',
    port: int(env.PORT, 3000),
    jwtSecret: jwtSecret(env, dataDir),
    accessTokenTtlSeconds: int(env.ACCESS_TOKEN_TTL, 900),
    refreshTokenTtlSeconds: int(env.REFRESH_TOKEN_TTL, 30 * 24 * 3600),
    poolSize: int(env.DB_POOL_SIZE, 10),
    bodyLimit: int(env.BODY_LIMIT, 1024 * 1024),
    rateLimit: { max: int(env.RATE_LIMIT_MAX, 1200), windowMs: int(env.RATE_LIMIT_WINDOW_MS, 60_000) },
    logLevel: env.LOG_LEVEL ?? 'info',
    defaultLanguage: env.DEFAULT_LANGUAGE ?? 'en',
    manifestsDir: resolve(env.MANIFESTS_DIR ?? 'manifests'),
    pluginsDir: resolve(env.PLUGINS_DIR ?? 'plugins'),
    registrySchema: env.REGISTRY_SCHEMA ?? 'platform',
    platformAdmin: admin,
    demoData: env.DEMO_DATA ? env.DEMO_DATA === 'true' : true,
  };
}
