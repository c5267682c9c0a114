// Reads manifests/*.json, validates each against the manifest schema and the
// rules a schema cannot say, and orders the modules by dependsOn. Every fault
// is a ManifestError naming the file and the JSON pointer of the offending value.
import { readdir, readFile } from 'node:fs/promises';
import { isAbsolute, join, relative } from 'node:path';
import { Ajv, type ErrorObject } from 'ajv';
import { ManifestSchema, type Manifest, type ManifestEntity } from './format.ts';
import { ManifestError } from './errors.ts';
import { checkFieldDefault, checkFieldRules, escapePointer, MAX_IDENTIFIER } from './field-rules.ts';
import { ENTITY_COMPONENT_SUFFIXES, entityNoun, hasModulePrefix, pascal, snake, tableName } from './names.ts';
import { compileFault, shapeFault } from './schemas.ts';
import { Formula } from '../decimal.ts';
import { conditionFaults, KERNEL_FIELDS } from './conditions.ts';
import { checkEvents } from './events.ts';

export interface LoadedManifest {
  manifest: Manifest;
  file: string;
}

const ajv = new Ajv({ allErrors: true, strict: false });
const validateShape = ajv.compile(ManifestSchema);

/** Paths inside the project read relative to it (manifests/catalog.json); others stay absolute. */
function displayPath(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel.startsWith('..') || isAbsolute(rel) ? path : rel;
}

export async function loadManifests(dir: string): Promise<LoadedManifest[]> {
  const names = (await readdir(dir)).filter((n) => n.endsWith('.json') && !n.endsWith('.schema.json')).sort();
  const loaded: LoadedManifest[] = [];
  for (const name of names) {
    const file = displayPath(join(dir, name));
    loaded.push({ manifest: parseManifest(await readFile(join(dir, name), 'utf8'), file), file });
  }
  checkAcrossModules(loaded);
  return orderByDependencies(loaded);
}

export function parseManifest(text: string, file: string): Manifest {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw new ManifestError(file, '', `is not valid JSON: ${(err as Error).message}`);
  }
  if (!validateShape(data)) {
    const e = bestError(validateShape.errors!);
    if (e.keyword === 'additionalProperties') {
      const name = (e.params as { additionalProperty: string }).additionalProperty;
      throw new ManifestError(file, `${e.instancePath}/${escapePointer(name)}`, `unknown property "${name}"`);
    }
    throw new ManifestError(file, e.instancePath, e.message ?? e.keyword);
  }
  const manifest = data as Manifest;
  checkSchemas(manifest, file);
  (manifest.entities ?? []).forEach((entity, i) => checkEntity(manifest, entity, file, `/entities/${i}`));
  (manifest.entities ?? []).forEach((entity, i) => checkDerived(manifest, entity, file, `/entities/${i}`));
  checkAuditLog(manifest, file);
  checkRoutesAndMenu(manifest, file);
  checkEvents(manifest, file);
  return manifest;
}

/**
 * With allErrors, a union (anyOf) reports the failures of every branch. Keep
 * the branch that came closest (fewest failures), so a custom route with a typo
 * is not reported as "a CRUD route needs entity"; when no branch matched even
 * the type, the union's own error is the clearest.
 */
function bestError(all: ErrorObject[]): ErrorObject {
  let errors = all;
  const unions = all.filter((e) => e.keyword === 'anyOf').sort((a, b) => a.schemaPath.length - b.schemaPath.length);
  for (const u of unions) {
    if (!errors.includes(u)) continue;
    const inUnion = (e: ErrorObject) => e.schemaPath.startsWith(`${u.schemaPath}/`) && (e.instancePath === u.instancePath || e.instancePath.startsWith(`${u.instancePath}/`));
    const branches = new Map<string, ErrorObject[]>();
    for (const e of errors.filter(inUnion)) {
      const branch = e.schemaPath.slice(u.schemaPath.length + 1).split('/')[0];
      branches.set(branch, [...(branches.get(branch) ?? []), e]);
    }
    const noneClose = [...branches.values()].every((es) => es.every((e) => e.instancePath === u.instancePath && e.keyword === 'type'));
    const keep = noneClose ? [u] : [...branches.values()].reduce((a, b) => (b.length < a.length ? b : a));
    errors = errors.filter((e) => (e === u || inUnion(e) ? keep.includes(e) : true));
  }
  return errors[0];
}

