// CASL abilities, one per set of permission codes, shared by every (tenant,
// role set) holding those codes until the tenant's roles change. An ability holds the grants as the manifests write them, caller
// placeholders ("${user.id}") included: it answers whether an action on an
// entity is granted at all, and its conditions are compiled into SQL
// (data/scope.ts), where each statement binds the caller's values. No
// condition is ever evaluated in memory, so no caller's ids live in a shared
// ability.
import { createMongoAbility, type MongoAbility } from '@casl/ability';
import { rulesToCondition } from '@casl/ability/extra';
import { LRUCache } from 'lru-cache';
import type { EntityManager } from '@mikro-orm/core';
import type { PermissionCatalog } from './permission-catalog.ts';
import type { RoleDirectory } from './role-directory.ts';
import type { Principal } from './principal.ts';

export type Ability = MongoAbility;
interface Compiled {
  generation: number;
  ability: Ability;
}

const filterCache = new WeakMap<Ability, Map<string, Record<string, unknown> | null>>();

/**
 * Abilities are compiled once per set of permission codes and shared by every
 * tenant and role set holding exactly those codes, with the row filters
 * compiled from them (accessFilter's cache): ten thousand tenants with the
 * stock roles hold a handful of abilities, and a tenant's first request finds
 * them warm. Both caches are bounded (least recently used go first).
 */
export class AbilityFactory {
  #catalog: PermissionCatalog;
  #roles: RoleDirectory;
  /** by tenant and role set: the generation of the role data and the shared ability */
  #compiled: LRUCache<string, Compiled>;
  /** by the sorted code set */
  #byCodes: LRUCache<string, Ability>;

  constructor(catalog: PermissionCatalog, roles: RoleDirectory, opts: { tenants?: number; codeSets?: number } = {}) {
    this.#catalog = catalog;
    this.#roles = roles;
    this.#compiled = new LRUCache({ max: opts.tenants ?? 10_000 });
    this.#byCodes = new LRUCache({ max: opts.codeSets ?? 1_000 });
  }

  /** `em`: a transaction's, for roles not cached (RoleDirectory.resolve); what it reads compiles, uncached. */
  async for(tenantId: string, roleNames: string[], em?: EntityManager): Promise<Ability> {
    const key = `${tenantId}|${roleNames.join(',')}`;
    const { codes, generation } = await this.#roles.resolve(tenantId, roleNames, em);
    if (generation < 0) return this.forCodes(codes);
    let compiled = this.#compiled.get(key);
    if (!compiled || compiled.generation !== generation) {
      compiled = { generation, ability: this.forCodes(codes) };
      this.#compiled.set(key, compiled);
    }
    return compiled.ability;
  }

  /** The ability of a set of permission codes (a role set's, or held directly: an API key's scopes); unknown codes grant nothing. */
  forCodes(codes: string[]): Ability {
    const set = [...new Set(codes)].sort();
    const key = set.join(',');
    let ability = this.#byCodes.get(key);
    if (!ability) this.#byCodes.set(key, (ability = createMongoAbility(this.#catalog.rules(set.filter((c) => this.#catalog.has(c))))));
    return ability;
  }

  /** How many entries the caches hold (the scale bench reports them). */
  get sizes(): { tenantRoleSets: number; codeSets: number } {
    return { tenantRoleSets: this.#compiled.size, codeSets: this.#byCodes.size };
  }

  /** A user's or client's ability: from the codes it holds directly, else from its roles in the tenant. */
  of(tenantId: string, principal: Principal): Promise<Ability> | Ability {
    return principal.codes ? this.forCodes(principal.codes) : this.for(tenantId, principal.roles);
  }

  /** The permission codes a role set holds in a tenant. */
  codes(tenantId: string, roleNames: string[]): Promise<string[]> {
    return this.#roles.codesFor(tenantId, roleNames);
  }

  /**
   * Forget a tenant's roles (they changed). Its compiled entries need no walk over
   * every key: the roles read again carry a new generation, which replaces them.
   */
  invalidate(tenantId: string): void {
    this.#roles.invalidate(tenantId);
  }

  /** Forget every tenant's compiled abilities and roles (role changes may have been missed). */
  invalidateAll(): void {
    this.#compiled.clear();
    this.#roles.invalidateAll();
  }
}

/**
 * The ability's conditions for an action on a subject (or one of its fields),
 * as one condition for the scope compiler: {} = every row, null = no row.
 */
export function accessFilter(ability: Ability, action: string, subject: string, field?: string): Record<string, unknown> | null {
  let perAbility = filterCache.get(ability);
  if (!perAbility) filterCache.set(ability, (perAbility = new Map()));
  const key = field === undefined ? `${action}:${subject}` : `${action}:${subject}:${field}`;
  if (perAbility.has(key)) return perAbility.get(key)!;
  // with a field: only the rules that cover it (a grant's `fields`), so a field rule narrows that field alone
  const filter = rulesToCondition(
    (field === undefined ? ability.rulesFor(action, subject) : ability.rulesFor(action, subject, field)) as never,
    (rule: { inverted: boolean; conditions?: Record<string, unknown> }) => (rule.inverted ? { $not: rule.conditions } : rule.conditions!),
    { and: (c: unknown[]) => (c.length === 1 ? c[0] : { $and: c }), or: (c: unknown[]) => (c.length === 1 ? c[0] : { $or: c }), empty: () => ({}) },
  ) as Record<string, unknown> | null;
  perAbility.set(key, filter);
  return filter;
}

/** Whether any of the ability's rules for an action on a subject names fields (a field rule). */
export function hasFieldRules(ability: Ability, action: string, subject: string): boolean {
  return ability.rulesFor(action, subject).some((r) => r.fields !== undefined);
}
