// What module code may learn about the loaded model (ctx.model()): every
// entity with its fields, types, labels and references, and whether the
// context may read it and each field (grants and field rules). Read-only
// metadata from the manifests, so a module such as BI can describe data
// without importing the kernel; the data itself is still read only through
// ctx.data(), in the caller's scope.
import type { EntityModel } from '../model/entity-model.ts';
import { accessFilter, hasFieldRules, type Ability } from '../access/abilities.ts';

export interface FieldInfo {
  /** as the API and queries name it */
  name: string;
  /** the manifest's label */
  label: string;
  /** the manifest's type (string, text, integer, decimal, boolean, date, datetime, enum, json, ref), or id for the row's id */
  type: string;
  /** a value is required (the manifest's `required`) */
  required: boolean;
  /** the referenced entity of a ref */
  ref?: string;
  /** enum values, in declared order */
  values?: string[];
  /** decimals: digits after the point */
  scale?: number;
  /** an amount of money: the field path holding its ISO 4217 currency code ("currency", "quoteId.currency") */
  currency?: string;
  /** it holds a text per language */
  translatable?: boolean;
  /** the kernel's columns (id, createdAt, updatedAt), present on every entity */
  kernel?: boolean;
  /** whether the context may read this field (a grant's `fields` may hide it) */
  readable: boolean;
}

export interface EntityInfo {
  /** as ctx.data() names it (Lead) */
  name: string;
  /** the id of the module that declares it */
  module: string;
  /** the manifest's label */
  label: string;
  /** the manifest's description, if it has one */
  description?: string;
  /** tenant: rows shared by the tenant's companies; company: each row belongs to one company */
  scope: 'tenant' | 'company';
  /** whether the context may read rows of it at all (its rows are still filtered by the grant's conditions) */
  readable: boolean;
  /** the fields the API shows (never internal or secret ones) */
  fields: FieldInfo[];
}

const KERNEL_FIELDS: FieldInfo[] = [
  { name: 'id', label: 'Id', type: 'id', required: true, kernel: true, readable: true },
  { name: 'createdAt', label: 'Created at', type: 'datetime', required: true, kernel: true, readable: true },
  { name: 'updatedAt', label: 'Updated at', type: 'datetime', required: true, kernel: true, readable: true },
];

export function describeEntities(models: Iterable<EntityModel>, ability: Ability): EntityInfo[] {
  return [...models].map((m) => {
    const readable = accessFilter(ability, 'read', m.name) !== null;
    const limited = readable && hasFieldRules(ability, 'read', m.name);
    const fields = m.readable.map((f): FieldInfo => ({
      name: f.name,
      label: f.label ?? f.name,
      type: f.type,
      required: f.required === true,
      ...(f.entity ? { ref: f.entity } : {}),
      ...(f.values ? { values: [...f.values] } : {}),
      ...(f.type === 'decimal' ? { scale: f.scale ?? 2 } : {}),
      ...(f.currency ? { currency: f.currency } : {}),
      ...(f.translatable ? { translatable: true } : {}),
      readable: readable && (!limited || accessFilter(ability, 'read', m.name, f.name) !== null),
    }));
    return {
      name: m.name,
      module: m.module,
      label: m.label,
      ...(m.definition.description ? { description: m.definition.description } : {}),
      scope: m.scope,
      readable,
      fields: [...KERNEL_FIELDS.map((f) => ({ ...f, readable })), ...fields],
    };
  });
}