/**
 * Named schemas: prefixed with the module's name as its OpenAPI components are
 * (BiAnalyticsQuery of bi), so two modules cannot collide; each a JSON Schema
 * that compiles with the others known. Shapes first: an $id inside one would
 * be registered beside its name when the others are compiled.
 */
function checkSchemas(m: Manifest, file: string): void {
  const named = m.schemas ?? {};
  const at = (name: string, inside: string[] = []) => [`/schemas/${escapePointer(name)}`, ...inside.map(escapePointer)].join('/');
  for (const [name, schema] of Object.entries(named)) {
    if (!/^[A-Z][A-Za-z0-9]{1,60}$/.test(name) || !hasModulePrefix(m.id, name))
      throw new ManifestError(file, at(name), `schema names are PascalCase and start with the module's name as a word, as its OpenAPI components do: ${pascal(m.id)}<Name>`);
    const fault = shapeFault(schema, named);
    if (fault) throw new ManifestError(file, at(name, fault.at), fault.reason);
  }
  for (const [name, schema] of Object.entries(named)) {
    const fault = compileFault(schema, named);
    if (fault) throw new ManifestError(file, at(name, fault.at), fault.reason);
  }
}

const SYSTEM_SORT = new Set(['createdAt', 'updatedAt']);

const KERNEL_COLUMNS = ['id', 'created_at', 'updated_at', 'version'];

function checkEntity(m: Manifest, entity: ManifestEntity, file: string, at: string): void {
  const columns = new Map(KERNEL_COLUMNS.map((c) => [c, 'the kernel']));
  if (entity.scope === 'company') columns.set('company_id', 'the kernel');
  for (const [name, f] of Object.entries(entity.fields)) {
    const ptr = `${at}/fields/${escapePointer(name)}`;
    const fault = checkFieldRules(name, f, entity.scope, m.schemas) ?? checkFieldDefault(f);
    if (fault) throw new ManifestError(file, fault.key ? `${ptr}/${fault.key}` : ptr, fault.reason);
    const column = snake(name);
    if (columns.has(column)) throw new ManifestError(file, ptr, `its column "${column}" is already used by ${columns.get(column)}`);
    columns.set(column, `field "${name}"`);
  }
  const table = tableName(m.id, entity);
  if (table.length > MAX_IDENTIFIER) {
    throw new ManifestError(file, `${at}/name`, `the table name "${table}" is longer than PostgreSQL's ${MAX_IDENTIFIER} characters: set a shorter "table"`);
  }
  const companyScoped = entity.scope === 'company';
  (entity.unique ?? []).forEach((key, i) =>
    key.forEach((field, j) => {
      if (!(field in entity.fields) && !(companyScoped && field === 'companyId')) throw new ManifestError(file, `${at}/unique/${i}/${j}`, `unknown field "${field}"`);
    }),
  );
  (entity.listColumns ?? []).forEach((field, i) => {
    if (!(field in entity.fields)) throw new ManifestError(file, `${at}/listColumns/${i}`, `unknown field "${field}"`);
  });
  if (entity.defaultSort !== undefined) {
    for (const part of entity.defaultSort.split(',')) {
      const name = part.startsWith('-') ? part.slice(1) : part;
      const f = entity.fields[name];
      if (!SYSTEM_SORT.has(name) && !(f?.sort && !f.internal)) {
        throw new ManifestError(file, `${at}/defaultSort`, `"${name}" is not a sortable field (mark it "sort": true, or use createdAt/updatedAt)`);
      }
    }
  }
  checkListOptions(entity, file, at);
  checkRecordHints(entity, file, at);
}

