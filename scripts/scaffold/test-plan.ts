// What the generated test of one entity does, as values the test template
// prints: sample bodies, the rows to create first (required refs), the list
// filter that tells two rows apart, the field to PATCH, the bad inputs.
import { relative, dirname } from 'node:path';
import type { ManifestEntity, ManifestField } from '../../core/manifest/format.ts';
import { plural } from '../../core/manifest/names.ts';
import { Problems } from './errors.ts';
import type { EntityPlan, ModulePlan } from './model.ts';
import { JS_WORDS, camel, inText } from './names.ts';
import type { Project } from './project.ts';
import { NO_SAMPLE, invalidValue, js, queryValue, sampleValue } from './samples.ts';

export interface TestView {
  module: string;
  entity: string;
  label: string;
  /** "asset", "sales order": for test names */
  noun: string;
  path: string;
  helperImport: string;
  viewCode: string;
  manageCode: string;
  companyScoped: boolean;
  /** JS object literals: the created row, a second row, the PUT replacement */
  samples: string[];
  /** what a response shows of each sample: SAMPLES[i], or shown(SAMPLES[i]) without write-only fields */
  expect: string[];
  /** JS array literal of the write-only (secret) fields, or null */
  writeOnly: string | null;
  /** statements creating the rows a new row must reference (inside references()) */
  refSteps: string[];
  /** JS object literal of the ref fields, e.g. "{ locationId: location.id }" */
  refs: string;
  list: { query: string; what: string; both: boolean };
  /** the PATCH body, and its entries for spreading into an expectation */
  patch: { body: string; entries: string };
  missing: string | null;
  invalid: { field: string; entries: string } | null;
  unknownField: string;
  ops: Record<'list' | 'get' | 'create' | 'replace' | 'update' | 'delete', string>;
}

interface Target {
  name: string;
  definition: ManifestEntity;
  path?: string;
  examples: Record<string, unknown>;
}

/** Names the generated test already uses where references() declares its rows. */
const TAKEN = new Set(['as', 'build', 'create', 'ctx', 'references', 'refs', 't', 'tenant']);

/** Fields a request body may carry: not internal, not read-only (option names the kernel may not know yet stay optional). */
const writable = (d: ManifestEntity) => Object.entries(d.fields).filter(([, f]) => !f.internal && !(f as { readOnly?: boolean }).readOnly);
const isSecret = (f: ManifestField) => (f as { secret?: boolean }).secret === true;

function samples(t: Target, n: number, problems: Problems, where: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, f] of writable(t.definition)) {
    if (f.type === 'ref' && f.required) continue;
    const v = sampleValue(name, f, n, t.examples[name]);
    if (v === NO_SAMPLE) {
      problems.add(
        `${where ? `${where} ` : ''}${t.name}.${name}`,
        `no sample value fits ${f.pattern ? `pattern ${JSON.stringify(f.pattern)}` : 'its length limits'} for the generated tests; give one: :example=<value>`,
      );
      continue;
    }
    out[name] = v;
  }
  return out;
}

/** Only what a create needs: required fields without a default. */
const minimal = (d: ManifestEntity, body: Record<string, unknown>) => Object.fromEntries(Object.entries(body).filter(([name]) => d.fields[name].required && d.fields[name].default === undefined));

/** A one-line object literal broken after its top-level commas into lines of up to 110 characters. */
function wrap(literal: string, indent: string): string {
  const parts: string[] = [];
  let depth = 0;
  let quoted = false;
  let start = 0;
  for (let i = 0; i < literal.length; i++) {
    const c = literal[i];
    if (quoted) {
      if (c === '\\') i++;
      else if (c === "'") quoted = false;
      continue;
    }
    if (c === "'") quoted = true;
    else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') depth--;
    else if (c === ',' && depth === 1) {
      parts.push(literal.slice(start, i + 1));
      start = i + 2;
    }
  }
  parts.push(literal.slice(start));
  const lines: string[] = [];
  for (const part of parts) {
    const last = lines.length - 1;
    if (last >= 0 && lines[last].length + part.length + 1 <= 110) lines[last] += ` ${part}`;
    else lines.push(part);
  }
  return lines.join(`\n${indent}`);
}

export type TestModule = Pick<ModulePlan, 'id' | 'opPrefix' | 'viewCode' | 'manageCode'>;

