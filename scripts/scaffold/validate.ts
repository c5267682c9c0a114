// Checks a ModuleSpec against naming rules, reserved words and the installed
// modules, reporting every problem at once. The kernel's own manifest rules
// (which options go with which type, defaults) run afterwards on the rendered
// manifest (see generate.ts), so they are never restated here.
import { FieldTypes, type Manifest } from '../../core/manifest/format.ts';
import { snake, tableName } from '../../core/model/entity-model.ts';
import { Problems, didYouMean } from './errors.ts';
import { AREA, ENTITY_NAME, FIELD_NAME, ICON, JS_WORDS, KERNEL_FIELDS, MODULE_ID, PREFIX, RESERVED_ENTITIES, RESERVED_MODULES, SQL_WORDS, capitalize, pluralSegment, words } from './names.ts';
import { KERNEL_PATHS, type Project } from './project.ts';
import type { EntitySpec, ModuleSpec } from './spec.ts';

const pascal = (s: string) => words(s).map(capitalize).join('');
const camelCase = (s: string) => {
  const p = pascal(s);
  return p.charAt(0).toLowerCase() + p.slice(1);
};
const RANGE_TYPES = new Set(['integer', 'decimal', 'date', 'datetime']);
const MAX_IDENTIFIER = 63;

export interface ValidationContext {
  project: Project;
  /** --add-entity: the module's manifest as installed */
  existing?: Manifest;
  prefix: string;
}

export function validateSpec(spec: ModuleSpec, ctx: ValidationContext, problems = new Problems()): void {
  const { project, existing } = ctx;
  const id = spec.module;
  if (!MODULE_ID.test(id)) {
    problems.add('module id', `"${id}" must be 2-31 lower-case letters, digits and dashes, starting with a letter${/[A-Z_ ]/.test(id) ? ` (e.g. "${words(id).join('-')}")` : ''}`);
  } else if (RESERVED_MODULES.has(id)) {
    problems.add('module id', `"${id}" is reserved by the kernel (${[...RESERVED_MODULES].join(', ')})`);
  }
  if (spec.area !== undefined && !AREA.test(spec.area)) problems.add('--area', `"${spec.area}" must be lower-case letters, digits and dashes, e.g. erp`);
  if (!PREFIX.test(ctx.prefix)) problems.add('--prefix', `"${ctx.prefix}" must be a path of lower-case segments, e.g. /api or /api/${id}`);
  if (spec.version !== undefined && !/^\d+\.\d+\.\d+$/.test(spec.version)) problems.add('version', `"${spec.version}" is not a semantic version like 1.0.0`);
  if (spec.name !== undefined && !spec.name.trim()) problems.add('--name', 'cannot be empty');
  const installed = new Set(project.manifests.map((l) => l.manifest.id));
  for (const dep of spec.dependsOn ?? []) {
    if (dep === id) problems.add('--depends-on', `module "${id}" cannot depend on itself`);
    else if (!installed.has(dep)) problems.add('--depends-on', `module "${dep}" is not installed${didYouMean(dep, installed)}`);
  }

  const own = new Map((existing?.entities ?? []).map((e) => [e.name, e]));
  const seen = new Set<string>();
  const paths = new Map<string, string>();
  for (const e of spec.entities) {
    validateEntity(e, problems);
    if (seen.has(e.name)) problems.add(e.name, 'is named twice');
    seen.add(e.name);
    if (own.has(e.name)) problems.add(e.name, `module "${id}" already has an entity "${e.name}"`);
    else {
      const other = project.entities.get(e.name);
      if (other && other.module !== id) problems.add(e.name, `entity "${e.name}" is already declared by module "${other.module}" (entity names are unique across modules)`);
    }
    const path = `${ctx.prefix}/${pluralSegment(e.name, e.plural)}`;
    const owner = project.routes.get(path);
    if (owner) problems.add(e.name, `the route ${path} is already served by module "${owner}"${e.plural ? '' : '; pick another --prefix or --plural'}`);
    else if (paths.has(path)) problems.add(e.name, `the route ${path} is also the route of ${paths.get(path)}`);
    else if (KERNEL_PATHS.some((k) => path === k || path.startsWith(`${k}/`))) problems.add(e.name, `the route ${path} is the kernel's`);
    paths.set(path, e.name);
    if (MODULE_ID.test(id)) {
      const table = tableName(id, { name: e.name, table: e.table } as never);
      if (table.length > MAX_IDENTIFIER) problems.add(e.name, `its table "${table}" is longer than PostgreSQL's ${MAX_IDENTIFIER} characters: shorten the module or entity name`);
    }
  }
  validateReferences(spec, ctx, own, problems);
  problems.throwIfAny();
}

