// CASL abilities per request. Rule templates are compiled once per (tenant,
// role set) and kept until the tenant's roles reload; an ability without caller
// placeholders is shared by every caller with that role set, one with
// placeholders is built per request from the template and the caller's values,
// so no caller's ids ever leak to another.
import { createMongoAbility, type MongoAbility } from '@casl/ability';
import { rulesToCondition } from '@casl/ability/extra';
import { PermissionCatalog, type CallerValues, type Rule } from './permission-catalog.ts';
import type { RoleDirectory } from './role-directory.ts';

export type Ability = MongoAbility;
interface Compiled { generation: number; rules: Rule[]; shared?: Ability }

const filterCache = new WeakMap<Ability, Map<string, Record<string, unknown> | null>>();

export class AbilityFactory {
  #catalog: PermissionCatalog;
  #roles: RoleDirectory;
  #compiled = new Map<string, Compiled>();

  constructor(catalog: PermissionCatalog, roles: RoleDirectory) {
    this.#catalog = catalog;
    this.#roles = roles;
  }

  async for(tenantId: string, roleNames: string[], caller: CallerValues): Promise<Ability> {
    const key = `${tenantId}|${roleNames.join(',')}`;
    const { codes, generation } = await this.#roles.resolve(tenantId, roleNames);
    let compiled = this.#compiled.get(key);
    if (!compiled || compiled.generation !== generation) {
      const { rules, usesCaller } = this.#catalog.templates(codes);
      compiled = { generation, rules, shared: usesCaller ? undefined : createMongoAbility(rules) };
      this.#compiled.set(key, compiled);
    }
    return compiled.shared ?? createMongoAbility(PermissionCatalog.bind(compiled.rules, caller));
  }

  /** The permission codes a role set holds in a tenant. */
  codes(tenantId: string, roleNames: string[]): Promise<string[]> {
    return this.#roles.codesFor(tenantId, roleNames);
  }

  /** Forget compiled abilities of a tenant (its roles changed). */
  invalidate(tenantId: string): void {
    for (const key of this.#compiled.keys()) if (key.startsWith(`${tenantId}|`)) this.#compiled.delete(key);
    this.#roles.invalidate(tenantId);
  }
}

/**
 * The ability's conditions for an action on a subject as a MikroORM filter:
 * {} = every row, null = no row. Only scalar operators CASL and MikroORM share.
 */
export function accessFilter(ability: Ability, action: string, subject: string): Record<string, unknown> | null {
  let perAbility = filterCache.get(ability);
  if (!perAbility) filterCache.set(ability, (perAbility = new Map()));
  const key = `${action}:${subject}`;
  if (perAbility.has(key)) return perAbility.get(key)!;
  const filter = rulesToCondition(ability.rulesFor(action, subject) as never,
    (rule: { inverted: boolean; conditions?: Record<string, unknown> }) => (rule.inverted ? { $not: rule.conditions } : rule.conditions!),
    { and: (c: unknown[]) => (c.length === 1 ? c[0] : { $and: c }), or: (c: unknown[]) => (c.length === 1 ? c[0] : { $or: c }), empty: () => ({}) }) as Record<string, unknown> | null;
  perAbility.set(key, filter);
  return filter;
}
