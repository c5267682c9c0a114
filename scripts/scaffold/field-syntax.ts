// The field mini-language of --fields and of spec files:
//
//   name:type[(args)][flags][:modifier...]      fields separated by ","
//
//   sku:string(64)!#^~:pattern="^[A-Z0-9-]+$"
//   price:decimal(12,2)!^=:min=0
//   unit:enum(piece|kg|hour)=:default=piece
//   categoryId:ref(Category)=:onDelete=cascade:label="Product group"
//
// It says everything a manifest field can (FieldSchema in core/manifest/schema.ts);
// the help text of scripts/scaffold.ts documents it for users.
import { FieldTypes, type ManifestField } from '../../core/manifest/schema.ts';
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

export const FLAGS: Record<string, keyof ManifestField> = {
  '!': 'required', '*': 'translatable', '~': 'search', '^': 'sort', '=': 'filter', '#': 'unique',
};

const SWITCHES: Record<string, keyof ManifestField | 'list'> = {
  required: 'required', translatable: 'translatable', sort: 'sort', sortable: 'sort', search: 'search', searchable: 'search',
  filter: 'filter', filterable: 'filter', unique: 'unique', index: 'index', indexed: 'index', internal: 'internal', list: 'list',
};

const OPTIONS = ['label', 'description', 'default', 'min', 'minimum', 'max', 'maximum', 'minLength', 'maxLength', 'pattern',
  'precision', 'scale', 'values', 'onDelete', 'widget', 'example'] as const;
type Option = (typeof OPTIONS)[number];

const ON_DELETE = ['restrict', 'cascade', 'setNull'] as const;
const TYPE_NAMES: readonly string[] = FieldTypes;

interface Token { text: string; quoted: boolean }

/**
 * Splits on `sep` outside parentheses and quotes ("..." or '...', backslash
 * escapes inside). Quotes stay in the pieces; unquote() removes them.
 */
export function splitTop(text: string, sep: string): string[] | string {
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
    else if (c === ')') { if (--depth < 0) return `unbalanced ")" at character ${i + 1}`; }
    else if (c === sep && depth === 0) { out.push(text.slice(start, i)); start = i + 1; }
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
  if (typeof parts === 'string') { problems.add(where, `${parts} in "${text}"`); return []; }
  const fields: FieldSpec[] = [];
  for (const part of parts.map((p) => p.trim())) {
    if (!part) { problems.add(where, 'an empty field (two commas in a row, or a trailing comma)'); continue; }
    const colon = part.indexOf(':');
    if (colon < 0) { problems.add(`${where}.${part}`, `needs a type: "${part}:string", "${part}:integer", ... (types: ${TYPE_NAMES.join(', ')})`); continue; }
    const name = part.slice(0, colon).trim();
    const field = parseFieldDefinition(name, part.slice(colon + 1), `${where}.${name}`, problems);
    if (field) fields.push(field);
  }
  return fields;
}

