// The console's side of a field: how a value reads in a list or detail page,
// what a form input holds, and how a submitted form becomes the API's JSON body.
// Field descriptions come from GET /api/meta; the API still validates every value,
// so a value the form cannot convert is passed on as typed and the API's 400
// names it beside its field.
import type { Say } from './texts.ts';
import { cronWords } from './cron-words.ts';

export interface MetaField {
  name: string;
  type: 'string' | 'text' | 'integer' | 'decimal' | 'boolean' | 'date' | 'datetime' | 'enum' | 'json' | 'ref';
  label: string;
  widget: string;
  required: boolean;
  readOnly: boolean;
  writeOnly: boolean;
  translatable: boolean;
  filter: boolean;
  sort: boolean;
  search: boolean;
  values?: string[];
  entity?: string;
  maxLength?: number;
  /** what a create that omits the field stores */
  default?: string | number | boolean | null;
  /** the section of the record page it is shown in */
  group?: string;
  /** enum: how each value reads, in the user's language */
  valueLabels?: Record<string, string>;
  /** an amount of money: the field holding its currency */
  currency?: string;
}

/** A list of the rows pointing at a record (GET /api/meta, http/meta-record.ts). */
export interface MetaRelated {
  entity: string;
  field: string;
  label: string | null;
  /** the list route, {id} standing for the record's id */
  path: string;
  /** the rows live under the record's path: edited on its page */
  nested: boolean;
  /** a route taking a file upload that makes such a row */
  upload: string | null;
}

/** A custom route of the entity's rows (or collection) a user may call from a page. */
export interface MetaAction {
  name: string;
  label: string;
  method: 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** {id} standing for the row's id */
  path: string;
  summary: string;
  confirm: boolean;
  reveals: string | null;
  when: Record<string, (string | boolean | null)[]> | null;
  body: Record<string, unknown> | null;
}

export interface MetaEntity {
  name: string;
  module: string;
  label: string;
  scope: 'tenant' | 'company';
  path: string | null;
  actions: ('read' | 'create' | 'update' | 'delete')[];
  listColumns: string[];
  defaultSort: string;
  fields: MetaField[];
  titleField: string | null;
  statusField: string | null;
  summaryFields: string[];
  transitions: { field: string; initial: string[]; moves: Record<string, string[]>; reserved: string[] } | null;
  related: MetaRelated[];
  rowActions: MetaAction[];
  listActions: MetaAction[];
  createReveals: string | null;
  /** the route answering a row's file, {id} standing for the row's id */
  download: string | null;
  /** the list of a row's audit records, {id} standing for its id */
  timeline: string | null;
}

export type Row = Record<string, unknown> & { id: string; version?: number };
export type FormData = Record<string, string | string[] | undefined>;
export interface FieldError {
  path: string;
  message: string;
}

/** The field that names a row of the entity in a reference or a heading (GET /api/meta derives it: http/meta-record.ts). */
export const labelField = (entity: MetaEntity): string | null => entity.titleField;

export function rowLabel(entity: MetaEntity, row: Row): string {
  const field = labelField(entity);
  const value = field ? row[field] : undefined;
  return typeof value === 'string' && value !== '' ? value : row.id;
}

/** How a value reads on a page. */
export function display(field: MetaField, value: unknown, say: Say): string {
  if (field.widget === 'cron') return cronWords(typeof value === 'string' ? value : null, say);
  if (value === null || value === undefined) return '';
  if (field.type === 'enum' && typeof value === 'string') return field.valueLabels?.[value] ?? value;
  if (field.type === 'boolean') return say(value ? 'value.yes' : 'value.no');
  if (field.type === 'datetime' && typeof value === 'string')
    return value
      .replace('T', ' ')
      .replace(/(:\d\d)\.\d+Z$/, '$1 UTC')
      .replace(/Z$/, ' UTC');
  if (field.type === 'json') return JSON.stringify(value);
  return String(value);
}

/** What a form input holds for a stored value. */
export function inputValue(field: MetaField, value: unknown): string {
  if (value === null || value === undefined) return '';
  if (field.type === 'datetime' && typeof value === 'string') return value.slice(0, 19);
  if (field.type === 'json') return JSON.stringify(value, null, 2);
  return String(value);
}

const last = (v: string | string[] | undefined) => (Array.isArray(v) ? v[v.length - 1] : v);
const all = (v: string | string[] | undefined) => (v === undefined ? [] : Array.isArray(v) ? v : [v]);

/** The form's inputs of a translatable field, one per language: "name:de". */
export const languageInput = (field: string, language: string) => `${field}:${language}`;
/** The form's inputs of a key-value field, one pair per row: "attributes:key", "attributes:value". */
export const pairInputs = (field: string) => ({ key: `${field}:key`, value: `${field}:value` });

/** The languages a form offers a translatable field in: the user's first, then the console's, then the row's others. */
export function formLanguages(offered: string[], chosen: string, stored: Record<string, unknown> = {}): string[] {
  return [...new Set([chosen || offered[0] || 'en', ...offered, ...Object.keys(stored)].map((l) => l.toLowerCase()))];
}

/**
 * The JSON body of a submitted form. Create: only the fields given (defaults
 * apply to the rest). Update: every writable field of the form, empty meaning
 * no value; a write-only (secret) field left empty keeps what is stored.
 */