export function planTest(entity: EntityPlan, module: TestModule, local: Map<string, EntityPlan>, project: Project, testFile: string): { view: TestView; problems: Problems } {
  const problems = new Problems();
  const targetOf = (name: string): Target | undefined => {
    const l = local.get(name);
    if (l) return { name, definition: l.definition, path: l.path, examples: l.examples };
    const installed = project.entities.get(name);
    return installed && { name, definition: installed.entity, path: installed.path, examples: {} };
  };
  const self: Target = { name: entity.name, definition: entity.definition, path: entity.path, examples: entity.examples };
  const rows = [1, 2, 3].map((n) => samples(self, n, problems, ''));

  // Rows to create first, dependencies before dependants; one row per target entity.
  const steps: string[] = [];
  const made = new Map<string, string>();
  const refsOf = (t: Target): string[] =>
    writable(t.definition)
      .filter(([, f]) => f.type === 'ref' && f.required)
      .map(([field, f]) => `${field}: ${create(f, `${t.name}.${field}`)}`);
  const create = (f: ManifestField, at: string): string => {
    const name = f.entity!;
    if (made.has(name)) return made.get(name)!;
    if (name === 'Company' && !project.entities.get(name)?.path) {
      made.set(name, 'tenant.companyId');
      return 'tenant.companyId';
    }
    const lower = camel(name.charAt(0).toLowerCase() + name.slice(1));
    const variable = TAKEN.has(lower) || JS_WORDS.has(lower) ? `${lower}Row` : lower;
    if (name === 'User' && !project.entities.get(name)?.path) {
      steps.push(`const ${variable} = await ctx.user(tenant, { codes: [] });`);
      made.set(name, `${variable}.id`);
      return `${variable}.id`;
    }
    const t = targetOf(name);
    if (!t?.path) {
      problems.add(at, `is a required ref to ${name}, which has no create route the generated test could use; make it optional`);
      made.set(name, "'unknown'");
      return "'unknown'";
    }
    made.set(name, `${variable}.id`);
    const refs = refsOf(t);
    const body = js(minimal(t.definition, samples(t, 1, problems, 'referenced')));
    const payload = !refs.length ? body : body === '{}' ? `{ ${refs.join(', ')} }` : `${body.slice(0, -2)}, ${refs.join(', ')} }`;
    steps.push(`const ${variable} = await create(tenant, '${t.path}', ${payload});`);
    return `${variable}.id`;
  };
  const refs = refsOf(self);

  const fields = writable(entity.definition);
  const differs = (name: string, a: number, b: number) => JSON.stringify(rows[a][name]) !== JSON.stringify(rows[b][name]);
  const filter = fields.find(([name, f]) => f.filter && !f.translatable && f.type !== 'json' && f.type !== 'ref' && name in rows[0] && differs(name, 0, 1));
  const searchable = fields.filter(([, f]) => f.search).map(([name]) => name);
  const search = searchable.find(
    (name) =>
      typeof rows[0][name] === 'string' &&
      searchable.every(
        (other) =>
          !String(rows[1][other] ?? '')
            .toLowerCase()
            .includes(String(rows[0][name]).toLowerCase()),
      ),
  );
  const refFilter = fields.find(([, f]) => f.filter && f.type === 'ref' && f.required);
  let list: TestView['list'];
  if (filter) list = { query: `${filter[0]}=${encodeURIComponent(queryValue(rows[0][filter[0]]))}`, what: `filtered by ${filter[0]}`, both: false };
  else if (search) list = { query: `search=${encodeURIComponent(String(rows[0][search]))}`, what: `searched in ${search}`, both: false };
  else if (refFilter) list = { query: `${refFilter[0]}=\${refs.${refFilter[0]}}`, what: `filtered by ${refFilter[0]}`, both: true };
  else list = { query: 'size=10&sort=-createdAt', what: 'sorted', both: true };

  const patchField = fields.find(([name, f]) => f.type !== 'ref' && !isSecret(f) && name in rows[0] && differs(name, 0, 2))?.[0];
  const writeOnly = fields.filter(([, f]) => isSecret(f)).map(([name]) => name);
  const patch = patchField ? { [patchField]: rows[0][patchField] } : {};
  const missing = fields.find(([, f]) => f.required && f.default === undefined && !f.translatable)?.[0] ?? fields.find(([, f]) => f.required && f.translatable)?.[0] ?? null;
  const invalidField = fields.find(([, f]) => invalidValue(f) !== NO_SAMPLE);
  let unknownField = 'unknownField';
  while (unknownField in entity.definition.fields) unknownField += 'X';
  if (!patchField) problems.add(entity.name, 'has no field the generated test could PATCH');

  const helper = relative(dirname(testFile), project.paths.helperFile).split('\\').join('/');
  const view: TestView = {
    module: module.id,
    entity: entity.name,
    label: entity.label,
    noun: inText(entity.label),
    path: entity.path,
    helperImport: helper.startsWith('.') ? helper : `./${helper}`,
    viewCode: module.viewCode,
    manageCode: module.manageCode,
    companyScoped: entity.definition.scope === 'company',
    samples: rows.map((r) => wrap(js(r), '    ')),
    expect: [0, 1, 2].map((i) => (writeOnly.length ? `shown(SAMPLES[${i}])` : `SAMPLES[${i}]`)),
    writeOnly: writeOnly.length ? js(writeOnly) : null,
    refSteps: steps,
    refs: refs.length ? `{ ${refs.join(', ')} }` : '{}',
    list,
    patch: { body: js(patch), entries: js(patch).slice(2, -2) },
    missing,
    invalid: invalidField ? { field: invalidField[0], entries: js({ [invalidField[0]]: invalidValue(invalidField[1]) }).slice(2, -2) } : null,
    unknownField,
    ops: {
      // the kernel names a list by its entity's plural (crud-routes.ts), whatever the path says
      list: `${module.opPrefix}List${plural(entity.name)}`,
      get: `${module.opPrefix}Get${entity.name}`,
      create: `${module.opPrefix}Create${entity.name}`,
      replace: `${module.opPrefix}Replace${entity.name}`,
      update: `${module.opPrefix}Update${entity.name}`,
      delete: `${module.opPrefix}Delete${entity.name}`,
    },
  };
  return { view, problems };
}
