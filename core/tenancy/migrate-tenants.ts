// Brings every tenant schema to the loaded modules' version, one schema at a
// time. Cheap when nothing changed: one registry query. Resumable: each tenant
// commits on its own, so a rerun continues with the tenants still outdated.
// A tenant whose schema cannot take the change (data the change does not fit,
// a change that would lose data) is that tenant's problem alone: it is marked
// in the registry with the reason and the statements (it answers 503
// TENANT_MIGRATION_FAILED), and the others go on.
import { DestructiveChangeError, MigrationFailedError, migrateSchema } from '../db/migrator.ts';
import type { Databases } from '../db/databases.ts';
import type { ModuleVersion } from '../db/schema-versions.ts';
import type { MigrationError, Tenant, TenantRegistry } from './registry.ts';

/** What migrating needs of the kernel: connections, the registry and the loaded modules' versions. */
export interface MigrateDeps {
  dbs: Pick<Databases, 'get'>;
  tenants: Pick<TenantRegistry, 'setDigest' | 'outdated' | 'setMigrationError'>;
  versions: ModuleVersion[];
  digest: string;
}

export interface FailedMigration {
  tenant: Tenant;
  error: MigrationError;
}

/** The failure of one schema, as the registry keeps it; undefined for an error that is no schema's own (a lost connection). */
export function migrationErrorOf(err: unknown): MigrationError | undefined {
  const at = new Date().toISOString();
  if (err instanceof DestructiveChangeError) return { code: err.code, message: err.message, statements: err.statements, at };
  if (err instanceof MigrationFailedError) return { code: err.code, message: err.message, statements: [err.statement], at };
  return undefined;
}

/** One tenant's migration: its schema's own failure is recorded in the registry and returned; any other error is thrown. */
async function attempt(kernel: MigrateDeps, tenant: Tenant): Promise<{ applied: number } | { error: MigrationError; cause: unknown }> {
  let applied: number;
  try {
    ({ applied } = await migrateSchema(kernel.dbs.get(tenant.connectionKey), tenant.schema, kernel.versions));
  } catch (cause) {
    const error = migrationErrorOf(cause);
    if (!error) throw cause;
    await kernel.tenants.setMigrationError(tenant.id, error);
    return { error, cause };
  }
  await kernel.tenants.setDigest(tenant.id, kernel.digest);
  return { applied };
}

/** Migrates one tenant; a failure of its schema is recorded in the registry, then thrown. */
export async function migrateTenant(kernel: MigrateDeps, tenant: Tenant): Promise<number> {
  const result = await attempt(kernel, tenant);
  if ('cause' in result) throw result.cause;
  return result.applied;
}

/**
 * Every outdated tenant, in id order. A schema's own failure is recorded and
 * reported (`failed`, and `onFailure` as it happens); any other error (the
 * database went away) stops the run, to be resumed.
 */
export async function migrateOutdatedTenants(
  kernel: MigrateDeps,
  progress?: (done: number, total: number, tenant: Tenant, applied: number) => void,
  onFailure?: (failure: FailedMigration) => void,
): Promise<{ migrated: number; failed: FailedMigration[] }> {
  const outdated = await kernel.tenants.outdated(kernel.digest);
  const failed: FailedMigration[] = [];
  let done = 0;
  for (const tenant of outdated) {
    const result = await attempt(kernel, tenant);
    if ('error' in result) {
      failed.push({ tenant, error: result.error });
      onFailure?.({ tenant, error: result.error });
      continue;
    }
    done++;
    progress?.(done, outdated.length, tenant, result.applied);
  }
  return { migrated: done, failed };
}
