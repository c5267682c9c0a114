// What to scaffold: a ModuleSpec, built from command-line arguments, from a
// --spec JSON file, or both (the file first, then the flags on top).
//
// Spec file:
//   { "module": "assets", "name"?, "description"?, "version"?, "area"?, "prefix"?, "dependsOn"?,
//     "entities": [{ "name": "Asset", "label"?, "plural"?, "icon"?, "scope"?, "description"?, "table"?,
//                    "listColumns"?, "defaultSort"?, "unique"?,
//                    "fields": "tag:string(40)!#,..." | { "tag": "string(40)!#", "value": { "type": "decimal", ... } } }] }
// A field is either the mini-language of field-syntax.ts or a manifest field
// object (plus "list" and "example", which only the scaffolder reads).
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { Ajv } from 'ajv';
import { Type } from 'typebox';
import { FieldSchema } from '../../core/manifest/format.ts';
import { Problems, badInput } from './errors.ts';
import { parseFieldDefinition, parseFieldList, type FieldSpec } from './field-syntax.ts';
import type { CliArgs } from './args.ts';

export type Scope = 'company' | 'tenant';

export interface EntitySpec {
  name: string;
  label?: string;
  /** plural name for URL and labels when the English rule fails: People */
  plural?: string;
  icon?: string;
  scope: Scope;
  description?: string;
  table?: string;
  listColumns?: string[];
  defaultSort?: string;
  unique?: string[][];
  fields: FieldSpec[];
}

export interface ModuleSpec {
  module: string;
  name?: string;
  description?: string;
  version?: string;
  area?: string;
  prefix?: string;
  dependsOn?: string[];
  entities: EntitySpec[];
}

const Str = Type.String();
const Opt = Type.Optional;

const SpecEntity = Type.Object(
  {
    name: Str,
    label: Opt(Str),
    plural: Opt(Str),
    icon: Opt(Str),
    scope: Opt(Type.Union([Type.Literal('company'), Type.Literal('tenant')])),
    description: Opt(Str),
    table: Opt(Str),
    listColumns: Opt(Type.Array(Str)),
    defaultSort: Opt(Str),
    unique: Opt(Type.Array(Type.Array(Str))),
    fields: Type.Union([Str, Type.Record(Str, Type.Unknown())]),
  },
  { additionalProperties: false },
);

const SpecFile = Type.Object(
  {
    $schema: Opt(Str),
    module: Opt(Str),
    name: Opt(Str),
    description: Opt(Str),
    version: Opt(Str),
    area: Opt(Str),
    prefix: Opt(Str),
    dependsOn: Opt(Type.Array(Str)),
    entities: Opt(Type.Array(SpecEntity)),
  },
  { additionalProperties: false },
);

/** A manifest field object, plus what only the scaffolder reads. */
const SpecField = Type.Object({ ...FieldSchema.properties, list: Opt(Type.Boolean()), example: Opt(Type.Unknown()) }, { additionalProperties: false });

const ajv = new Ajv({ allErrors: false, strict: false });
const validateSpec = ajv.compile(SpecFile);
const validateField = ajv.compile(SpecField);

type SpecFileData = { module?: string; entities?: Array<Record<string, unknown> & { name: string; fields: string | Record<string, unknown> }> } & Record<string, unknown>;

function ajvProblem(errors: typeof validateSpec.errors): string {
  const e = errors![0];
  const extra = e.keyword === 'additionalProperties' ? ` "${(e.params as { additionalProperty: string }).additionalProperty}"` : '';
  return `${e.instancePath || '/'} ${e.message}${extra}`;
}

async function readSpecFile(path: string): Promise<SpecFileData> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw badInput('--spec', `cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw badInput(path, `is not valid JSON: ${(err as Error).message}`);
  }
  if (!validateSpec(data)) throw badInput(path, ajvProblem(validateSpec.errors));
  return data as SpecFileData;
}

function entityFromFile(e: Record<string, unknown> & { name: string; fields: string | Record<string, unknown> }, where: string, problems: Problems): EntitySpec {
  const fields: FieldSpec[] = [];
  if (typeof e.fields === 'string') fields.push(...parseFieldList(e.fields, e.name, problems));
  else {
    for (const [name, value] of Object.entries(e.fields)) {
      const at = `${e.name}.${name}`;
      if (typeof value === 'string') {
        const f = parseFieldDefinition(name, value, at, problems);
        if (f) fields.push(f);
      } else if (validateField(value)) {
        const { list, example, ...field } = value as unknown as Record<string, unknown>;
        fields.push({ name, field: field as FieldSpec['field'], ...(list ? { list: true } : {}), ...(example !== undefined ? { example } : {}) });
      } else {
        problems.add(at, `${ajvProblem(validateField.errors)} (in ${where})`);
      }
    }
  }
  const { name, scope, ...rest } = e as unknown as Omit<EntitySpec, 'fields'> & { scope?: Scope };
  const { label, plural, icon, description, table, listColumns, defaultSort, unique } = rest;
  return { name, label, plural, icon, scope: scope ?? 'company', description, table, listColumns, defaultSort, unique, fields };
}

/**
 * The spec from a --spec file (if any) and the command line. Syntax problems in
 * fields come back with it, so validation can report them together with its own.
 */
export async function buildSpec(args: CliArgs): Promise<{ spec: ModuleSpec; problems: Problems }> {
  const problems = new Problems();
  const file = args.spec ? await readSpecFile(args.spec) : undefined;
  const where = args.spec ? basename(args.spec) : '';
  const module = args.module ?? file?.module;
  if (args.module && file?.module && args.module !== file.module) {
    problems.add('module', `the command names module "${args.module}", the spec file "${file.module}"`);
  }
  if (!module) problems.add('module', 'name the module: npm run scaffold -- <module> --entity <Name> ...');
  const entities = (file?.entities ?? []).map((e) => entityFromFile(e, where, problems));
  for (const e of args.entities) {
    const fields = e.fields.flatMap((text) => parseFieldList(text, e.name, problems));
    entities.push({
      name: e.name,
      label: e.label,
      plural: e.plural,
      icon: e.icon,
      scope: e.scope ?? 'company',
      listColumns: e.columns,
      defaultSort: e.defaultSort,
      fields,
    });
  }
  if (!module || !entities.length) {
    if (module) problems.add('--entity', "name at least one entity: --entity <Name> --fields 'name:string(120)!'");
    problems.throwIfAny();
  }
  const pick = <K extends keyof ModuleSpec>(k: K): ModuleSpec[K] | undefined => (args[k as keyof CliArgs] ?? file?.[k]) as ModuleSpec[K] | undefined;
  const spec: ModuleSpec = {
    module: module!,
    name: pick('name'),
    description: pick('description'),
    version: pick('version'),
    area: pick('area'),
    prefix: pick('prefix'),
    dependsOn: pick('dependsOn'),
    entities,
  };
  return { spec, problems };
}
