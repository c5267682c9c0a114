// Demo tenant, admin and sample data, so a new user can log in right after
// `npm start`. Idempotent: does nothing when the demo tenant already exists.
// Run by start on an empty database (DEMO_DATA=false turns it off), or: npm run seed:demo
import { pathToFileURL } from 'node:url';
import type { Kernel } from '../core/kernel.ts';
import { provisionTenant } from '../core/tenancy/provision.ts';
import { PLATFORM_TENANT } from '../core/tenancy/registry.ts';
import { seedModuleDemoData } from '../core/demo-data.ts';
import type { Login } from './banner.ts';

export const DEMO = {
  tenant: 'demo',
  admin: { email: 'admin@demo.plinth.dev', name: 'Demo Admin', password: 'plinth-demo' },
  operator: { email: 'operator@plinth.dev', name: 'Platform Operator', password: 'plinth-operator' },
};

/** Answers the sample rows written per module, or undefined when the demo tenant existed already. */
export async function seedDemo(kernel: Kernel, log: (msg: string) => void = console.log): Promise<Record<string, number> | undefined> {
  if (await kernel.tenants.find(DEMO.tenant)) return undefined;
  if (!(await kernel.tenants.find(PLATFORM_TENANT)) && !kernel.config.platformAdmin) {
    await provisionTenant(kernel, { id: PLATFORM_TENANT, name: 'Platform operators', company: { code: 'PLATFORM', name: 'Platform' }, admin: DEMO.operator });
    log(`demo platform operator: ${DEMO.operator.email} / ${DEMO.operator.password} (tenant "${PLATFORM_TENANT}")`);
  }
  const result = await provisionTenant(kernel, { id: DEMO.tenant, name: 'Demo Inc.', company: { code: 'DEMO', name: 'Demo Inc.' }, admin: DEMO.admin });
  const written = await seedModuleDemoData(kernel, result.tenant.id, result.companyId, result.adminUserId);
  const rows = Object.entries(written).map(([module, n]) => `${n} ${module}`);
  log(`demo tenant "${DEMO.tenant}": log in as ${DEMO.admin.email} / ${DEMO.admin.password} (sample rows: ${rows.join(', ') || 'none'})`);
  return written;
}

/** The accounts a person can log in with on this database: the demo's, when it holds the demo tenant, and the configured operator. */
export async function knownLogins(kernel: Kernel): Promise<Login[]> {
  const logins: Login[] = [];
  const demo = await kernel.tenants.find(DEMO.tenant);
  if (demo) logins.push({ tenant: DEMO.tenant, email: DEMO.admin.email, password: DEMO.admin.password, what: `administrator of ${demo.name}` });
  const operator = kernel.config.platformAdmin;
  if (operator) logins.push({ tenant: PLATFORM_TENANT, email: operator.email, what: 'platform operator' });
  // seedDemo creates this operator only where none is configured
  else if (demo && (await kernel.tenants.find(PLATFORM_TENANT))) logins.push({ tenant: PLATFORM_TENANT, email: DEMO.operator.email, password: DEMO.operator.password, what: 'platform operator' });
  return logins;
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { loadConfig } = await import('../core/config.ts');
  const { openKernel } = await import('../core/kernel.ts');
  const kernel = await openKernel(loadConfig());
  try {
    if (!(await seedDemo(kernel))) console.log(`tenant "${DEMO.tenant}" exists already; nothing to do`);
  } finally {
    await kernel.close();
  }
}