/** "string(120)!~:label=Name" (what follows "name:") → a FieldSpec. */
export function parseFieldDefinition(name: string, text: string, where: string, problems: Problems): FieldSpec | undefined {
  const parts = splitTop(text, ':');
  if (typeof parts === 'string') { problems.add(where, `${parts} in "${text}"`); return undefined; }
  const [typeToken, ...modifiers] = parts.map((p) => p.trim());
  const m = /^([A-Za-z]+)(?:\((.*)\))?([!*~^=#]*)$/s.exec(typeToken);
  if (!m) { problems.add(where, `"${typeToken}" is not a type; write type(args) then flags, e.g. string(120)!^ (types: ${TYPE_NAMES.join(', ')})`); return undefined; }
  const [, type, args, flags] = m;
  if (!TYPE_NAMES.includes(type)) { problems.add(where, `unknown type "${type}"${didYouMean(type, TYPE_NAMES)}; types: ${TYPE_NAMES.join(', ')}`); return undefined; }
  const spec: FieldSpec = { name, field: { type: type as ManifestField['type'] } };
  const field = spec.field as Record<string, unknown>;
  typeArguments(spec.field, args, where, problems);
  for (const flag of flags) field[FLAGS[flag]] = true;
  const given = new Set<string>();
  for (const raw of modifiers) {
    if (!raw) { problems.add(where, 'an empty modifier (two colons in a row)'); continue; }
    if (/^[!*~^=#]+$/.test(raw)) { for (const flag of raw) field[FLAGS[flag]] = true; continue; }
    const eq = raw.indexOf('=');
    const key = (eq < 0 ? raw : raw.slice(0, eq)).trim();
    if (eq < 0) {
      const target = SWITCHES[key];
      if (!target) { problems.add(where, `unknown modifier "${key}"${didYouMean(key, [...Object.keys(SWITCHES), ...OPTIONS])}`); continue; }
      if (target === 'list') spec.list = true; else field[target] = true;
      continue;
    }
    if (!(OPTIONS as readonly string[]).includes(key)) {
      problems.add(where, `unknown option "${key}="${didYouMean(key, [...OPTIONS, ...Object.keys(SWITCHES)])}; options: ${OPTIONS.join(', ')}`);
      continue;
    }
    if (given.has(key)) problems.add(where, `"${key}" is given twice`);
    given.add(key);
    option(spec, key as Option, unquote(raw.slice(eq + 1)), where, problems);
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
      if (!d) { problems.add(where, `decimal(${a}): write decimal(precision) or decimal(precision,scale), e.g. decimal(12,2)`); return; }
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

function option(spec: FieldSpec, key: Option, value: Token, where: string, problems: Problems): void {
  const f = spec.field;
  const integer = (min: number) => {
    if (/^\d+$/.test(value.text) && Number(value.text) >= min) return Number(value.text);
    problems.add(where, `${key}=${value.text}: must be an integer >= ${min}`);
    return undefined;
  };
  const number = () => {
    if (/^-?\d+(\.\d+)?$/.test(value.text)) return Number(value.text);
    problems.add(where, `${key}=${value.text}: must be a number`);
    return undefined;
  };
  switch (key) {
    case 'label': f.label = value.text; return;
    case 'description': f.description = value.text; return;
    case 'pattern': f.pattern = value.text; return;
    case 'widget': f.widget = value.text; return;
    case 'min': case 'minimum': f.minimum = number(); return;
    case 'max': case 'maximum': f.maximum = number(); return;
    case 'minLength': f.minLength = integer(0); return;
    case 'maxLength': f.maxLength = integer(1); return;
    case 'precision': f.precision = integer(1); return;
    case 'scale': f.scale = integer(0); return;
    case 'values': {
      const values = value.text.split('|');
      if (values.some((v) => !v)) problems.add(where, 'values=: values are separated by "|" and cannot be empty');
      else f.values = values;
      return;
    }
    case 'onDelete':
      if ((ON_DELETE as readonly string[]).includes(value.text)) f.onDelete = value.text as ManifestField['onDelete'];
      else problems.add(where, `onDelete=${value.text}: one of ${ON_DELETE.join(', ')}${didYouMean(value.text, ON_DELETE)}`);
      return;
    case 'default': {
      const v = typedValue(f.type, value, where, 'default', problems);
      if (v !== undefined) f.default = v as ManifestField['default'];
      return;
    }
    case 'example': spec.example = typedValue(f.type, value, where, 'example', problems); return;
  }
}

/** A default or example in the field's own type: default=0 is a number for integers, text for strings. */
function typedValue(type: ManifestField['type'], value: Token, where: string, key: string, problems: Problems): unknown {
  const { text, quoted } = value;
  if (!quoted && text === 'null') return null;
  const bad = (what: string) => { problems.add(where, `${key}=${text}: ${what}`); return undefined; };
  switch (type) {
    case 'integer': return /^-?\d+$/.test(text) ? Number(text) : bad('must be an integer');
    case 'decimal': return /^-?\d+(\.\d+)?$/.test(text) ? text : bad('must be a decimal number, e.g. 0.00');
    case 'boolean': return text === 'true' ? true : text === 'false' ? false : bad('must be true or false');
    case 'json':
      if (quoted) return text;
      try { return JSON.parse(text); } catch { return bad('must be JSON (quote plain text: "...")'); }
    default: return text;
  }
}
