// Reads manifests/*.json, validates each against the manifest schema and the
// rules a schema cannot say, and orders the modules by dependsOn.
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { Ajv } from 'ajv';
import { ManifestSchema, type Manifest, type ManifestEntity } from './schema.ts';
import { ManifestError } from './errors.ts';

export interface LoadedManifest { manifest: Manifest; file: string }

const ajv = new Ajv({ allErrors: true, strict: false });
const validateShape = ajv.compile(ManifestSchema);

export async function loadManifests(dir: string): Promise<LoadedManifest[]> {
  const names = (await readdir(dir)).filter((n) => n.endsWith('.json') && !n.endsWith('.schema.json')).sort();
  const loaded: LoadedManifest[] = [];
  for (const name of names) {
    const file = relative(process.cwd(), join(dir, name));
    loaded.push({ manifest: parseManifest(await readFile(join(dir, name), 'utf8'), file), file });
  }
  checkAcrossModules(loaded);
  return orderByDependencies(loaded);
}

export function parseManifest(text: string, file: string): Manifest {
  let data: unknown;
  try { data = JSON.parse(text); } catch (err) {
    throw new ManifestError(file, '', `is not valid JSON: ${(err as Error).message}`);
  }
  if (!validateShape(data)) {
    const e = validateShape.errors![0];
    const extra = e.keyword === 'additionalProperties' ? ` (${(e.params as { additionalProperty: string }).additionalProperty})` : '';
    throw new ManifestError(file, e.instancePath, `${e.message}${extra}`);
  }
  const manifest = data as Manifest;
  (manifest.entities ?? []).forEach((entity, i) => checkEntity(entity, file, `/entities/${i}`));
  checkRoutesAndMenu(manifest, file);
  return manifest;
}

const TEXT_TYPES = new Set(['string', 'text']);
const RESERVED_FIELDS = new Set(['id', 'createdAt', 'updatedAt', 'version', 'translations']);

function checkEntity(entity: ManifestEntity, file: string, at: string): void {
  for (const [name, f] of Object.entries(entity.fields)) {
    const ptr = `${at}/fields/${name}`;
    const fail = (msg: string) => { throw new ManifestError(file, ptr, msg); };
    if (!/^[a-z][A-Za-z0-9]{0,40}$/.test(name)) fail('field names are camelCase');
    if (RESERVED_FIELDS.has(name)) fail(`"${name}" is provided by the kernel on every entity`);
    if (name === 'companyId' && entity.scope === 'company') fail('"companyId" of a company-scoped entity comes from the company context');
    if (f.type === 'enum' && !f.values) fail('an enum field needs "values"');
    if (f.type !== 'enum' && f.values) fail('"values" only applies to enum fields');
    if (f.type === 'ref' && !f.entity) fail('a ref field needs "entity"');
    if (f.type === 'ref' && !name.endsWith('Id')) fail('a ref field is named after its target with an "Id" suffix, e.g. categoryId');
    if (f.type !== 'ref' && (f.entity || f.onDelete)) fail('"entity" and "onDelete" only apply to ref fields');
    if (f.type !== 'decimal' && (f.precision !== undefined || f.scale !== undefined)) fail('"precision" and "scale" only apply to decimal fields');
    if (f.scale !== undefined && f.scale > (f.precision ?? 12)) fail('"scale" cannot exceed "precision"');
    if (f.translatable && !TEXT_TYPES.has(f.type)) fail('only string and text fields can be translatable');
    if (f.translatable && f.unique) fail('a translatable field cannot be unique');
    if ((f.maxLength !== undefined || f.minLength !== undefined || f.pattern !== undefined) && !TEXT_TYPES.has(f.type)) fail('"maxLength"/"minLength"/"pattern" only apply to string and text fields');
    if (f.search && !TEXT_TYPES.has(f.type)) fail('only string and text fields can be searched');
    if (f.onDelete === 'setNull' && f.required) fail('onDelete "setNull" needs a field that is not required');
    if (f.internal && (f.filter || f.sort || f.search)) fail('an internal field cannot be filtered, sorted or searched');
    if (f.pattern !== undefined) { try { new RegExp(f.pattern, 'u'); } catch { fail('"pattern" is not a valid regular expression'); } }
    if (f.default !== undefined && f.default !== null && f.type === 'enum' && !f.values!.includes(String(f.default))) fail('"default" must be one of "values"');
  }
  (entity.unique ?? []).forEach((key, i) => key.forEach((field, j) => {
    if (!(field in entity.fields) && field !== 'companyId') throw new ManifestError(file, `${at}/unique/${i}/${j}`, `unknown field "${field}"`);
  }));
  for (const [key, list] of [['listColumns', entity.listColumns ?? []]] as const) {
    list.forEach((field, i) => { if (!(field in entity.fields)) throw new ManifestError(file, `${at}/${key}/${i}`, `unknown field "${field}"`); });
  }
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
  });
}

