// npm run migrate: bring every tenant schema to the loaded modules' version,
// one tenant at a time, with progress. A tenant whose schema cannot take the
// change is reported and marked; the others go on. Resumable: rerun it.
import { loadConfig } from '../core/config.ts';
import { openKernel } from '../core/kernel.ts';
import { migrateOutdatedTenants } from '../core/tenancy/migrate-tenants.ts';

const kernel = await openKernel(loadConfig());
try {
  const { migrated, failed } = await migrateOutdatedTenants(
    kernel,
    (done, total, t, applied) => console.log(`[${done}/${total}] ${t.id} (${t.schema}): ${applied} statement(s)`),
    ({ tenant, error }) => console.error(`${tenant.id} (${tenant.schema}) FAILED (${error.code}): ${error.message}`),
  );
  console.log(migrated || failed.length ? `migrated ${migrated} tenant(s), ${failed.length} failed` : 'every tenant is up to date');
  if (failed.length) {
    // each failed tenant answers 503 TENANT_MIGRATION_FAILED until a rerun (or POST /api/platform/tenants/:id/migrate) succeeds
    console.error(`failed: ${failed.map((f) => f.tenant.id).join(', ')}; fix their data or the modules, then run npm run migrate again`);
    process.exitCode = 1;
  }
} catch (err) {
  // tenants migrated before the failure stay recorded; a rerun continues with the rest
  const { code, message } = err as { code?: string; message: string };
  console.error(`migration stopped${code ? ` (${code})` : ''}: ${message}`);
  process.exitCode = 1;
} finally {
  await kernel.close();
}
