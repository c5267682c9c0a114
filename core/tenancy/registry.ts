// The tenant registry (schema "platform" unless configured): tenant → connection key + schema.
// Cached in memory: the hot path resolves a tenant without a query.
import type { Databases } from '../db/databases.ts';
import { httpError } from '../errors.ts';

export const PLATFORM_TENANT = 'platform';
export const TENANT_ID_PATTERN = '^[a-z][a-z0-9-]{1,39}$';
const TENANT_ID = new RegExp(TENANT_ID_PATTERN);

export interface Tenant {
  id: string;
  name: string;
  connectionKey: string;
  schema: string;
  status: 'active' | 'suspended';
  defaultLanguage: string;
  /** IANA time zone of the tenant's scheduled work (cron jobs) */
  timeZone: string;
  schemaDigest: string | null;
  /** why the last migration of its schema failed (it answers 503 TENANT_MIGRATION_FAILED until one succeeds); null when none did */
  migrationError: MigrationError | null;
  createdAt: Date;
}

/** What registering a tenant takes; the schema digest it holds, once its tables are made. */
export interface NewTenant {
  id: string;
  name: string;
  connectionKey: string;
  defaultLanguage: string;
  timeZone: string;
  schemaDigest: string | null;
}

type Run = (sql: string, params: unknown[]) => Promise<unknown>;

export interface MigrationError {
  code: string;
  message: string;
  /** the statements refused, or the one that failed */
  statements: string[];
  at: string;
}

/** The schema holding the registry; another name lets several installations share one database. */
const REGISTRY_SCHEMA_PATTERN = /^(?!tenant_)[a-z_][a-z0-9_]{0,62}$/;

const registryDdl = (schema: string) => [
  `create schema if not exists "${schema}"`,
  `create table if not exists "${schema}".tenants (
    id text primary key,
    name text not null,
    connection_key text not null default 'main',
    schema_name text not null unique,
    status text not null default 'active' check (status in ('active', 'suspended')),
    default_language text not null default 'en',
    schema_digest text,
    created_at timestamptz not null default now(),
    updated_at timestamptz not null default now())`,
  `alter table "${schema}".tenants add column if not exists time_zone text not null default 'UTC'`,
  `alter table "${schema}".tenants add column if not exists migration_error jsonb`,
  // tenancy/spare-schemas.ts
  `create table if not exists "${schema}".spare_schemas (schema_name text primary key, digest text not null, created_at timestamptz not null default now())`,
];

const COLUMNS = `id, name, connection_key as "connectionKey", schema_name as "schema", status,
  default_language as "defaultLanguage", time_zone as "timeZone", schema_digest as "schemaDigest", migration_error as "migrationError", created_at as "createdAt"`;

/**
 * Refuses what a tenant cannot serve now, for every way in (requests, logins, refreshes):
 * suspended (403), or its schema could not be migrated (503; not the platform tenant,
 * whose operators must get in to retry).
 */
export function assertServing(tenant: Tenant): void {
  if (tenant.status !== 'active') throw httpError('TENANT_UNAVAILABLE', `tenant ${tenant.id} is ${tenant.status}`);
  if (tenant.migrationError && tenant.id !== PLATFORM_TENANT) {
    throw httpError(
      'TENANT_MIGRATION_FAILED',
      `tenant ${tenant.id} is unavailable: its schema could not be migrated to the loaded modules; a platform operator sees why and retries (POST /api/platform/tenants/${tenant.id}/migrate)`,
    );
  }
}

export const schemaFor = (tenantId: string) => `tenant_${tenantId.replace(/-/g, '_')}`;
export const isTenantId = (id: string) => TENANT_ID.test(id);

export class TenantRegistry {
  #dbs: Databases;
  #table: string;
  #schema: string;
  #cache = new Map<string, Tenant>();

  constructor(dbs: Databases, schema = 'platform') {
    if (!REGISTRY_SCHEMA_PATTERN.test(schema)) throw new Error(`invalid registry schema "${schema}"`);
    this.#dbs = dbs;
    this.#schema = schema;
    this.#table = `"${schema}".tenants`;
  }

