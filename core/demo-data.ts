// Demo data a module ships as plugins/<module>/demo-data.json:
//   { "Category": [{ "$key": "tools", "name": "Tools" }], "Product": [{ "categoryId": "$tools", ... }] }
// Rows go through the same scoped data access as API writes (same validation
// and hooks), as the system, in a context without a request; "$key" names a
// row so later rows can reference it as "$<key>".
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Kernel } from './kernel.ts';
import { SYSTEM } from './access/principal.ts';

type DemoRows = Record<string, Record<string, unknown>[]>;

export async function seedModuleDemoData(kernel: Kernel, tenantId: string, companyId: string): Promise<number> {
  const ctx = await kernel.contextFor({ tenant: tenantId, principal: SYSTEM, companyId });
  const keys = new Map<string, string>();
  let count = 0;
  for (const module of kernel.modules) {
    const file = join(kernel.config.pluginsDir, module.manifest.id, 'demo-data.json');
    if (!existsSync(file)) continue;
    const data = JSON.parse(readFileSync(file, 'utf8')) as DemoRows;
    for (const [entity, rows] of Object.entries(data)) {
      const target = ctx.data(entity);
      for (const { $key, ...row } of rows) {
        const resolved = Object.fromEntries(Object.entries(row).map(([k, v]) => [k, typeof v === 'string' && v.startsWith('$') ? keys.get(v.slice(1)) : v]));
        const created = await target.create(resolved);
        if (typeof $key === 'string') keys.set($key, created.id);
        count++;
      }
    }
  }
  return count;
}
