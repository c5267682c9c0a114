// The tenant registry (schema "platform"): tenant → connection key + schema.
// Cached in memory: the hot path resolves a tenant without a query.
import type { Databases } from '../db/databases.ts';

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
  schemaDigest: string | null;
  createdAt: Date;
}

const REGISTRY_DDL = [
  'create schema if not exists platform',
  `create table if not exists platform.tenants (
    id text primary key,
    name text not null,
    connection_key text not null default 'main',
    schema_name text not null unique,
    status text not null default 'active' check (status in ('active', 'suspended')),
    default_language text not null default 'en',
    schema_digest text,
    created_at timestamptz not null default now(),
    updated_at timestamptz not null default now())`,
];

const COLUMNS = `id, name, connection_key as "connectionKey", schema_name as "schema", status,
  default_language as "defaultLanguage", schema_digest as "schemaDigest", created_at as "createdAt"`;

export const schemaFor = (tenantId: string) => `tenant_${tenantId.replace(/-/g, '_')}`;
export const isTenantId = (id: string) => TENANT_ID.test(id);

export class TenantRegistry {
  #dbs: Databases;
  #cache = new Map<string, Tenant>();

  constructor(dbs: Databases) { this.#dbs = dbs; }

  #conn() { return this.#dbs.main.em.getConnection(); }

  /** Creates the registry once; the advisory lock keeps parallel starts from racing. */
  async ensure(): Promise<void> {
    const em = this.#dbs.main.em.fork();
    await em.transactional(async (tem) => {
      const ctx = tem.getTransactionContext();
      await tem.getConnection().execute("select pg_advisory_xact_lock(hashtext('plinth:registry'))", [], 'all', ctx);
      for (const sql of REGISTRY_DDL) await tem.getConnection().execute(sql, [], 'run', ctx);
    });
    await this.reload();
  }

  async reload(): Promise<void> {
    const rows = await this.#conn().execute(`select ${COLUMNS} from platform.tenants`) as Tenant[];
    this.#cache = new Map(rows.map((r) => [r.id, r]));
  }

  /** The hot path: a map lookup, one query only for a tenant this process has not seen yet. */
  async find(id: string): Promise<Tenant | undefined> {
    const hit = this.#cache.get(id);
    if (hit || !isTenantId(id)) return hit;
    const [row] = await this.#conn().execute(`select ${COLUMNS} from platform.tenants where id = ?`, [id]) as Tenant[];
    if (row) this.#cache.set(id, row);
    return row;
  }

  cached(id: string): Tenant | undefined { return this.#cache.get(id); }

  list(): Tenant[] { return [...this.#cache.values()].sort((a, b) => a.id.localeCompare(b.id)); }

  async insert(t: { id: string; name: string; connectionKey: string; defaultLanguage: string }): Promise<Tenant> {
    await this.#conn().execute(
      `insert into platform.tenants (id, name, connection_key, schema_name, default_language) values (?, ?, ?, ?, ?) on conflict (id) do nothing`,
      [t.id, t.name, t.connectionKey, schemaFor(t.id), t.defaultLanguage]);
    this.#cache.delete(t.id);
    return (await this.find(t.id))!;
  }

  async setDigest(id: string, digest: string): Promise<void> {
    await this.#conn().execute('update platform.tenants set schema_digest = ?, updated_at = now() where id = ?', [digest, id]);
    const t = this.#cache.get(id);
    if (t) t.schemaDigest = digest;
  }

  async setStatus(id: string, status: Tenant['status']): Promise<void> {
    await this.#conn().execute('update platform.tenants set status = ?, updated_at = now() where id = ?', [status, id]);
    const t = this.#cache.get(id);
    if (t) t.status = status;
  }

  /** Tenants whose recorded digest differs from the modules now loaded. */
  async outdated(digest: string): Promise<Tenant[]> {
    return await this.#conn().execute(`select ${COLUMNS} from platform.tenants where schema_digest is distinct from ? order by id`, [digest]) as Tenant[];
  }
}
