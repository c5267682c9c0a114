// Every permission code the loaded manifests declare, with the CASL rules it
// grants. Grants may name the caller ("${user.id}", "${user.companyIds}",
// "${company.id}"); such templates are bound per request, never cached with values.
import type { RawRuleOf, MongoAbility } from '@casl/ability';
import type { Manifest, ManifestPermission } from '../manifest/schema.ts';

export type Rule = RawRuleOf<MongoAbility>;
export interface CallerValues { user: { id: string; companyIds: string[] }; company: { id: string | null } }

const PLACEHOLDER = /^\$\{(user\.id|user\.companyIds|company\.id)\}$/;

function usesCaller(value: unknown): boolean {
  if (typeof value === 'string') return PLACEHOLDER.test(value);
  if (Array.isArray(value)) return value.some(usesCaller);
  if (value && typeof value === 'object') return Object.values(value).some(usesCaller);
  return false;
}

function bind(value: unknown, caller: CallerValues): unknown {
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

  has(code: string): boolean { return this.codes.has(code); }

  all(): string[] { return [...this.codes.keys()]; }

  /** Rule templates for a set of codes; unknown codes (a removed module) grant nothing. */
  templates(codes: Iterable<string>): { rules: Rule[]; usesCaller: boolean } {
    const rules: Rule[] = [];
    for (const code of codes) {
      for (const g of this.codes.get(code)?.grants ?? []) {
        rules.push({ action: g.action, subject: g.subject, conditions: g.conditions, fields: g.fields, inverted: g.inverted } as Rule);
      }
    }
    return { rules, usesCaller: rules.some((r) => usesCaller(r.conditions)) };
  }

  static bind(rules: Rule[], caller: CallerValues): Rule[] {
    return rules.map((r) => (r.conditions ? { ...r, conditions: bind(r.conditions, caller) } : r) as Rule);
  }

  /** Codes whose grants allow an action on a subject: documentation for OpenAPI. */
  codesGranting(action: string, subject: string): string[] {
    return [...this.codes.values()].filter((p) => p.grants.some((g) => !g.inverted
      && [g.action].flat().some((a) => a === action || a === 'manage')
      && [g.subject].flat().some((s) => s === subject || s === 'all'))).map((p) => p.code);
  }
}