/** The record page's hints name fields of the entity that fit them. */
function checkRecordHints(entity: ManifestEntity, file: string, at: string): void {
  const visible = (name: string) => name in entity.fields && !entity.fields[name].internal && !entity.fields[name].secret;
  if (entity.titleField !== undefined && !(visible(entity.titleField) && ['string', 'text'].includes(entity.fields[entity.titleField].type)))
    throw new ManifestError(file, `${at}/titleField`, `"${entity.titleField}" is no readable string field`);
  if (entity.statusField !== undefined && !(visible(entity.statusField) && entity.fields[entity.statusField].type === 'enum'))
    throw new ManifestError(file, `${at}/statusField`, `"${entity.statusField}" is no readable enum field`);
  (entity.summaryFields ?? []).forEach((field, i) => {
    if (!visible(field)) throw new ManifestError(file, `${at}/summaryFields/${i}`, `"${field}" is no readable field`);
  });
  for (const [name, f] of Object.entries(entity.fields)) {
    const ptr = `${at}/fields/${escapePointer(name)}`;
    if (f.related !== undefined && f.type !== 'ref') throw new ManifestError(file, `${ptr}/related`, 'only a ref field is listed on the record it points at');
    for (const value of Object.keys(f.valueLabels ?? {}))
      if (!f.values?.includes(value)) throw new ManifestError(file, `${ptr}/valueLabels/${escapePointer(value)}`, `"${value}" is no value of the field`);
    if (f.schemaFrom && (f.type !== 'json' || entity.fields[f.schemaFrom.match] === undefined))
      throw new ManifestError(file, `${ptr}/schemaFrom`, 'a json field takes its form from an item named by another field of the entity');
  }
}

/** Query parameters every list takes: a named filter may not take one of their names. */
const LIST_PARAMS = new Set(['page', 'size', 'sort', 'search', 'cursor', 'fields', 'include', 'translations']);

/** listDefaults name filterable fields with values of their type; named filters take no parameter a field or the list uses. */
function checkListOptions(entity: ManifestEntity, file: string, at: string): void {
  for (const [name, value] of Object.entries(entity.listDefaults ?? {})) {
    const f = entity.fields[name];
    const ptr = `${at}/listDefaults/${escapePointer(name)}`;
    if (!f?.filter || f.internal) throw new ManifestError(file, ptr, `"${name}" is not a filter field (mark it "filter": true)`);
    const fits = f.type === 'boolean' ? typeof value === 'boolean' : f.type === 'integer' || f.type === 'decimal' ? typeof value === 'number' : typeof value === 'string';
    if (!fits || (f.type === 'enum' && !f.values!.includes(value as string))) throw new ManifestError(file, ptr, `${JSON.stringify(value)} is no value of the ${f.type} field "${name}"`);
  }
  for (const name of Object.keys(entity.filters ?? {})) {
    const taken = LIST_PARAMS.has(name) || Object.keys(entity.fields).some((field) => name === field || name.startsWith(field));
    if (taken) throw new ManifestError(file, `${at}/filters/${escapePointer(name)}`, `"${name}" is a list parameter already (or starts with a field's name)`);
  }
}

const NUMERIC = new Set(['decimal', 'integer']);

/** A money field's "currency" names a plain string field: of the entity, or of the entity of this module a ref of it points at. */
function checkCurrency(m: Manifest, entity: ManifestEntity, type: string, path: string, file: string, ptr: string): void {
  if (!NUMERIC.has(type)) throw new ManifestError(file, ptr, 'only integer and decimal fields are amounts of money with a "currency"');
  const [first, second] = path.split('.');
  let holder = entity;
  if (second !== undefined) {
    const ref = entity.fields[first];
    const target = ref?.type === 'ref' ? (m.entities ?? []).find((e) => e.name === ref.entity) : undefined;
    if (!target) throw new ManifestError(file, ptr, `"${first}" is no ref field of ${entity.name} pointing at an entity of this module`);
    holder = target;
  }
  const g = holder.fields[second ?? first];
  if (g?.type !== 'string' || g.translatable || g.internal || g.secret) throw new ManifestError(file, ptr, `"${second ?? first}" is no plain string field of ${holder.name} to hold the currency`);
}

