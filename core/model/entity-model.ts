// One EntityModel per manifest entity, derived once at start: the table, the
// MikroORM schema, and which fields are written, filtered, sorted and searched.
// Everything downstream (CRUD, OpenAPI, abilities) reads from here.
import type { EntitySchema } from '@mikro-orm/core';
import type { Manifest, ManifestEntity, ManifestField } from '../manifest/schema.ts';

export type Scope = 'tenant' | 'company';

/** The identity model's entity that company-scoped rows belong to (manifests/core.json). */
export const COMPANY_ENTITY = 'Company';

export interface FieldModel extends ManifestField {
  name: string;
  column: string;
}

export interface EntityModel {
  name: string;
  module: string;
  label: string;
  scope: Scope;
  table: string;
  definition: ManifestEntity;
  /** fields the API reads and writes (internal ones excluded) */
  fields: FieldModel[];
  /** every stored field, internal ones included */
  storedFields: FieldModel[];
  /** fields a response shows: secret ones excluded */
  readable: FieldModel[];
  /** fields a request body may set: read-only ones excluded */
  writable: FieldModel[];
  /** write-only fields stored encrypted */
  secrets: FieldModel[];
  byName: Map<string, FieldModel>;
  translatable: FieldModel[];
  searchable: FieldModel[];
  sortable: Set<string>;
  filterable: FieldModel[];
  refs: FieldModel[];
  defaultSort: string;
  schema: EntitySchema;
}

export const snake = (s: string) => s.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();

export function plural(word: string): string {
  if (/[^aeiou]y$/.test(word)) return `${word.slice(0, -1)}ies`;
  if (/(s|x|z|ch|sh)$/.test(word)) return `${word}es`;
  return `${word}s`;
}

export function tableName(module: string, entity: ManifestEntity): string {
  return entity.table ?? `${snake(module).replace(/-/g, '_')}_${plural(snake(entity.name))}`;
}

export function describeModel(manifest: Manifest, entity: ManifestEntity, schema: EntitySchema): EntityModel {
  const storedFields = Object.entries(entity.fields).map(([name, f]) => ({ ...f, name, column: snake(name) }));
  const fields = storedFields.filter((f) => !f.internal);
  return {
    name: entity.name,
    module: manifest.id,
    label: entity.label ?? entity.name,
    scope: entity.scope,
    table: tableName(manifest.id, entity),
    definition: entity,
    fields,
    storedFields,
    readable: fields.filter((f) => !f.secret),
    writable: fields.filter((f) => !f.readOnly),
    secrets: fields.filter((f) => f.secret),
    byName: new Map(storedFields.map((f) => [f.name, f])),
    translatable: fields.filter((f) => f.translatable),
    searchable: fields.filter((f) => f.search),
    sortable: new Set([...fields.filter((f) => f.sort).map((f) => f.name), 'createdAt', 'updatedAt']),
    filterable: fields.filter((f) => f.filter),
    refs: storedFields.filter((f) => f.type === 'ref'),
    defaultSort: entity.defaultSort ?? '-createdAt',
    schema,
  };
}
