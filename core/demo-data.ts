// Demo data a module ships as plugins/<module>/demo-data.json:
//   { "Category": [{ "$key": "tools", "name": "Tools" }], "Product": [{ "categoryId": "$tools", ... }] }
// Rows go through the same CrudService as API writes (same validation);
// "$key" names a row so later rows can reference it as "$<key>".
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createMongoAbility } from '@casl/ability';
import type { EntityManager } from '@mikro-orm/core';
import type { Kernel } from './kernel.ts';
import { CrudService } from './crud/crud-service.ts';

type DemoRows = Record<string, Record<string, unknown>[]>;

export async function seedModuleDemoData(kernel: Kernel, em: EntityManager, schema: string, companyId: string, language: string): Promise<number> {
  const keys = new Map<string, string>();
  const ctx = { em, schema, ability: createMongoAbility([{ action: 'manage', subject: 'all' }]), companyId, read: { prefs: [language], translations: false }, writeLanguage: language };
  let count = 0;
  for (const module of kernel.modules) {
    const file = join(kernel.config.pluginsDir, module.manifest.id, 'demo-data.json');
    if (!existsSync(file)) continue;
    const data = JSON.parse(readFileSync(file, 'utf8')) as DemoRows;
    for (const [entity, rows] of Object.entries(data)) {
      const service = new CrudService(kernel.model(entity), kernel.models, kernel.secrets);
      for (const { $key, ...row } of rows) {
        const resolved = Object.fromEntries(Object.entries(row).map(([k, v]) => [k, typeof v === 'string' && v.startsWith('$') ? keys.get(v.slice(1)) : v]));
        const created = await service.create(ctx as never, resolved);
        if (typeof $key === 'string') keys.set($key, created.id);
        count++;
      }
    }
  }
  return count;
}
