// The field mini-language of --fields and of spec files:
//
//   name:type[(args)][flags][:modifier...]      fields separated by ","
//
//   sku:string(64)!#^~:pattern="^[A-Z0-9-]+$"
//   price:decimal(12,2)!^=:min=0
//   unit:enum(piece|kg|hour)=:default=piece
//   categoryId:ref(Category)=:onDelete=cascade:label="Product group"
//
// It says everything a manifest field can (FieldSchema in core/manifest/format.ts);
// the help text of scripts/scaffold.ts documents it for users.
import { FieldSchema, FieldTypes, type ManifestField } from '../../core/manifest/format.ts';
import { didYouMean, type Problems } from './errors.ts';

export interface FieldSpec {
  name: string;
  /** the manifest definition, without a label unless the spec gave one */
  field: ManifestField;
  /** shown as a list column (console hint) */
  list?: boolean;
  /** a valid value the generated tests use when none can be derived (scaffolder only) */
  example?: unknown;
}

const FLAGS: Record<string, keyof ManifestField> = {
  '!': 'required',
  '*': 'translatable',
  '~': 'search',
  '^': 'sort',
  '=': 'filter',
  '#': 'unique',
};

// The modifiers come from the kernel's FieldSchema, so the syntax says whatever a
// manifest field can, options added later included: every boolean option is a
// switch (":secret"), every other one a key=value (":widget=key-value").
type PropSchema = { type?: string; enum?: string[]; anyOf?: Array<{ const?: string }> };
const PROPS = FieldSchema.properties as unknown as Record<string, PropSchema>;
const ALIASES: Record<string, string> = { sortable: 'sort', searchable: 'search', filterable: 'filter', indexed: 'index', min: 'minimum', max: 'maximum' };
/** Said by the type itself: string(120), enum(a|b), ref(Entity). */
const BY_TYPE = new Set(['type', 'entity']);

export const SWITCHES = [...Object.keys(PROPS).filter((k) => PROPS[k].type === 'boolean'), 'list'];
export const OPTIONS = [...Object.keys(PROPS).filter((k) => PROPS[k].type !== 'boolean' && !BY_TYPE.has(k)), 'example'];
const MODIFIERS = [...SWITCHES, ...OPTIONS, ...Object.keys(ALIASES)];

/** The allowed words of an option given as a union of literals (onDelete: restrict|cascade|setNull). */
const literals = (p: PropSchema | undefined) => p?.enum ?? (p?.anyOf?.every((a) => a.const !== undefined) ? p.anyOf.map((a) => a.const!) : undefined);

const TYPE_NAMES: readonly string[] = FieldTypes;

interface Token {
  text: string;
  quoted: boolean;
}

/**
 * Splits on `sep` outside parentheses and quotes ("..." or '...', backslash
 * escapes inside). Quotes stay in the pieces; unquote() removes them.
 */
function splitTop(text: string, sep: string): string[] | string {
  const out: string[] = [];
  let depth = 0;
  let quote = '';
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = '';
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '(') depth++;
    else if (c === ')') {
      if (--depth < 0) return `unbalanced ")" at character ${i + 1}`;
    } else if (c === sep && depth === 0) {
      out.push(text.slice(start, i));
      start = i + 1;
    }
  }
  if (quote) return `unterminated ${quote} quote`;
  if (depth > 0) return 'unbalanced "("';
  out.push(text.slice(start));
  return out;
}

