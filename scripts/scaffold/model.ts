// ModuleSpec → ModulePlan: everything the templates print, decided here so the
// templates stay logic-less. The catalog module is the reference for every
// default (labels, explicit onDelete, list columns, default sort, codes, menu).
import type { Manifest, ManifestEntity, ManifestField } from '../../core/manifest/format.ts';
import { camel, entityLabel, fieldLabel, inText, joinAnd, kebab, moduleName, pluralLabel, pluralSegment, capitalize } from './names.ts';
import type { Project } from './project.ts';
import type { EntitySpec, ModuleSpec } from './spec.ts';

export const DEFAULT_AREA = 'erp';
export const DEFAULT_PREFIX = '/api';

export interface EntityPlan {
  name: string;
  label: string;
  pluralLabel: string;
  /** test/plugins/<module>/<kebab>.test.ts */
  kebab: string;
  path: string;
  menu: { label: string; path: string; icon?: string };
  /** exactly what the manifest declares for the entity */
  definition: ManifestEntity;
  /** per field: a valid value for the generated tests, given by the spec */
  examples: Record<string, unknown>;
}

export interface ModulePlan {
  id: string;
  /** camelCase id, the operationId prefix: sales-crm → salesCrm */
  opPrefix: string;
  name: string;
  version: string;
  description: string;
  dependsOn: string[];
  area: string;
  prefix: string;
  viewCode: string;
  manageCode: string;
  viewDescription: string;
  manageDescription: string;
  /** the order the spec gives: menu, permission subjects and descriptions */
  given: EntityPlan[];
  /** the order of the manifest: an entity before the entities that reference it */
  entities: EntityPlan[];
}

// The key order of a field in the catalog manifest, so generated manifests read the same.
const FIELD_KEYS: (keyof ManifestField)[] = [
  'type',
  'entity',
  'label',
  'description',
  'required',
  'maxLength',
  'minLength',
  'pattern',
  'precision',
  'scale',
  'values',
  'default',
  'minimum',
  'maximum',
  'onDelete',
  'unique',
  'index',
  'translatable',
  'internal',
  'sort',
  'search',
  'filter',
  'widget',
];

function orderField(f: ManifestField): ManifestField {
  const out: Record<string, unknown> = {};
  for (const key of FIELD_KEYS) if (f[key] !== undefined) out[key] = f[key];
  for (const [key, value] of Object.entries(f)) if (!(key in out) && value !== undefined) out[key] = value;
  return out as ManifestField;
}

/** Up to three required fields that fit a column, then the first boolean (catalog: sku, name, price, isActive). */
function defaultColumns(fields: Record<string, ManifestField>): string[] {
  const entries = Object.entries(fields).filter(([, f]) => !f.internal);
  const columns = entries
    .filter(([, f]) => f.required && !['text', 'json', 'ref'].includes(f.type))
    .slice(0, 3)
    .map(([n]) => n);
  const flag = entries.find(([, f]) => f.type === 'boolean');
  if (flag) columns.push(flag[0]);
  return columns.length ? columns : entries.slice(0, 1).map(([n]) => n);
}

/** name when sortable, else the first sortable text field, else none (the kernel sorts by -createdAt). */
function defaultSortOf(fields: Record<string, ManifestField>): string | undefined {
  if (fields.name?.sort && !fields.name.internal) return 'name';
  return Object.entries(fields).find(([, f]) => f.sort && !f.internal && (f.type === 'string' || f.type === 'text'))?.[0];
}