/** Computed fields, state machines: what they name must exist and fit. */
function checkDerived(m: Manifest, entity: ManifestEntity, file: string, at: string): void {
  for (const [name, f] of Object.entries(entity.fields)) {
    const ptr = `${at}/fields/${escapePointer(name)}`;
    if ((f.formula !== undefined || f.sum !== undefined) && f.type !== 'decimal') throw new ManifestError(file, ptr, 'only decimal fields can have a "formula" or a "sum"');
    if (f.formula !== undefined && f.sum !== undefined) throw new ManifestError(file, `${ptr}/sum`, 'a field has a "formula" or a "sum", not both');
    if (f.formula !== undefined) {
      let formula: Formula;
      try {
        formula = new Formula(f.formula);
      } catch (err) {
        throw new ManifestError(file, `${ptr}/formula`, `is no formula: ${(err as Error).message}`);
      }
      const names = Object.keys(entity.fields);
      for (const used of formula.fields) {
        const g = entity.fields[used];
        if (!g || !NUMERIC.has(g.type)) throw new ManifestError(file, `${ptr}/formula`, `"${used}" is no decimal or integer field of ${entity.name}`);
        if (g.formula !== undefined && names.indexOf(used) > names.indexOf(name)) throw new ManifestError(file, `${ptr}/formula`, `"${used}" is computed after this field: declare it first`);
      }
    }
    if (f.sequence !== undefined) {
      if (f.type !== 'integer') throw new ManifestError(file, `${ptr}/sequence`, 'only integer fields can be a "sequence"');
      const per = f.sequence.per;
      if (per !== undefined && (!entity.fields[per] || per === name || entity.fields[per].type === 'json' || entity.fields[per].translatable)) {
        throw new ManifestError(file, `${ptr}/sequence/per`, `"${per}" is no plain field of ${entity.name} to number by`);
      }
    }
    if (f.currency !== undefined) checkCurrency(m, entity, f.type, f.currency, file, `${ptr}/currency`);
    if (f.sum !== undefined) {
      const child = (m.entities ?? []).find((e) => e.name === f.sum!.entity);
      if (!child) throw new ManifestError(file, `${ptr}/sum/entity`, `"${f.sum.entity}" is no entity of this module`);
      const by = child.fields[f.sum.by];
      if (by?.type !== 'ref' || by.entity !== entity.name) throw new ManifestError(file, `${ptr}/sum/by`, `"${f.sum.by}" is no ref field of ${child.name} pointing at ${entity.name}`);
      if (child.fields[f.sum.field]?.type !== 'decimal') throw new ManifestError(file, `${ptr}/sum/field`, `"${f.sum.field}" is no decimal field of ${child.name}`);
    }
  }
  const tr = entity.transitions;
  if (tr) {
    const field = entity.fields[tr.field];
    if (field?.type !== 'enum') throw new ManifestError(file, `${at}/transitions/field`, `"${tr.field}" is no enum field of ${entity.name}`);
    const known = new Set(field.values);
    const states: [string, string[]][] = [
      ['initial', tr.initial],
      ['lockedIn', tr.lockedIn ?? []],
      ['reserved', tr.reserved ?? []],
      ...Object.entries(tr.moves).map(([from, to]): [string, string[]] => [`moves/${escapePointer(from)}`, [from, ...to]]),
    ];
    for (const [key, list] of states) {
      const bad = list.find((s) => !known.has(s));
      if (bad !== undefined) throw new ManifestError(file, `${at}/transitions/${key}`, `"${bad}" is not a value of ${tr.field}`);
    }
  }
  if (entity.audit && !m.auditLog) throw new ManifestError(file, `${at}/audit`, 'an audited entity needs the module\'s "auditLog" entity');
}

const AUDIT_FIELDS: Record<string, string> = { entity: 'string', entityId: 'string', action: 'enum', userId: 'string', changes: 'json', at: 'datetime' };

