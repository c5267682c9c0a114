// Brings every tenant schema to the loaded modules' version, one schema at a
// time. Cheap when nothing changed: one registry query. Resumable: each tenant
// commits on its own, so a rerun continues with the tenants still outdated.
import { migrateSchema } from '../db/migrator.ts';
import type { Databases } from '../db/databases.ts';
import type { ModuleVersion } from '../db/schema-versions.ts';
import type { Tenant, TenantRegistry } from './registry.ts';

/** What migrating needs of the kernel: connections, the registry and the loaded modules' versions. */
export interface MigrateDeps {
  dbs: Pick<Databases, 'get'>;
  tenants: Pick<TenantRegistry, 'setDigest' | 'outdated'>;
  versions: ModuleVersion[];
  digest: string;
}

export async function migrateTenant(kernel: MigrateDeps, tenant: Tenant): Promise<number> {
  const { applied } = await migrateSchema(kernel.dbs.get(tenant.connectionKey), tenant.schema, kernel.versions);
  await kernel.tenants.setDigest(tenant.id, kernel.digest);
  return applied;
}

export async function migrateOutdatedTenants(kernel: MigrateDeps, progress?: (done: number, total: number, tenant: Tenant, applied: number) => void): Promise<{ migrated: number }> {
  const outdated = await kernel.tenants.outdated(kernel.digest);
  let done = 0;
  for (const tenant of outdated) {
    const applied = await migrateTenant(kernel, tenant);
    progress?.(++done, outdated.length, tenant, applied);
  }
  return { migrated: outdated.length };
}
