// Which permission codes each role of a tenant holds, cached per tenant.
// The built-in "admin" role holds every code the loaded manifests declare.
import type { Kernel } from '../kernel.ts';

export const ADMIN_ROLE = 'admin';
export const MEMBER_ROLE = 'member';
const TTL_MS = 30_000;

export class RoleDirectory {
  #kernel: Kernel;
  #byTenant = new Map<string, { loadedAt: number; roles: Map<string, string[]> }>();

  constructor(kernel: Kernel) { this.#kernel = kernel; }

  isStale(tenantId: string): boolean {
    const entry = this.#byTenant.get(tenantId);
    return !entry || Date.now() - entry.loadedAt > TTL_MS;
  }

  invalidate(tenantId: string): void { this.#byTenant.delete(tenantId); }

  async codesFor(tenantId: string, roleNames: string[]): Promise<string[]> {
    if (roleNames.includes(ADMIN_ROLE)) return this.#kernel.permissions.all();
    if (this.isStale(tenantId)) await this.#load(tenantId);
    const roles = this.#byTenant.get(tenantId)!.roles;
    return [...new Set(roleNames.flatMap((r) => roles.get(r) ?? []))];
  }

  async #load(tenantId: string): Promise<void> {
    const tenant = await this.#kernel.tenants.find(tenantId);
    const roles = new Map<string, string[]>();
    if (tenant) {
      const em = this.#kernel.dbs.get(tenant.connectionKey).em.fork({ schema: tenant.schema });
      const rows = await em.find(this.#kernel.model('Role').schema, {}) as { name: string; permissions: unknown }[];
      for (const r of rows) roles.set(r.name, Array.isArray(r.permissions) ? r.permissions.filter((c) => typeof c === 'string') : []);
    }
    this.#byTenant.set(tenantId, { loadedAt: Date.now(), roles });
  }
}