function validateEntity(e: EntitySpec, problems: Problems): void {
  if (!ENTITY_NAME.test(e.name)) {
    const hint = pascal(e.name);
    problems.add(e.name, `entity names are singular PascalCase (2-41 letters and digits)${ENTITY_NAME.test(hint) ? `, e.g. "${hint}"` : ''}`);
  } else if (RESERVED_ENTITIES.has(e.name)) {
    problems.add(e.name, `"${e.name}" is a JavaScript global; pick a domain name (e.g. "${e.name}Item")`);
  }
  if (e.plural !== undefined && !ENTITY_NAME.test(e.plural)) problems.add(`${e.name} --plural`, `"${e.plural}" must be PascalCase like the entity, e.g. People`);
  if (e.icon !== undefined && !ICON.test(e.icon)) problems.add(`${e.name} --icon`, `"${e.icon}" must be a lower-case icon name, e.g. box`);
  if (e.label !== undefined && !e.label.trim()) problems.add(`${e.name} --label`, 'cannot be empty');
  const unreadable = problems.list.some((p) => p.where === e.name || p.where.startsWith(`${e.name}.`));
  if (!e.fields.length && !unreadable) problems.add(e.name, "has no fields: --fields 'name:string(120)!' after --entity");
  const columns = new Map<string, string>();
  const names = new Set(e.fields.map((f) => f.name));
  for (const { name, field } of e.fields) {
    const at = `${e.name}.${name}`;
    if (!FIELD_NAME.test(name)) {
      const hint = camelCase(name);
      problems.add(at, `field names are camelCase (letters and digits, up to 41)${FIELD_NAME.test(hint) ? `, e.g. "${hint}"` : ''}`);
      continue;
    }
    if (KERNEL_FIELDS.has(name)) problems.add(at, `reserved: ${KERNEL_FIELDS.get(name)}`);
    else if (name === 'companyId' && e.scope === 'company') problems.add(at, 'reserved: a company-scoped entity gets "companyId" from the company context (use --scope tenant to declare it yourself)');
    else if (JS_WORDS.has(name)) problems.add(at, `"${name}" is a JavaScript reserved word or Object property; pick another name`);
    else if (SQL_WORDS.has(snake(name))) problems.add(at, `"${snake(name)}" is a reserved word of SQL; pick another name (e.g. "${name}Name" or "${name}Code")`);
    const column = snake(name);
    const kernelColumns = ['id', 'created_at', 'updated_at', 'version', ...(e.scope === 'company' ? ['company_id'] : [])];
    if (kernelColumns.includes(column) && !KERNEL_FIELDS.has(name) && name !== 'companyId') problems.add(at, `its column "${column}" is the kernel's`);
    if (columns.get(column) === name) problems.add(at, 'is given twice');
    else if (columns.has(column)) problems.add(at, `its column "${column}" is also the column of "${columns.get(column)}"`);
    columns.set(column, name);
    if (!(FieldTypes as readonly string[]).includes(field.type)) problems.add(at, `unknown type "${field.type}"; types: ${FieldTypes.join(', ')}`);
    if (field.filter && RANGE_TYPES.has(field.type)) {
      for (const suffix of ['From', 'To']) {
        if (names.has(`${name}${suffix}`)) problems.add(`${e.name}.${name}${suffix}`, `clashes with the range filter ${name}${suffix} of the filterable field "${name}"`);
      }
    }
    if (field.type === 'ref' && !name.endsWith('Id')) {
      problems.add(at, `a ref field is named after its target with an "Id" suffix, e.g. "${camelCase(field.entity ?? name)}Id"`);
    }
  }
  for (const col of e.listColumns ?? []) if (!names.has(col)) problems.add(`${e.name} --columns`, `unknown field "${col}"${didYouMean(col, names)}`);
  for (const key of e.unique ?? []) for (const col of key) if (!names.has(col)) problems.add(`${e.name} unique`, `unknown field "${col}"${didYouMean(col, names)}`);
}

/** Ref targets exist and every required chain of refs can be created (no required cycle). */
function validateReferences(spec: ModuleSpec, ctx: ValidationContext, own: Map<string, unknown>, problems: Problems): void {
  const local = new Map(spec.entities.map((e) => [e.name, e]));
  const known = [...local.keys(), ...own.keys(), ...ctx.project.entities.keys()];
  for (const e of spec.entities) {
    for (const { name, field } of e.fields) {
      if (field.type !== 'ref' || !field.entity) continue;
      const target = field.entity;
      if (!local.has(target) && !own.has(target) && !ctx.project.entities.has(target)) {
        problems.add(`${e.name}.${name}`, `ref(${target}): no entity "${target}" in this module or an installed one${didYouMean(target, known)}`);
      }
    }
  }
  // A required ref that leads back to its own entity means no first row can ever be created.
  const requiredTargets = (name: string) => (local.get(name)?.fields ?? []).filter((f) => f.field.type === 'ref' && f.field.required && local.has(f.field.entity!));
  for (const e of spec.entities) {
    const stack: Array<{ entity: string; path: string[] }> = [{ entity: e.name, path: [e.name] }];
    const visited = new Set<string>();
    while (stack.length) {
      const { entity, path } = stack.pop()!;
      for (const f of requiredTargets(entity)) {
        const next = f.field.entity!;
        if (next === e.name) {
          problems.add(`${e.name}`, `required refs form a cycle (${[...path, next].join(' → ')}): no first row could be created; make one of them optional`);
          stack.length = 0;
          break;
        }
        if (!visited.has(next)) {
          visited.add(next);
          stack.push({ entity: next, path: [...path, next] });
        }
      }
    }
  }
}