function checkAuditLog(m: Manifest, file: string): void {
  if (!m.auditLog) return;
  const log = (m.entities ?? []).find((e) => e.name === m.auditLog);
  if (!log) throw new ManifestError(file, '/auditLog', `"${m.auditLog}" is no entity of this module`);
  for (const [name, type] of Object.entries(AUDIT_FIELDS)) {
    if (log.fields[name]?.type !== type) throw new ManifestError(file, '/auditLog', `${log.name} needs a ${type} field "${name}"`);
  }
  const actions = log.fields.action.values ?? [];
  const missing = ['create', 'update', 'delete'].find((a) => !actions.includes(a));
  if (missing) throw new ManifestError(file, '/auditLog', `${log.name}.action needs the value "${missing}"`);
}

function checkRoutesAndMenu(m: Manifest, file: string): void {
  const codes = new Set((m.permissions ?? []).map((p) => p.code));
  (m.permissions ?? []).forEach((p, i) => {
    if ((m.permissions ?? []).findIndex((q) => q.code === p.code) !== i) throw new ManifestError(file, `/permissions/${i}/code`, `duplicate permission code "${p.code}"`);
  });
  (m.menu ?? []).forEach((item, i) => {
    if (!codes.has(item.permission)) throw new ManifestError(file, `/menu/${i}/permission`, `permission "${item.permission}" is not declared by this module`);
  });
  const seen = new Set<string>();
  (m.routes ?? []).forEach((r, i) => {
    const key = 'entity' in r ? `CRUD ${r.path}` : `${r.method} ${r.path}`;
    if (seen.has(key)) throw new ManifestError(file, `/routes/${i}`, `route ${key} is declared twice`);
    seen.add(key);
    if (!('entity' in r)) return;
    const entity = (m.entities ?? []).find((e) => e.name === r.entity);
    for (const seg of r.path.split('/').filter((p) => p.startsWith(':'))) {
      // another module's entity is nested by its own manifest (which fields a path binds is the entity's model)
      if (!entity) throw new ManifestError(file, `/routes/${i}/path`, `a route over another module's entity (${r.entity}) takes no path parameters`);
      if (entity.fields[seg.slice(1)]?.type !== 'ref') throw new ManifestError(file, `/routes/${i}/path`, `"${seg}" names no ref field of ${r.entity}`);
    }
    (r.lists ?? []).forEach((l, j) => {
      if ((l.by === undefined) === (l.where === undefined))
        throw new ManifestError(file, `/routes/${i}/lists/${j}`, 'a list names "by" (a ref field in its path) or "where" (a condition), one of them');
      if (l.where !== undefined) {
        if (l.name === undefined) throw new ManifestError(file, `/routes/${i}/lists/${j}/name`, 'a list over a condition needs a "name" for its operationId');
        if (l.path.includes('/:')) throw new ManifestError(file, `/routes/${i}/lists/${j}/path`, 'a list over a condition takes no path parameters');
        return;
      }
      if (l.name !== undefined) throw new ManifestError(file, `/routes/${i}/lists/${j}/name`, 'a list "by" a field is named after it');
      const field = entity?.fields[l.by!];
      if (entity && field?.type !== 'ref') throw new ManifestError(file, `/routes/${i}/lists/${j}/by`, `"${l.by}" is not a ref field of ${r.entity}`);
      if (!l.path.split('/').includes(`:${l.by}`)) throw new ManifestError(file, `/routes/${i}/lists/${j}/path`, `the path names no ":${l.by}" segment`);
    });
  });
}