function unquote(raw: string): Token {
  const text = raw.trim();
  const q = text[0];
  if ((q === '"' || q === "'") && text.length >= 2 && text.at(-1) === q) {
    return { text: text.slice(1, -1).replace(/\\(["'\\])/g, '$1'), quoted: true };
  }
  return { text, quoted: false };
}

/** "name:string(120)!,price:decimal(12,2)" → one FieldSpec per field. */
export function parseFieldList(text: string, where: string, problems: Problems): FieldSpec[] {
  const parts = splitTop(text, ',');
  if (typeof parts === 'string') {
    problems.add(where, `${parts} in "${text}"`);
    return [];
  }
  const fields: FieldSpec[] = [];
  for (const part of parts.map((p) => p.trim())) {
    if (!part) {
      problems.add(where, 'an empty field (two commas in a row, or a trailing comma)');
      continue;
    }
    const colon = part.indexOf(':');
    if (colon < 0) {
      problems.add(`${where}.${part}`, `needs a type: "${part}:string", "${part}:integer", ... (types: ${TYPE_NAMES.join(', ')})`);
      continue;
    }
    const name = part.slice(0, colon).trim();
    const field = parseFieldDefinition(name, part.slice(colon + 1), `${where}.${name}`, problems);
    if (field) fields.push(field);
  }
  return fields;
}

/** "string(120)!~:label=Name" (what follows "name:") → a FieldSpec. */
export function parseFieldDefinition(name: string, text: string, where: string, problems: Problems): FieldSpec | undefined {
  const parts = splitTop(text, ':');
  if (typeof parts === 'string') {
    problems.add(where, `${parts} in "${text}"`);
    return undefined;
  }
  const [typeToken, ...modifiers] = parts.map((p) => p.trim());
  const m = /^([A-Za-z]+)(?:\((.*)\))?([!*~^=#]*)$/s.exec(typeToken);
  if (!m) {
    problems.add(where, `"${typeToken}" is not a type; write type(args) then flags, e.g. string(120)!^ (types: ${TYPE_NAMES.join(', ')})`);
    return undefined;
  }
  const [, type, args, flags] = m;
  if (!TYPE_NAMES.includes(type)) {
    problems.add(where, `unknown type "${type}"${didYouMean(type, TYPE_NAMES)}; types: ${TYPE_NAMES.join(', ')}`);
    return undefined;
  }
  const spec: FieldSpec = { name, field: { type: type as ManifestField['type'] } };
  const field = spec.field as Record<string, unknown>;
  typeArguments(spec.field, args, where, problems);
  for (const flag of flags) field[FLAGS[flag]] = true;
  const given = new Set<string>();
  for (const raw of modifiers) {
    if (!raw) {
      problems.add(where, 'an empty modifier (two colons in a row)');
      continue;
    }
    if (/^[!*~^=#]+$/.test(raw)) {
      for (const flag of raw) field[FLAGS[flag]] = true;
      continue;
    }
    const eq = raw.indexOf('=');
    const written = (eq < 0 ? raw : raw.slice(0, eq)).trim();
    const key = ALIASES[written] ?? written;
    if (eq < 0) {
      if (!SWITCHES.includes(key)) {
        const hint = OPTIONS.includes(key) ? ` ("${key}" takes a value: ${key}=...)` : didYouMean(written, MODIFIERS);
        problems.add(where, `unknown modifier "${written}"${hint}`);
      } else if (key === 'list') spec.list = true;
      else field[key] = true;
      continue;
    }
    if (!OPTIONS.includes(key)) {
      const hint = SWITCHES.includes(key) ? ` ("${key}" is a switch: write :${key})` : didYouMean(written, MODIFIERS);
      problems.add(where, `unknown option "${written}="${hint}; options: ${OPTIONS.join(', ')}`);
      continue;
    }
    if (given.has(key)) problems.add(where, `"${key}" is given twice`);
    given.add(key);
    option(spec, key, unquote(raw.slice(eq + 1)), where, problems);
  }
  return spec;
}

function typeArguments(f: ManifestField, args: string | undefined, where: string, problems: Problems): void {
  if (args === undefined) {
    if (f.type === 'enum') problems.add(where, 'an enum lists its values: enum(draft|sent|paid)');
    if (f.type === 'ref') problems.add(where, 'a ref names its target entity: ref(Category)');
    return;
  }
  const a = args.trim();
  switch (f.type) {
    case 'string':
    case 'text':
      if (!/^\d+$/.test(a) || Number(a) < 1) problems.add(where, `${f.type}(${a}): the argument is the maximum length, a positive integer`);
      else f.maxLength = Number(a);
      return;
    case 'decimal': {
      const d = /^(\d+)\s*(?:,\s*(\d+))?$/.exec(a);
      if (!d) {
        problems.add(where, `decimal(${a}): write decimal(precision) or decimal(precision,scale), e.g. decimal(12,2)`);
        return;
      }
      f.precision = Number(d[1]);
      if (d[2] !== undefined) f.scale = Number(d[2]);
      return;
    }
    case 'enum': {
      const values = a.split('|').map((v) => unquote(v).text);
      if (values.some((v) => !v)) problems.add(where, `enum(${a}): values are separated by "|" and cannot be empty`);
      else f.values = values;
      return;
    }
    case 'ref':
      f.entity = a;
      return;
    default:
      problems.add(where, `${f.type} takes no arguments ("${f.type}(${a})")`);
  }
}

function option(spec: FieldSpec, key: string, value: Token, where: string, problems: Problems): void {
  const f = spec.field as Record<string, unknown>;
  const bad = (what: string) => {
    problems.add(where, `${key}=${value.text}: ${what}`);
  };
  if (key === 'default' || key === 'example') {
    const v = typedValue(spec.field.type, value, where, key, problems);
    if (v !== undefined) {
      if (key === 'default') f.default = v;
      else spec.example = v;
    }
    return;
  }
  if (key === 'values') {
    const values = value.text.split('|');
    if (values.some((v) => !v)) bad('values are separated by "|" and cannot be empty');
    else f.values = values;
    return;
  }
  const prop = PROPS[key];
  const words = literals(prop);
  if (words) {
    if (words.includes(value.text)) f[key] = value.text;
    else bad(`one of ${words.join(', ')}${didYouMean(value.text, words)}`);
  } else if (prop.type === 'integer') {
    if (/^\d+$/.test(value.text)) f[key] = Number(value.text);
    else bad('must be a whole number');
  } else if (prop.type === 'number') {
    if (/^-?\d+(\.\d+)?$/.test(value.text)) f[key] = Number(value.text);
    else bad('must be a number');
  } else {
    f[key] = value.text;
  }
}

/** A default or example in the field's own type: default=0 is a number for integers, text for strings. */
function typedValue(type: ManifestField['type'], value: Token, where: string, key: string, problems: Problems): unknown {
  const { text, quoted } = value;
  if (!quoted && text === 'null') return null;
  const bad = (what: string) => {
    problems.add(where, `${key}=${text}: ${what}`);
    return undefined;
  };
  switch (type) {
    case 'integer':
      return /^-?\d+$/.test(text) ? Number(text) : bad('must be an integer');
    case 'decimal':
      return /^-?\d+(\.\d+)?$/.test(text) ? text : bad('must be a decimal number, e.g. 0.00');
    case 'boolean':
      return text === 'true' ? true : text === 'false' ? false : bad('must be true or false');
    case 'json':
      if (quoted) return text;
      try {
        return JSON.parse(text);
      } catch {
        return bad('must be JSON (quote plain text: "...")');
      }
    default:
      return text;
  }
}
