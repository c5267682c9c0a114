// Which permission codes each role of a tenant holds, cached per tenant.
// The built-in "admin" role holds every code the loaded manifests declare.
import { LRUCache } from 'lru-cache';
import type { Databases } from '../db/databases.ts';
import type { EntityManager } from '@mikro-orm/core';
import type { EntityModel } from '../model/entity-model.ts';
import type { PermissionCatalog } from './permission-catalog.ts';

/** What the directory needs of the kernel: the tenants' connections, the Role entity, every code. */
export interface RoleDirectoryDeps {
  tenants: { find(id: string): Promise<{ connectionKey: string; schema: string } | undefined | null> };
  dbs: Pick<Databases, 'get'>;
  permissions: Pick<PermissionCatalog, 'all'>;
  model(name: string): EntityModel;
}

export const ADMIN_ROLE = 'admin';
export const MEMBER_ROLE = 'member';
/**
 * Role changes made through Plinth reach every process at once (access/role-changes.ts, also after the
 * listening connection was down); the expiry covers only roles written behind Plinth's back. Long, since
 * with thousands of tenants a short one reloads some tenant's roles on a good share of all requests.
 */
const TTL_MS = 10 * 60_000;

export class RoleDirectory {
  #kernel: RoleDirectoryDeps;
  /** bounded like every per-tenant cache: the least recently used tenants go first, and are read again when they come back */
  #byTenant: LRUCache<string, { loadedAt: number; generation: number; roles: Map<string, string[]> }>;
  #generation = 0;

  constructor(kernel: RoleDirectoryDeps, opts: { tenants?: number } = {}) {
    this.#kernel = kernel;
    this.#byTenant = new LRUCache({ max: opts.tenants ?? 10_000 });
  }

  isStale(tenantId: string): boolean {
    const entry = this.#byTenant.get(tenantId);
    return !entry || Date.now() - entry.loadedAt > TTL_MS;
  }

  invalidate(tenantId: string): void {
    this.#byTenant.delete(tenantId);
  }

  invalidateAll(): void {
    this.#byTenant.clear();
  }

  async codesFor(tenantId: string, roleNames: string[]): Promise<string[]> {
    return (await this.resolve(tenantId, roleNames)).codes;
  }

  /**
   * The codes a role set holds and the generation of the role data they come
   * from: a new generation means the roles were reloaded and may have changed.
   * The admin role's codes come from the manifests, so they never go stale.
   * `em`: a transaction's, read on its connection when the roles are not
   * cached (embedded PGlite has one connection, which the transaction holds);
   * such a read is not cached (the transaction may not commit): generation -1.
   */
  async resolve(tenantId: string, roleNames: string[], em?: EntityManager): Promise<{ codes: string[]; generation: number }> {
    if (roleNames.includes(ADMIN_ROLE)) return { codes: this.#kernel.permissions.all(), generation: 0 };
    const stale = this.isStale(tenantId);
    const entry = !stale ? this.#byTenant.get(tenantId)! : em ? { generation: -1, roles: await this.#read(em) } : await this.#load(tenantId);
    return { codes: [...new Set(roleNames.flatMap((r) => entry.roles.get(r) ?? []))], generation: entry.generation };
  }

  async #load(tenantId: string) {
    const tenant = await this.#kernel.tenants.find(tenantId);
    const roles = tenant ? await this.#read(this.#kernel.dbs.get(tenant.connectionKey).em.fork({ schema: tenant.schema })) : new Map<string, string[]>();
    // returned, not re-read from the map: an invalidate() meanwhile must not lose it
    const entry = { loadedAt: Date.now(), generation: ++this.#generation, roles };
    this.#byTenant.set(tenantId, entry);
    return entry;
  }

  async #read(em: EntityManager): Promise<Map<string, string[]>> {
    const rows = (await em.find(this.#kernel.model('Role').ormEntity, {})) as { name: string; permissions: unknown }[];
    return new Map(rows.map((r) => [r.name, Array.isArray(r.permissions) ? r.permissions.filter((c) => typeof c === 'string') : []]));
  }
}
