// Every permission code the loaded manifests declare, with the CASL rules it
// grants. Grants may name the caller ("${user.id}", "${user.companyIds}",
// "${company.id}"): the scope compiler binds them per statement (bind()), so
// rules are shared and never hold a caller's values.
import type { RawRuleOf, MongoAbility } from '@casl/ability';
import type { Manifest, ManifestPermission } from '../manifest/format.ts';

export type Rule = RawRuleOf<MongoAbility>;
export interface CallerValues {
  user: { id: string; companyIds: string[] };
  company: { id: string | null };
}

const PLACEHOLDER = /^\$\{(user\.id|user\.companyIds|company\.id)\}$/;

export function usesCaller(value: unknown): boolean {
  if (typeof value === 'string') return PLACEHOLDER.test(value);
  if (Array.isArray(value)) return value.some(usesCaller);
  if (value && typeof value === 'object') return Object.values(value).some(usesCaller);
  return false;
}

/** A grant value with the caller's values in place of its placeholders. */
export function bind(value: unknown, caller: CallerValues): unknown {
  if (typeof value === 'string') {
    const m = PLACEHOLDER.exec(value);
    if (!m) return value;
    return m[1] === 'user.id' ? caller.user.id : m[1] === 'user.companyIds' ? caller.user.companyIds : caller.company.id;
  }
  if (Array.isArray(value)) return value.map((v) => bind(v, caller));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, bind(v, caller)]));
  return value;
}

export class PermissionCatalog {
  readonly codes = new Map<string, ManifestPermission & { module: string }>();

  constructor(manifests: Manifest[]) {
    for (const m of manifests) for (const p of m.permissions ?? []) this.codes.set(p.code, { ...p, module: m.id });
  }

  has(code: string): boolean {
    return this.codes.has(code);
  }

  all(): string[] {
    return [...this.codes.keys()];
  }

  /** The rules of a set of codes; unknown codes (a removed module) grant nothing. */
  /**
   * The CASL rules of a set of codes: the grants, then the inverted ones. CASL
   * lets a later rule win, so each "cannot" bounds every grant of the set
   * whichever code it comes from and in whatever order the codes are listed.
   */
  rules(codes: Iterable<string>): Rule[] {
    const grants: Rule[] = [];
    const limits: Rule[] = [];
    for (const code of codes) {
      for (const g of this.codes.get(code)?.grants ?? []) {
        (g.inverted ? limits : grants).push({ action: g.action, subject: g.subject, conditions: g.conditions, fields: g.fields, inverted: g.inverted } as Rule);
      }
    }
    return [...grants, ...limits];
  }

  /** Codes whose grants allow an action on a subject: documentation for OpenAPI. */
  codesGranting(action: string, subject: string): string[] {
    return [...this.codes.values()]
      .filter((p) => p.grants.some((g) => !g.inverted && [g.action].flat().some((a) => a === action || a === 'manage') && [g.subject].flat().some((s) => s === subject || s === 'all')))
      .map((p) => p.code);
  }
}