function checkAcrossModules(loaded: LoadedManifest[]): void {
  const modules = new Map<string, LoadedManifest>();
  const entityOwner = new Map<string, string>();
  const entityFields = new Map<string, Map<string, boolean>>();
  const tableOwner = new Map<string, string>();
  const codeOwner = new Map<string, string>();
  // every OpenAPI component a schema name could take: other modules' schemas, entities' shapes
  const componentOwner = new Map<string, string>();
  for (const { manifest: m } of loaded) {
    for (const e of m.entities ?? []) for (const suffix of ENTITY_COMPONENT_SUFFIXES) componentOwner.set(`${pascal(m.id)}${entityNoun(m.id, e.name)}${suffix}`, `entity "${e.name}"`);
  }
  for (const l of loaded) {
    const { manifest: m, file } = l;
    if (modules.has(m.id)) throw new ManifestError(file, '/id', `module id "${m.id}" is already used by ${modules.get(m.id)!.file}`);
    modules.set(m.id, l);
    (m.entities ?? []).forEach((e, i) => {
      if (entityOwner.has(e.name)) throw new ManifestError(file, `/entities/${i}/name`, `entity "${e.name}" is already declared by module "${entityOwner.get(e.name)}"`);
      entityOwner.set(e.name, m.id);
      entityFields.set(
        e.name,
        new Map(
          [...KERNEL_FIELDS, ...(e.scope === 'company' ? ['companyId'] : [])]
            .map((k) => [k, true] as [string, boolean])
            .concat(Object.entries(e.fields).map(([k, f]) => [k, !(f.type === 'json' || f.translatable || f.secret)])),
        ),
      );
      const table = tableName(m.id, e);
      if (tableOwner.has(table)) throw new ManifestError(file, `/entities/${i}/${e.table ? 'table' : 'name'}`, `table "${table}" is already used by entity "${tableOwner.get(table)}"`);
      tableOwner.set(table, e.name);
    });
    for (const name of Object.keys(m.schemas ?? {})) {
      const owner = componentOwner.get(name);
      if (owner) throw new ManifestError(file, `/schemas/${escapePointer(name)}`, `"${name}" is the OpenAPI component of ${owner} already`);
      componentOwner.set(name, `schema "${name}" of module "${m.id}"`);
    }
    (m.permissions ?? []).forEach((p, i) => {
      if (codeOwner.has(p.code)) throw new ManifestError(file, `/permissions/${i}/code`, `permission "${p.code}" is already declared by module "${codeOwner.get(p.code)}"`);
      codeOwner.set(p.code, m.id);
    });
  }
  for (const { manifest: m, file } of loaded) {
    (m.dependsOn ?? []).forEach((dep, i) => {
      if (!modules.has(dep)) throw new ManifestError(file, `/dependsOn/${i}`, `depends on module "${dep}", which is not installed`);
    });
  }
  for (const { manifest: m, file } of loaded) {
    const visible = new Set([m.id, ...dependencyClosure(m.id, modules)]);
    const entityNames = new Set((m.entities ?? []).map((e) => e.name));
    // subjects that are no entity (a page): this module's and its dependencies'
    const pages = new Set([...visible].flatMap((id) => modules.get(id)?.manifest.subjects ?? []));
    (m.entities ?? []).forEach((e, i) =>
      Object.entries(e.fields).forEach(([name, f]) => {
        if (f.type !== 'ref') return;
        const owner = entityOwner.get(f.entity!);
        if (!owner || !visible.has(owner))
          throw new ManifestError(file, `/entities/${i}/fields/${escapePointer(name)}/entity`, `references entity "${f.entity}", which neither this module nor its dependencies declare`);
      }),
    );
    (m.routes ?? []).forEach((r, i) => {
      const subject = 'entity' in r ? r.entity : r.access.subject;
      const ptr = 'entity' in r ? `/routes/${i}/entity` : `/routes/${i}/access/subject`;
      if (subject !== 'all' && !pages.has(subject) && !entityNames.has(subject) && !(entityOwner.has(subject) && visible.has(entityOwner.get(subject)!))) {
        throw new ManifestError(file, ptr, `unknown entity "${subject}"`);
      }
    });
    (m.routes ?? []).forEach((r, i) =>
      ('entity' in r ? (r.lists ?? []) : []).forEach((l, j) => {
        if (l.where === undefined || !('entity' in r)) return;
        const [fault] = conditionFaults(l.where, r.entity, (n) => entityFields.get(n), `/routes/${i}/lists/${j}/where`);
        if (fault) throw new ManifestError(file, fault.pointer, fault.message);
      }),
    );
    (m.entities ?? []).forEach((e, i) =>
      Object.entries(e.filters ?? {}).forEach(([name, f]) => {
        const [fault] = conditionFaults(f.where, e.name, (n) => entityFields.get(n), `/entities/${i}/filters/${escapePointer(name)}/where`);
        if (fault) throw new ManifestError(file, fault.pointer, fault.message);
      }),
    );
    (m.permissions ?? []).forEach((p, i) =>
      p.grants.forEach((g, j) => {
        const subjects = [g.subject].flat();
        subjects.forEach((s, k) => {
          const ptr = Array.isArray(g.subject) ? `/permissions/${i}/grants/${j}/subject/${k}` : `/permissions/${i}/grants/${j}/subject`;
          if (s !== 'all' && !pages.has(s) && !entityOwner.has(s)) throw new ManifestError(file, ptr, `unknown entity "${s}"`);
          (g.fields ?? []).forEach((f, n) => {
            if (s !== 'all' && !entityFields.get(s)?.has(f)) throw new ManifestError(file, `/permissions/${i}/grants/${j}/fields/${n}`, `no field "${f}" on ${s}`);
          });
          if (g.conditions === undefined) return;
          const at = `/permissions/${i}/grants/${j}/conditions`;
          const [fault] = conditionFaults(g.conditions, s, (name) => entityFields.get(name), at);
          if (fault) throw new ManifestError(file, fault.pointer, `${fault.message} (subject ${s})`);
        });
      }),
    );
  }
  checkConsoleHints(loaded, entityFields);
}

