// One EntityModel per manifest entity, derived once at start: the table, the
// MikroORM entity, and which fields are written, filtered, sorted and searched.
// Everything downstream (CRUD, OpenAPI, abilities) reads from here.
import type { EntitySchema } from '@mikro-orm/core';
import type { Manifest, ManifestEntity, ManifestField, Transitions } from '../manifest/format.ts';
import { snake, tableName } from '../manifest/names.ts';
import { Formula } from '../decimal.ts';

export type Scope = 'tenant' | 'company';

/** The identity model's entity that company-scoped rows belong to (manifests/core.json). */
export const COMPANY_ENTITY = 'Company';
/** The identity model's entity a user principal is a row of: a list filter on a ref to it takes `me` for the caller. */
export const USER_ENTITY = 'User';

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
  /** what module code and hooks may write: the writable fields and the read-only ones (the API never accepts those) */
  settable: FieldModel[];
  /** write-only fields stored encrypted */
  secrets: FieldModel[];
  byName: Map<string, FieldModel>;
  translatable: FieldModel[];
  searchable: FieldModel[];
  sortable: Set<string>;
  filterable: FieldModel[];
  refs: FieldModel[];
  defaultSort: string;
  /** the MikroORM entity (migrations, kernel code on the EntityManager) */
  ormEntity: EntitySchema;
  /** decimal fields computed from the row on every write, in declaration order */
  formulas: { field: FieldModel; formula: Formula }[];
  /** integer fields numbered on create, per value of `per` (data/sequence.ts) */
  sequences: { field: FieldModel; per?: FieldModel }[];
  /** sums over child rows this entity shows (filled in once every model exists) */
  rollups: Rollup[];
  /** sums on parents that a write of this entity changes */
  feeds: Rollup[];
  /** ref fields a nested CRUD route takes from its path (/quotes/:quoteId/lines): never in a body */
  pathBound: FieldModel[];
  transitions?: Transitions;
  /** the module's audit entity, when this entity is audited */
  auditLog?: string;
  /** writes emit generated events (manifest "events", default true) */
  events: boolean;
  /** some grant limits its fields (a grant's `fields`): any field may read as null */
  fieldRules: boolean;
}

/** Field types a list filters by range (…From / …To). */
const RANGE_TYPES = new Set(['integer', 'decimal', 'date', 'datetime']);
export const isRangeType = (type: string) => RANGE_TYPES.has(type);

export interface Rollup {
  parent: string;
  field: FieldModel;
  child: string;
  by: string;
  summed: FieldModel;
}

export { camel, entityNoun, pascal, plural, snake, tableName } from '../manifest/names.ts';

export function describeModel(manifest: Manifest, entity: ManifestEntity, ormEntity: EntitySchema): EntityModel {
  const storedFields = Object.entries(entity.fields).map(([name, f]) => ({ ...f, name, column: snake(name) }));
  const fields = storedFields.filter((f) => !f.internal);
  const bound = new Set(
    (manifest.routes ?? []).flatMap((r) =>
      'entity' in r && r.entity === entity.name
        ? r.path
            .split('/')
            .filter((seg) => seg.startsWith(':'))
            .map((seg) => seg.slice(1))
        : [],
    ),
  );
  const pathBound = fields.filter((f) => f.type === 'ref' && bound.has(f.name));
  const derived = (f: FieldModel) => f.readOnly || f.formula !== undefined || f.sum !== undefined || f.sequence !== undefined || pathBound.includes(f);
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
    writable: fields.filter((f) => !derived(f)),
    settable: fields.filter((f) => f.formula === undefined && f.sum === undefined && f.sequence === undefined && !pathBound.includes(f)),
    secrets: fields.filter((f) => f.secret),
    byName: new Map(storedFields.map((f) => [f.name, f])),
    translatable: fields.filter((f) => f.translatable),
    searchable: fields.filter((f) => f.search),
    sortable: new Set([...fields.filter((f) => f.sort).map((f) => f.name), 'createdAt', 'updatedAt']),
    filterable: fields.filter((f) => f.filter),
    refs: storedFields.filter((f) => f.type === 'ref'),
    defaultSort: entity.defaultSort ?? '-createdAt',
    ormEntity,
    formulas: fields.filter((f) => f.formula !== undefined).map((f) => ({ field: f, formula: new Formula(f.formula!) })),
    sequences: fields.filter((f) => f.sequence !== undefined).map((f) => ({ field: f, per: f.sequence!.per === undefined ? undefined : storedFields.find((g) => g.name === f.sequence!.per) })),
    rollups: [],
    feeds: [],
    pathBound,
    transitions: entity.transitions,
    auditLog: entity.audit ? manifest.auditLog : undefined,
    events: entity.events !== false,
    fieldRules: false,
  };
}
