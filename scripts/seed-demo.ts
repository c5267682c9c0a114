// Demo tenant, admin and sample data, so a new user can log in right after
// `npm start`. Idempotent: does nothing when the demo tenant already exists.
// Run by start on an empty database (DEMO_DATA=false turns it off), or: npm run seed:demo
import { pathToFileURL } from 'node:url';
import type { Kernel } from '../core/kernel.ts';
import { provisionTenant } from '../core/tenancy/provision.ts';
import { PLATFORM_TENANT } from '../core/tenancy/registry.ts';
import { seedModuleDemoData } from '../core/demo-data.ts';

export const DEMO = {
  tenant: 'demo',
  admin: { email: 'admin@demo.plinth.dev', name: 'Demo Admin', password: 'plinth-demo' },
  operator: { email: 'operator@plinth.dev', name: 'Platform Operator', password: 'plinth-operator' },
};

export async function seedDemo(kernel: Kernel, log: (msg: string) => void = console.log): Promise<boolean> {
  if (await kernel.tenants.find(DEMO.tenant)) return false;
  if (!(await kernel.tenants.find(PLATFORM_TENANT)) && !kernel.config.platformAdmin) {
    await provisionTenant(kernel, { id: PLATFORM_TENANT, name: 'Platform operators', company: { code: 'PLATFORM', name: 'Platform' }, admin: DEMO.operator });
    log(`demo platform operator: ${DEMO.operator.email} / ${DEMO.operator.password} (tenant "${PLATFORM_TENANT}")`);
  }
  const result = await provisionTenant(kernel, { id: DEMO.tenant, name: 'Demo Inc.', company: { code: 'DEMO', name: 'Demo Inc.' }, admin: DEMO.admin });
  const rows = await seedModuleDemoData(kernel, result.tenant.id, result.companyId);
  log(`demo tenant "${DEMO.tenant}": log in as ${DEMO.admin.email} / ${DEMO.admin.password} (${rows} sample rows)`);
  return true;
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
