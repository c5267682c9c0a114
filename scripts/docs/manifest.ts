// docs/reference/manifest.md: every property of a module manifest, from
// manifests/manifest.schema.json (npm run manifest:schema writes it from the
// TypeBox declaration in core/manifest/format.ts). Each object in it becomes a
// section with a table of its properties; a property holding an object links to
// that object's section.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { banner, code, ROOT, slug, table } from './markdown.ts';

const SCHEMA = 'manifests/manifest.schema.json';

interface Schema {
  type?: string | string[];
  description?: string;
  title?: string;
  properties?: Record<string, Schema>;
  patternProperties?: Record<string, Schema>;
  additionalProperties?: boolean | Schema;
  required?: string[];
  items?: Schema;
  anyOf?: Schema[];
  enum?: unknown[];
  const?: unknown;
  [keyword: string]: unknown;
}

interface Section {
  /** where the object sits: entities[].fields.<name> */
  path: string;
  heading: string;
  schema: Schema;
}

const isObject = (s: Schema) => !!s.properties;
const link = (heading: string) => `[${heading}](#${slug(heading)})`;
/** Any key of an object keyed by name; its pattern, if any, is under "allowed values". */
const KEY = '<name>';

/** A section's heading; an object of a union is told apart by a required property the others lack ("routes[] with entity"). */
function headingOf(path: string, branch?: Schema, all: Schema[] = []): string {
  const own = branch && (branch.required ?? []).find((k) => all.every((b) => b === branch || !b.properties?.[k]));
  return `${code(path || 'manifest')}${branch ? (own ? ` with ${code(own)}` : ` (form ${all.indexOf(branch) + 1})`) : ''}`;
}

/** Every object schema under `schema`, as sections, depth first (each right after the one naming it). */
function sectionsOf(path: string, schema: Schema, out: Section[], heading = headingOf(path)): void {
  if (schema.anyOf?.every(isObject)) {
    for (const b of schema.anyOf) sectionsOf(path, b, out, headingOf(path, b, schema.anyOf));
    return;
  }
  if (schema.items) return sectionsOf(`${path}[]`, schema.items, out);
  const [pattern, value] = Object.entries(schema.patternProperties ?? {})[0] ?? [];
  if (pattern && value) return sectionsOf(`${path}.${KEY}`, value, out);
  if (!isObject(schema)) return;
  out.push({ path, heading, schema });
  for (const [key, sub] of Object.entries(schema.properties ?? {})) sectionsOf(path ? `${path}.${key}` : key, sub, out);
}

/** A schema's type: string, string[], a map by name, a link to an object's section (an array's: the section of its items), a union. */
function typeOf(path: string, s: Schema): string {
  const union = s.anyOf;
  if (union) return union.every((b) => 'const' in b) ? typeOf(path, { type: union[0].type }) : union.map((b) => (isObject(b) ? link(headingOf(path, b, union)) : typeOf(path, b))).join(' or ');
  if (s.items) return isObject(s.items) || s.items.anyOf?.every(isObject) ? typeOf(`${path}[]`, s.items) : `${typeOf(`${path}[]`, s.items)}[]`;
  const [pattern, value] = Object.entries(s.patternProperties ?? {})[0] ?? [];
  if (pattern && value) return Object.keys(value).length || pattern !== '^.*$' ? `map of ${KEY} → ${typeOf(`${path}.${KEY}`, value)}` : 'object';
  if (isObject(s)) return link(headingOf(path));
  if (s.enum) return 'string';
  return Array.isArray(s.type) ? s.type.join(' or ') : (s.type ?? 'any JSON');
}

const KEYWORDS: [string, (v: unknown) => string][] = [
  ['pattern', (v) => `pattern ${code(String(v))}`],
  ['format', (v) => `format ${v}`],
  ['minLength', (v) => (v === 1 ? 'not empty' : `at least ${v} characters`)],
  ['maxLength', (v) => `at most ${v} characters`],
  ['minimum', (v) => `at least ${v}`],
  ['maximum', (v) => `at most ${v}`],
  ['minItems', (v) => `at least ${v} item${v === 1 ? '' : 's'}`],
  ['uniqueItems', () => 'no repeats'],
];

/** What values a property allows beyond its type: enumerations, constants, patterns and bounds (its items' too). */
function allowed(s: Schema): string {
  const values = s.enum ?? (s.anyOf?.every((b) => 'const' in b) ? s.anyOf.map((b) => b.const) : 'const' in s ? [s.const] : undefined);
  const own = [values ? values.map((v) => code(JSON.stringify(v))).join(', ') : '', ...KEYWORDS.filter(([k]) => k in s).map(([k, show]) => show(s[k]))].filter(Boolean);
  const keys = Object.keys(s.patternProperties ?? {}).filter((p) => p !== '^.*$');
  const items = s.items && !isObject(s.items) ? allowed(s.items) : '';
  return [...own, ...keys.map((p) => `names match ${code(p)}`), items && `each: ${items}`].filter(Boolean).join('; ');
}

function sectionText({ path: at, heading, schema }: Section): string {
  const required = new Set(schema.required ?? []);
  const rows = Object.entries(schema.properties ?? {}).map(([key, s]) => {
    const path = at ? `${at}.${key}` : key;
    return [code(key), typeOf(path, s), required.has(key) ? 'yes' : '', allowed(s), s.description ?? ''];
  });
  const extra = schema.additionalProperties === false ? 'No other properties are allowed.' : '';
  return [`## ${heading}`, schema.description ?? '', table(['property', 'type', 'required', 'allowed values', 'description'], rows), extra].filter(Boolean).join('\n\n');
}

export function manifestPage(): string {
  const schema = JSON.parse(readFileSync(join(ROOT, SCHEMA), 'utf8')) as Schema;
  const sections: Section[] = [];
  sectionsOf('', schema, sections);
  return [
    banner(SCHEMA),
    `# ${schema.title ?? 'Module manifest'}`,
    `A module's manifest (\`manifests/<module>.json\`) is checked against this JSON Schema (${code(String(schema.$id))}) when the kernel loads it; editors validate against it through the manifest's \`$schema\`. The schema is written from the TypeBox declaration in [core/manifest/format.ts](../../core/manifest/format.ts) by \`npm run manifest:schema\`. Sections below are named by where the object sits: \`entities[]\` is an item of \`entities\`, \`fields.<name>\` the value of any key of \`fields\`.`,
    ...sections.map(sectionText),
  ].join('\n\n');
}