export function bodyOf(fields: MetaField[], form: FormData, mode: 'create' | 'update', say: Say): { body: Record<string, unknown>; errors: FieldError[] } {
  const body: Record<string, unknown> = {};
  const translations: Record<string, Record<string, string | null>> = {};
  const errors: FieldError[] = [];
  for (const field of fields) {
    if (field.readOnly) continue;
    if (field.translatable) {
      const texts = translationsOf(field, form, mode);
      if (texts) translations[field.name] = texts;
      if (texts || form[field.name] === undefined) continue;
    }
    if (field.type === 'json' && form[pairInputs(field.name).key] !== undefined) {
      const pairs = pairsOf(field, form, mode, say);
      if ('error' in pairs) errors.push({ path: `/${field.name}`, message: pairs.error });
      else if (pairs.value !== undefined) body[field.name] = pairs.value;
      continue;
    }
    const raw = last(form[field.name]);
    if (field.type === 'boolean') {
      if (raw !== undefined) body[field.name] = raw === 'true';
      continue;
    }
    if (raw === undefined) continue;
    const text = field.type === 'text' || field.type === 'json' || field.writeOnly ? raw : raw.trim();
    if (text === '') {
      if (mode === 'update' && !field.writeOnly) body[field.name] = null;
      continue;
    }
    const converted = convert(field, text, say);
    if ('error' in converted) errors.push({ path: `/${field.name}`, message: converted.error });
    else body[field.name] = converted.value;
  }
  if (Object.keys(translations).length) body.translations = translations;
  return { body, errors };
}

/**
 * A translatable field's texts by language from its inputs ("name:de"), or null when the form has
 * none. Update: an emptied language is null, which removes its text.
 */
function translationsOf(field: MetaField, form: FormData, mode: 'create' | 'update'): Record<string, string | null> | null {
  const prefix = `${field.name}:`;
  const texts: Record<string, string | null> = {};
  let given = false;
  for (const [name, value] of Object.entries(form)) {
    if (!name.startsWith(prefix)) continue;
    given = true;
    const raw = last(value) ?? '';
    const text = field.type === 'text' ? raw : raw.trim();
    if (text !== '') texts[name.slice(prefix.length)] = text;
    else if (mode === 'update') texts[name.slice(prefix.length)] = null;
  }
  return given ? texts : null;
}

/** A key-value field's object from its rows; rows with neither key nor value are left out. */
function pairsOf(field: MetaField, form: FormData, mode: 'create' | 'update', say: Say): { value: Record<string, unknown> | null | undefined } | { error: string } {
  const names = pairInputs(field.name);
  const keys = all(form[names.key]);
  const values = all(form[names.value]);
  const object: Record<string, unknown> = {};
  for (let i = 0; i < Math.max(keys.length, values.length); i++) {
    const key = (keys[i] ?? '').trim();
    const value = values[i] ?? '';
    if (key === '' && value.trim() === '') continue;
    if (key === '') return { error: say('form.pairNoKey', { value: value.slice(0, 40) }) };
    if (Object.hasOwn(object, key)) return { error: say('form.pairTwice', { key: key.slice(0, 40) }) };
    object[key] = pairValue(value);
  }
  if (Object.keys(object).length) return { value: object };
  return { value: mode === 'update' ? null : undefined };
}

const TYPED = /^(-?\d+(\.\d+)?([eE][+-]?\d+)?|true|false|null|"(?:[^"\\]|\\.)*")$/;

/** A row's value: a number, true, false or null as such, "quoted" text as the text, anything else as typed. */
function pairValue(text: string): unknown {
  const trimmed = text.trim();
  return TYPED.test(trimmed) ? JSON.parse(trimmed) : text;
}

/** How a row's value reads in its input, so that saving it again keeps it (the text "42" is "\"42\""). */
function pairText(value: unknown): string {
  if (typeof value === 'string') return TYPED.test(value.trim()) ? JSON.stringify(value) : value;
  return typeof value === 'object' && value !== null ? JSON.stringify(value) : String(value);
}

/** The rows of a stored key-value object, or null when it is no flat object (the form then shows its JSON). */
export function storedPairs(value: unknown): { key: string; value: string }[] | null {
  if (value === null || value === undefined) return [];
  if (typeof value !== 'object' || Array.isArray(value)) return null;
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.some(([, v]) => typeof v === 'object' && v !== null)) return null;
  return entries.map(([key, v]) => ({ key, value: pairText(v) }));
}

function convert(field: MetaField, text: string, say: Say): { value: unknown } | { error: string } {
  switch (field.type) {
    case 'integer':
      return { value: /^[+-]?\d{1,16}$/.test(text) ? Number(text) : text };
    case 'datetime':
      // <input type="datetime-local"> has no zone: the console shows and takes UTC
      if (/^\d{4}-\d\d-\d\dT\d\d:\d\d$/.test(text)) return { value: `${text}:00Z` };
      if (/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?$/.test(text)) return { value: `${text}Z` };
      return { value: text };
    case 'json':
      try {
        return { value: JSON.parse(text) };
      } catch {
        return { error: say('form.invalidJson') };
      }
    default:
      return { value: text };
  }
}

/** The field a problem's JSON pointer names (/price, /translations/name/de → name), if any. */
export function fieldOfPointer(path: string): string | null {
  const parts = path.split('/').filter(Boolean);
  if (parts[0] === 'translations') return parts[1] ?? null;
  return parts[0] ?? null;
}
