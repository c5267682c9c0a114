// npm run migrate: bring every tenant schema to the loaded modules' version,
// one tenant at a time, with progress. Resumable: rerun it after a failure.
import { loadConfig } from '../core/config.ts';
import { openKernel } from '../core/kernel.ts';
import { migrateOutdatedTenants } from '../core/tenancy/migrate-tenants.ts';

const kernel = await openKernel(loadConfig());
try {
  const { migrated } = await migrateOutdatedTenants(kernel, (done, total, t, applied) => console.log(`[${done}/${total}] ${t.id} (${t.schema}): ${applied} statement(s)`));
  console.log(migrated ? `migrated ${migrated} tenant(s)` : 'every tenant is up to date');
} catch (err) {
  // tenants migrated before the failure stay recorded; a rerun continues with the rest
  const { code, message } = err as { code?: string; message: string };
  console.error(`migration stopped${code ? ` (${code})` : ''}: ${message}`);
  process.exitCode = 1;
} finally {
  await kernel.close();
}