function checkAcrossModules(loaded: LoadedManifest[]): void {
  const modules = new Map<string, LoadedManifest>();
  const entityOwner = new Map<string, string>();
  const codeOwner = new Map<string, string>();
  for (const l of loaded) {
    const { manifest: m, file } = l;
    if (modules.has(m.id)) throw new ManifestError(file, '/id', `module id "${m.id}" is already used by ${modules.get(m.id)!.file}`);
    modules.set(m.id, l);
    (m.entities ?? []).forEach((e, i) => {
      if (entityOwner.has(e.name)) throw new ManifestError(file, `/entities/${i}/name`, `entity "${e.name}" is already declared by module "${entityOwner.get(e.name)}"`);
      entityOwner.set(e.name, m.id);
    });
    (m.permissions ?? []).forEach((p, i) => {
      if (codeOwner.has(p.code)) throw new ManifestError(file, `/permissions/${i}/code`, `permission "${p.code}" is already declared by module "${codeOwner.get(p.code)}"`);
      codeOwner.set(p.code, m.id);
    });
  }
  for (const { manifest: m, file } of loaded) {
    (m.dependsOn ?? []).forEach((dep, i) => {
      if (!modules.has(dep)) throw new ManifestError(file, `/dependsOn/${i}`, `depends on module "${dep}", which is not installed`);
    });
    const visible = new Set([m.id, ...dependencyClosure(m.id, modules)]);
    const entityNames = new Set((m.entities ?? []).map((e) => e.name));
    (m.entities ?? []).forEach((e, i) => Object.entries(e.fields).forEach(([name, f]) => {
      if (f.type !== 'ref') return;
      const owner = entityOwner.get(f.entity!);
      if (!owner || !visible.has(owner)) throw new ManifestError(file, `/entities/${i}/fields/${name}/entity`, `references entity "${f.entity}", which neither this module nor its dependencies declare`);
    }));
    (m.routes ?? []).forEach((r, i) => {
      const subject = 'entity' in r ? r.entity : r.access.subject;
      const ptr = 'entity' in r ? `/routes/${i}/entity` : `/routes/${i}/access/subject`;
      if (subject !== 'all' && !entityNames.has(subject) && !(entityOwner.has(subject) && visible.has(entityOwner.get(subject)!))) {
        throw new ManifestError(file, ptr, `unknown entity "${subject}"`);
      }
    });
    (m.permissions ?? []).forEach((p, i) => p.grants.forEach((g, j) => {
      for (const s of [g.subject].flat()) {
        if (s !== 'all' && !entityOwner.has(s)) throw new ManifestError(file, `/permissions/${i}/grants/${j}/subject`, `unknown entity "${s}"`);
      }
    }));
  }
}

function dependencyClosure(id: string, modules: Map<string, LoadedManifest>, seen = new Set<string>()): Set<string> {
  for (const dep of modules.get(id)?.manifest.dependsOn ?? []) {
    if (!seen.has(dep)) { seen.add(dep); dependencyClosure(dep, modules, seen); }
  }
  return seen;
}

/** Topological order (dependencies first); a cycle names the files on it. */
export function orderByDependencies(loaded: LoadedManifest[]): LoadedManifest[] {
  const byId = new Map(loaded.map((l) => [l.manifest.id, l]));
  const ordered: LoadedManifest[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (l: LoadedManifest, path: string[]) => {
    const id = l.manifest.id;
    if (state.get(id) === 'done') return;
    if (state.get(id) === 'visiting') {
      const cycle = [...path.slice(path.indexOf(id)), id];
      throw new ManifestError(l.file, '/dependsOn', `dependency cycle: ${cycle.join(' → ')}`);
    }
    state.set(id, 'visiting');
    for (const dep of l.manifest.dependsOn ?? []) visit(byId.get(dep)!, [...path, id]);
    state.set(id, 'done');
    ordered.push(l);
  };
  for (const l of loaded) visit(l, []);
  return ordered;
}
