// Demo data a module ships as plugins/<module>/demo-data.json:
//   { "Category": [{ "$key": "tools", "name": "Tools" }], "Product": [{ "categoryId": "$tools", ... }] }
// A reference may also name a row the module's own code made (a project's
// default statuses) by its values: { "statusId": { "$find": { "projectId": "$web", "name": "Done" } } }.
// "$admin" is the tenant's first administrator (the account the demo logs in with),
// "$company" the company the demo is seeded for. { "$password": "…" } is that
// password hashed, written as the (internal) field it names, so a demo user can log in:
// { "email": "…", "passwordHash": { "$password": "plinth-demo" } }.
// Rows go through the same scoped data access as API writes (same validation,
// hooks, derived fields and audit), as the system, in a context without a
// request; "$key" names a row so later rows, of any module loaded after it,
// can reference it as "$<key>". Entities are written in the file's order.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Kernel } from './kernel.ts';
import type { ModuleContext } from './context/module-context.ts';
import { SYSTEM } from './access/principal.ts';
import { hashPassword } from './auth/passwords.ts';

type DemoRows = Record<string, Record<string, unknown>[]>;

/** Writes one module's rows; `keys` holds the ids of the "$key" rows written so far. */
export async function seedDemoRows(kernel: Kernel, ctx: ModuleContext, data: DemoRows, keys: Map<string, string>, source: string): Promise<number> {
  let count = 0;
  for (const [entity, rows] of Object.entries(data)) {
    const target = ctx.data(entity);
    // a parent the API takes from the path (a quote line's quoteId) is no body field: module code sets it as internal
    const pathBound = kernel.model(entity).pathBound.map((f) => f.name);
    const keyOf = (field: string, v: string) => {
      const id = keys.get(v.slice(1));
      // a typo would otherwise leave the reference empty and the demo quietly wrong
      if (!id) throw new Error(`${source}: ${entity}.${field} names ${v}, which no earlier row defines as its $key`);
      return id;
    };
    const resolve = async (field: string, v: unknown): Promise<unknown> => {
      if (typeof v === 'string' && v.startsWith('$')) return keyOf(field, v);
      const find = (v as { $find?: Record<string, unknown> } | null)?.$find;
      if (!find) return v;
      const target = kernel.model(entity).byName.get(field)?.entity;
      if (!target) throw new Error(`${source}: ${entity}.${field} is no reference, so it cannot $find a row`);
      const where = Object.fromEntries(Object.entries(find).map(([k, w]) => [k, typeof w === 'string' && w.startsWith('$') ? keyOf(k, w) : w]));
      const found = await ctx.data(target).find(where, { limit: 2 });
      if (found.length !== 1) throw new Error(`${source}: ${entity}.${field} finds ${found.length} ${target} rows for ${JSON.stringify(find)}, not one`);
      return found[0].id;
    };
    for (const { $key, ...row } of rows) {
      const resolved: Record<string, unknown> = {};
      const internal: Record<string, unknown> = {};
      for (const [field, v] of Object.entries(row)) {
        const password = (v as { $password?: unknown } | null)?.$password;
        // a password hash is no field the API writes: module code sets it, as POST /api/users does
        if (typeof password === 'string') internal[field] = await hashPassword(password);
        else if (pathBound.includes(field)) internal[field] = await resolve(field, v);
        else resolved[field] = await resolve(field, v);
      }
      const created = await target.create(resolved, { internal });
      if (typeof $key === 'string') keys.set($key, created.id);
      count++;
    }
  }
  return count;
}

/** Every loaded module's demo data, in module order, for one company of a tenant and its first administrator ("$admin"); answers the rows written per module. */
export async function seedModuleDemoData(kernel: Kernel, tenantId: string, companyId: string, adminUserId: string): Promise<Record<string, number>> {
  const ctx = await kernel.contextFor({ tenant: tenantId, principal: SYSTEM, companyId });
  const keys = new Map<string, string>([
    ['admin', adminUserId],
    ['company', companyId],
  ]);
  const written: Record<string, number> = {};
  for (const module of kernel.modules) {
    const file = join(kernel.config.pluginsDir, module.manifest.id, 'demo-data.json');
    if (!existsSync(file)) continue;
    written[module.manifest.id] = await seedDemoRows(kernel, ctx, JSON.parse(readFileSync(file, 'utf8')) as DemoRows, keys, file);
  }
  return written;
}
