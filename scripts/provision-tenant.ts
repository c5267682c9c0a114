// npm run tenant:create -- --id acme --name "Acme" --company-code HQ --company-name "Acme HQ" \
//   --admin-email boss@acme.test --admin-name "Boss" --admin-password '...' [--connection main] [--language en]
// Idempotent: an existing tenant, company or admin is left as it is.
import { parseArgs } from 'node:util';
import { loadConfig } from '../core/config.ts';
import { openKernel } from '../core/kernel.ts';
import { provisionTenant } from '../core/tenancy/provision.ts';

const { values: v } = parseArgs({
  options: {
    id: { type: 'string' },
    name: { type: 'string' },
    connection: { type: 'string' },
    language: { type: 'string' },
    'company-code': { type: 'string' },
    'company-name': { type: 'string' },
    'admin-email': { type: 'string' },
    'admin-name': { type: 'string' },
    'admin-password': { type: 'string' },
  },
});
const missing = ['id', 'name', 'company-code', 'company-name', 'admin-email', 'admin-password'].filter((k) => !v[k as keyof typeof v]);
if (missing.length) {
  console.error(`missing: ${missing.map((m) => `--${m}`).join(', ')}`);
  process.exit(2);
}
const kernel = await openKernel(loadConfig());
try {
  const r = await provisionTenant(kernel, {
    id: v.id!,
    name: v.name!,
    connectionKey: v.connection,
    defaultLanguage: v.language,
    company: { code: v['company-code']!, name: v['company-name']! },
    admin: { email: v['admin-email']!, name: v['admin-name'] ?? v['admin-email']!, password: v['admin-password']! },
  });
  console.log(`${r.created ? 'created' : 'already existed'}: tenant ${r.tenant.id} in schema ${r.tenant.schema} (company ${r.companyId}, admin ${r.adminUserId})`);
} catch (err) {
  const { code, message } = err as { code?: string; message: string };
  console.error(`provisioning failed${code ? ` (${code})` : ''}: ${message}`);
  process.exitCode = 1;
} finally {
  await kernel.close();
}