  #conn() {
    return this.#dbs.main.em.getConnection();
  }

  /** Creates the registry once; the advisory lock keeps parallel starts from racing. */
  async ensure(): Promise<void> {
    const em = this.#dbs.main.em.fork();
    await em.transactional(async (tem) => {
      const ctx = tem.getTransactionContext();
      await tem.getConnection().execute('select pg_advisory_xact_lock(hashtext(?))', [`plinth:registry:${this.#schema}`], 'all', ctx);
      for (const sql of registryDdl(this.#schema)) await tem.getConnection().execute(sql, [], 'run', ctx);
    });
    await this.reload();
  }

  async reload(): Promise<void> {
    const rows = (await this.#conn().execute(`select ${COLUMNS} from ${this.#table}`)) as Tenant[];
    this.#cache = new Map(rows.map((r) => [r.id, r]));
  }

  /** The hot path: a map lookup, one query only for a tenant this process has not seen yet. */
  async find(id: string): Promise<Tenant | undefined> {
    const hit = this.#cache.get(id);
    if (hit || !isTenantId(id)) return hit;
    const [row] = (await this.#conn().execute(`select ${COLUMNS} from ${this.#table} where id = ?`, [id])) as Tenant[];
    if (row) this.#cache.set(id, row);
    return row;
  }

  cached(id: string): Tenant | undefined {
    return this.#cache.get(id);
  }

  list(): Tenant[] {
    return [...this.#cache.values()].sort((a, b) => a.id.localeCompare(b.id));
  }

  /**
   * Registers a tenant unless it exists; true when this call did. With `run`,
   * inside the caller's transaction (provisioning registers a tenant in the same
   * commit as its schema). No conflict target: with "(id)" a concurrent insert
   * of the same tenant could still fail on the schema_name key, which only that
   * same id maps to.
   */
  async register(t: NewTenant, run: Run = (sql, params) => this.#conn().execute(sql, params)): Promise<boolean> {
    const rows = (await run(
      `insert into ${this.#table} (id, name, connection_key, schema_name, default_language, time_zone, schema_digest) values (?, ?, ?, ?, ?, ?, ?) on conflict do nothing returning id`,
      [t.id, t.name, t.connectionKey, schemaFor(t.id), t.defaultLanguage, t.timeZone, t.schemaDigest],
    )) as unknown[];
    this.#cache.delete(t.id);
    return rows.length > 0;
  }

  /** Whether the tenant is registered, read in the caller's transaction. */
  async exists(id: string, run: Run): Promise<boolean> {
    return ((await run(`select 1 from ${this.#table} where id = ?`, [id])) as unknown[]).length > 0;
  }

  /** The schema holds `digest`'s tables: recorded, and any earlier migration failure cleared. */
  async setDigest(id: string, digest: string): Promise<void> {
    const rows = (await this.#conn().execute(
      `update ${this.#table} set schema_digest = ?, migration_error = null, updated_at = now() where id = ? returning (select migration_error is not null from ${this.#table} where id = ?) as "hadError"`,
      [digest, id, id],
    )) as { hadError: boolean }[];
    const t = this.#cache.get(id);
    if (t) Object.assign(t, { schemaDigest: digest, migrationError: null });
    if (rows[0]?.hadError) await this.announce(id);
  }

  /** The tenant's schema could not be migrated: every process refuses its requests until a migration succeeds. */
  async setMigrationError(id: string, error: MigrationError): Promise<void> {
    await this.#conn().execute(`update ${this.#table} set migration_error = ?::jsonb, updated_at = now() where id = ?`, [JSON.stringify(error), id]);
    const t = this.#cache.get(id);
    if (t) t.migrationError = error;
    await this.announce(id);
  }

  /** Tells every process to drop its cached copy of the tenant (registry-sync.ts). */
  async announce(id: string): Promise<void> {
    await this.#conn().execute('select pg_notify(?, ?)', [this.channel, id]);
  }

  async setStatus(id: string, status: Tenant['status']): Promise<void> {
    await this.#conn().execute(`update ${this.#table} set status = ?, updated_at = now() where id = ?`, [status, id]);
    const t = this.#cache.get(id);
    if (t) t.status = status;
    await this.announce(id);
  }

  /** The registry table, schema-qualified (the job runner reads time zones from it). */
  get table(): string {
    return this.#table;
  }

  /** Other processes on the same server drop their cached copy when told (see registry-sync.ts). */
  get channel(): string {
    return `plinth_tenants_${this.#schema}`;
  }

  forget(id: string): void {
    this.#cache.delete(id);
  }

  /** How many tenants each connection key holds (keys without a tenant are absent). */
  async countsByConnection(): Promise<Map<string, number>> {
    const rows = (await this.#conn().execute(`select connection_key as "key", count(*)::int as n from ${this.#table} group by connection_key`)) as { key: string; n: number }[];
    return new Map(rows.map((r) => [r.key, r.n]));
  }

  /** Tenants whose recorded digest differs from the modules now loaded. */
  async outdated(digest: string): Promise<Tenant[]> {
    return (await this.#conn().execute(`select ${COLUMNS} from ${this.#table} where schema_digest is distinct from ? order by id`, [digest])) as Tenant[];
  }
}