/** Related lists name ref fields pointing back; a row action's "when" names fields of its subject. */
function checkConsoleHints(loaded: LoadedManifest[], entityFields: Map<string, Map<string, boolean>>): void {
  const entities = new Map(loaded.flatMap(({ manifest: m }) => (m.entities ?? []).map((e) => [e.name, e] as const)));
  for (const { manifest: m, file } of loaded) {
    (m.entities ?? []).forEach((e, i) =>
      (e.related ?? []).forEach((r, j) => {
        const other = entities.get(r.entity);
        const at = `/entities/${i}/related/${j}`;
        if (!other) throw new ManifestError(file, `${at}/entity`, `unknown entity "${r.entity}"`);
        const refs = Object.entries(other.fields).filter(([, f]) => f.type === 'ref' && f.entity === e.name && !f.internal);
        if (!refs.length) throw new ManifestError(file, `${at}/entity`, `${r.entity} has no ref field pointing at ${e.name}`);
        if (r.field !== undefined && !refs.some(([name]) => name === r.field)) throw new ManifestError(file, `${at}/field`, `"${r.field}" is no ref field of ${r.entity} pointing at ${e.name}`);
      }),
    );
    (m.routes ?? []).forEach((r, i) => {
      if ('entity' in r) return;
      for (const field of Object.keys(r.when ?? {}))
        if (!entityFields.get(r.access.subject)?.has(field)) throw new ManifestError(file, `/routes/${i}/when/${escapePointer(field)}`, `no field "${field}" on ${r.access.subject}`);
    });
  }
}

function dependencyClosure(id: string, modules: Map<string, LoadedManifest>, seen = new Set<string>()): Set<string> {
  for (const dep of modules.get(id)?.manifest.dependsOn ?? []) {
    if (!seen.has(dep)) {
      seen.add(dep);
      dependencyClosure(dep, modules, seen);
    }
  }
  return seen;
}

/** Topological order (dependencies first, else file order); a cycle names its modules. */
function orderByDependencies(loaded: LoadedManifest[]): LoadedManifest[] {
  const byId = new Map(loaded.map((l) => [l.manifest.id, l]));
  const ordered: LoadedManifest[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (l: LoadedManifest, path: string[]) => {
    const id = l.manifest.id;
    state.set(id, 'visiting');
    (l.manifest.dependsOn ?? []).forEach((dep, i) => {
      if (state.get(dep) === 'visiting') {
        const from = path.indexOf(dep);
        const cycle = [...(from < 0 ? [] : path.slice(from)), id, dep];
        throw new ManifestError(l.file, `/dependsOn/${i}`, `dependency cycle: ${cycle.join(' → ')}`);
      }
      if (state.get(dep) !== 'done') visit(byId.get(dep)!, [...path, id]);
    });
    state.set(id, 'done');
    ordered.push(l);
  };
  for (const l of loaded) if (!state.has(l.manifest.id)) visit(l, []);
  return ordered;
}