export function planEntity(e: EntitySpec, moduleId: string, prefix: string): EntityPlan {
  const fields: Record<string, ManifestField> = {};
  const examples: Record<string, unknown> = {};
  for (const { name, field, example } of e.fields) {
    const f: ManifestField = { ...field, label: field.label ?? fieldLabel(name, field.type) };
    if (f.type === 'ref' && f.onDelete === undefined) f.onDelete = 'restrict';
    fields[name] = orderField(f);
    if (example !== undefined) examples[name] = example;
  }
  const listed = e.fields.filter((f) => f.list).map((f) => f.name);
  const label = e.label ?? entityLabel(e.name);
  const plural = e.plural ? entityLabel(e.plural) : pluralLabel(label);
  const segment = pluralSegment(e.name, e.plural);
  const defaultSort = e.defaultSort ?? defaultSortOf(fields);
  const definition: ManifestEntity = {
    name: e.name,
    label,
    ...(e.description ? { description: e.description } : {}),
    scope: e.scope,
    ...(e.table ? { table: e.table } : {}),
    fields,
    ...(e.unique?.length ? { unique: e.unique } : {}),
    listColumns: e.listColumns ?? (listed.length ? listed : defaultColumns(fields)),
    ...(defaultSort ? { defaultSort } : {}),
  };
  return {
    name: e.name,
    label,
    pluralLabel: plural,
    kebab: kebab(e.name),
    path: `${prefix}/${segment}`,
    menu: { label: capitalize(plural), path: `/${moduleId}/${segment}`, ...(e.icon ? { icon: e.icon } : {}) },
    definition,
    examples,
  };
}

/** Stable topological order: each entity after the entities of this module it references. */
export function dependencyOrder<T extends { name: string; definition: ManifestEntity }>(entities: T[]): T[] {
  const names = new Set(entities.map((e) => e.name));
  const placed: T[] = [];
  const done = new Set<string>();
  const remaining = [...entities];
  while (remaining.length) {
    const ready = remaining.findIndex((e) => Object.values(e.definition.fields).every((f) => f.type !== 'ref' || f.entity === e.name || !names.has(f.entity!) || done.has(f.entity!)));
    const [next] = remaining.splice(ready < 0 ? 0 : ready, 1);
    placed.push(next);
    done.add(next.name);
  }
  return placed;
}

export const viewDescription = (plurals: string[]) => `Read ${joinAnd(plurals.map(inText))}`;
export const manageDescription = (plurals: string[]) => `Create, change and delete ${joinAnd(plurals.map(inText))}`;

/** Modules the new entities reference (besides core and itself), for dependsOn. */
function referencedModules(spec: ModuleSpec, project: Project): string[] {
  const own = new Set(spec.entities.map((e) => e.name));
  const out: string[] = [];
  for (const e of spec.entities)
    for (const { field } of e.fields) {
      if (field.type !== 'ref' || own.has(field.entity!)) continue;
      const owner = project.entities.get(field.entity!)?.module;
      if (owner && owner !== spec.module && !out.includes(owner)) out.push(owner);
    }
  return out;
}

export function planModule(spec: ModuleSpec, project: Project, prefix: string): ModulePlan {
  const given = spec.entities.map((e) => planEntity(e, spec.module, prefix));
  const plurals = given.map((e) => e.pluralLabel);
  const area = spec.area ?? DEFAULT_AREA;
  const dependsOn = [...new Set(['core', ...(spec.dependsOn ?? []), ...referencedModules(spec, project)])].filter(
    (m) => m !== spec.module && (m !== 'core' || project.manifests.some((l) => l.manifest.id === 'core')),
  );
  return {
    id: spec.module,
    opPrefix: camel(spec.module),
    name: spec.name ?? moduleName(spec.module),
    version: spec.version ?? '1.0.0',
    description: spec.description ?? `${capitalize(joinAnd(plurals.map(inText)))}.`,
    dependsOn,
    area,
    prefix,
    viewCode: `${area}:${spec.module}:view`,
    manageCode: `${area}:${spec.module}:manage`,
    viewDescription: viewDescription(plurals),
    manageDescription: manageDescription(plurals),
    given,
    entities: dependencyOrder(given),
  };
}

/** --add-entity: the area and route prefix an existing module already uses. */
export function conventionsOf(m: Manifest): { area?: string; prefix?: string } {
  const view = (m.permissions ?? []).find((p) => p.code.endsWith(`:${m.id}:view`));
  const prefixes = [...new Set((m.routes ?? []).filter((r) => 'entity' in r).map((r) => r.path.slice(0, r.path.lastIndexOf('/'))))];
  return { area: view?.code.split(':')[0], prefix: prefixes.length === 1 && prefixes[0] ? prefixes[0] : undefined };
}
