// A form generated from a JSON Schema (an action's request body, a report's
// parameters): one input per property, and the submitted form parsed back into
// the JSON body, with an error per field (its JSON pointer and a text key).
//
//   const inputs = schemaInputs(schema, formFromBody(schema, stored), page.text, { prefix: 'body' });
//   // view: {{> schema-fields inputs=inputs.inputs}}; inputs.errors: errors no input takes
//   const { body, errors } = bodyFromForm(schema, request.body, { prefix: 'body', say: page.text });
//
// Form names are the prefix and the property path joined by dots ("body.address.city");
// pointers are relative to the schema's root ("/address/city"). The API still
// validates the body: the checks here only spare the user a round trip.
import type { Say } from './texts.ts';
import type { FormData } from './fields.ts';

export interface JsonSchema {
  type?: string | string[];
  title?: string;
  description?: string;
  default?: unknown;
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  format?: string;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minItems?: number;
  maxItems?: number;
  /** a uuid string that names a row of this entity (meta's entity name): the caller may offer its rows as `choices` */
  'x-entity'?: string;
  [keyword: string]: unknown;
}

export interface Choice {
  value: string;
  label: string;
}

/** One input, as views/partials/schema-fields.hbs draws it. */
export interface SchemaInput {
  kind: 'text' | 'textarea' | 'email' | 'date' | 'datetime' | 'number' | 'checkbox' | 'select' | 'multiselect' | 'fieldset' | 'json';
  name: string;
  id: string;
  pointer: string;
  label: string;
  description: string | null;
  required: boolean;
  value: string;
  checked?: boolean;
  options?: (Choice & { selected: boolean })[];
  /** the empty option's text of a select ('' for none: a required select with a default) */
  placeholder?: string;
  min?: number;
  max?: number;
  step?: string;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  /** a fixed hint, already in the user's language */
  hint: string | null;
  /** the ids of its description, hint and errors, for aria-describedby */
  describedBy?: string;
  /** a fieldset's inputs */
  inputs?: SchemaInput[];
  errors: string[];
}

export interface SchemaFormOptions {
  /** the form names' first part ("parameters" → parameters.limit); '' for none */
  prefix?: string;
  /** errors to show beside their inputs: pointers relative to the schema's root */
  errors?: { path: string; message: string }[];
  /** by pointer: the options of a property (a uuid of an `x-entity`, read by the caller) */
  choices?: Record<string, Choice[]>;
}

export interface SchemaError {
  /** JSON pointer relative to the schema's root */
  path: string;
  key: string;
  values?: Record<string, unknown>;
  /** the text in the user's language (the key without a `say`) */
  message: string;
}

type Shape =
  | { kind: 'string' | 'integer' | 'number' | 'boolean' | 'free'; schema: JsonSchema; nullable: boolean }
  | { kind: 'enum' | 'enumArray'; schema: JsonSchema; nullable: boolean; choices: { value: unknown; label: string }[] }
  | { kind: 'object'; schema: JsonSchema; nullable: boolean; properties: Record<string, JsonSchema> };

const isNull = (s: JsonSchema) => s.type === 'null' || (s.const === null && s.type === undefined);

/** What a schema asks for, with unions of null (nullable), of consts (an enum) and single-member unions unwrapped. */
function shapeOf(schema: JsonSchema): Shape {
  const union = schema.anyOf ?? schema.oneOf;
  if (union) {
    const parts = union.filter((s) => !isNull(s));
    const nullable = parts.length < union.length;
    if (parts.length && parts.every((s) => s.const !== undefined)) return { kind: 'enum', schema, nullable, choices: parts.map((s) => ({ value: s.const, label: s.title ?? String(s.const) })) };
    if (parts.length === 1) {
      const { anyOf: _a, oneOf: _o, ...rest } = schema;
      const inner = shapeOf({ ...parts[0], ...rest, title: schema.title ?? parts[0].title, description: schema.description ?? parts[0].description });
      return { ...inner, nullable: inner.nullable || nullable };
    }
    return { kind: 'free', schema, nullable };
  }
  if (schema.const !== undefined) return { kind: 'enum', schema, nullable: false, choices: [{ value: schema.const, label: schema.title ?? String(schema.const) }] };
  const types = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
  const nullable = types.includes('null') || (schema.enum?.includes(null) ?? false);
  if (schema.enum) return { kind: 'enum', schema, nullable, choices: schema.enum.filter((v) => v !== null).map((v) => ({ value: v, label: String(v) })) };
  const own = types.filter((t) => t !== 'null');
  const type = own.length === 1 ? own[0] : own.length === 0 && schema.properties ? 'object' : null;
  if (type === 'string' || type === 'integer' || type === 'number' || type === 'boolean') return { kind: type, schema, nullable };
  if (type === 'object' && schema.properties && Object.keys(schema.properties).length) return { kind: 'object', schema, nullable, properties: schema.properties };
  if (type === 'array' && schema.items) {
    const items = shapeOf(schema.items);
    if (items.kind === 'enum') return { kind: 'enumArray', schema, nullable, choices: items.choices };
  }
  return { kind: 'free', schema, nullable };
}

/** "projectId" → "Project", "max_items" → "Max items": a property's label when its schema has no title. */
export function humanize(name: string): string {
  const words = name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .split(/[\s_-]+/)
    .filter(Boolean)
    .map((w) => w.toLowerCase());
  if (words.length > 1 && words[words.length - 1] === 'id') words.pop();
  const text = words.join(' ');
  return text.charAt(0).toUpperCase() + text.slice(1);
}

const nameOf = (prefix: string, key: string) => (prefix ? `${prefix}.${key}` : key);
const pointerOf = (parent: string, key: string) => `${parent}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`;
const last = (v: string | string[] | undefined) => (Array.isArray(v) ? v[v.length - 1] : v);
const all = (v: string | string[] | undefined) => (v === undefined ? [] : Array.isArray(v) ? v : [v]);
const objectOf = (value: unknown): Record<string, unknown> => (value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {});

/** A stored value as the form a user would send to keep it (an edit form's start); properties without a value are left out. */
export function formFromBody(schema: JsonSchema, body: unknown, prefix = ''): FormData {
  const form: FormData = {};
  const shape = shapeOf(schema);
  if (shape.kind !== 'object') return form;
  const values = objectOf(body);
  for (const [key, child] of Object.entries(shape.properties)) {
    const value = values[key];
    if (value === undefined || value === null) continue;
    const name = nameOf(prefix, key);
    const inner = shapeOf(child);
    if (inner.kind === 'object') Object.assign(form, formFromBody(child, value, name));
    else if (inner.kind === 'enumArray') form[name] = ['', ...(Array.isArray(value) ? value.map(String) : [])];
    else form[name] = textOf(inner, value);
  }
  return form;
}

function textOf(shape: Shape, value: unknown): string {
  if (value === undefined || value === null) return '';
  if (shape.kind === 'free') return JSON.stringify(value, null, 2);
  // <input type="datetime-local"> has no zone: the console shows and takes UTC
  if (shape.kind === 'string' && shape.schema.format === 'date-time' && typeof value === 'string') return value.slice(0, 19);
  return String(value);
}

/**
 * The inputs of an object schema, filled from `form` (a property the form does not
 * name starts at its schema's default), with `options.errors` beside them; `errors`
 * holds the messages no input takes.
 */
export function schemaInputs(schema: JsonSchema, form: FormData, say: Say, options: SchemaFormOptions = {}): { inputs: SchemaInput[]; errors: string[] } {
  const errors = [...(options.errors ?? [])];
  const taken = new Set<number>();
  const inputs = inputsOf(shapeOf(schema), form, say, options, options.prefix ?? '', '', errors, taken);
  // an error below an input (/address/city/x, /tags/2) goes to the deepest input above it
  const place = (list: SchemaInput[]) => {
    for (const input of list) {
      if (input.inputs) place(input.inputs);
      errors.forEach((e, i) => {
        if (!taken.has(i) && e.path.startsWith(`${input.pointer}/`)) {
          input.errors.push(e.message);
          taken.add(i);
        }
      });
    }
  };
  place(inputs);
  const describe = (list: SchemaInput[]) => {
    for (const input of list) {
      if (input.inputs) describe(input.inputs);
      const ids = [input.description && input.kind !== 'fieldset' ? 'description' : '', input.hint ? 'hint' : '', input.errors.length ? 'error' : ''].filter(Boolean);
      input.describedBy = ids.map((part) => `${input.id}-${part}`).join(' ');
    }
  };
  describe(inputs);
  return { inputs, errors: errors.filter((_, i) => !taken.has(i)).map((e) => (e.path ? `${e.path} ${e.message}` : e.message)) };
}

function inputsOf(shape: Shape, form: FormData, say: Say, options: SchemaFormOptions, prefix: string, pointer: string, errors: { path: string; message: string }[], taken: Set<number>): SchemaInput[] {
  if (shape.kind !== 'object') return [];
  const required = new Set(shape.schema.required ?? []);
  return Object.entries(shape.properties).map(([key, child]) => {
    const inner = shapeOf(child);
    const name = nameOf(prefix, key);
    const at = pointerOf(pointer, key);
    const own = errors.flatMap((e, i) => (e.path === at ? (taken.add(i), [e.message]) : []));
    const fallback = child.default !== undefined ? (inner.kind === 'enumArray' && Array.isArray(child.default) ? child.default.map(String) : textOf(inner, child.default)) : undefined;
    const given = form[name] ?? fallback;
    const value = last(given) ?? '';
    const input: SchemaInput = {
      kind: 'text',
      name,
      id: `sf-${name.replace(/[^A-Za-z0-9_-]/g, '-')}`,
      pointer: at,
      label: child.title ?? humanize(key),
      description: child.description ?? null,
      required: required.has(key) && !inner.nullable,
      value,
      hint: null,
      errors: own,
    };
    const s = inner.schema;
    switch (inner.kind) {
      case 'object':
        return { ...input, kind: 'fieldset', value: '', inputs: inputsOf(inner, form, say, options, name, at, errors, taken) };
      case 'enum':
      case 'enumArray': {
        const chosen = new Set(inner.kind === 'enumArray' ? all(given) : [value]);
        const multiple = inner.kind === 'enumArray';
        return {
          ...input,
          kind: multiple ? 'multiselect' : 'select',
          placeholder: multiple ? '' : say(input.required ? 'form.choose' : 'form.none'),
          options: inner.choices.map((c) => ({ value: String(c.value), label: c.label, selected: chosen.has(String(c.value)) })),
        };
      }
      case 'boolean':
        // a box says only yes or no: a property that may also be left out is a select of the three
        if (input.required || child.default !== undefined) return { ...input, kind: 'checkbox', checked: value === 'true' };
        return {
          ...input,
          kind: 'select',
          placeholder: say('form.none'),
          options: ['true', 'false'].map((v) => ({ value: v, label: say(v === 'true' ? 'value.yes' : 'value.no'), selected: value === v })),
        };
      case 'integer':
      case 'number':
        return {
          ...input,
          kind: 'number',
          step: inner.kind === 'integer' ? '1' : 'any',
          min: s.minimum ?? s.exclusiveMinimum,
          max: s.maximum ?? s.exclusiveMaximum,
        };
      case 'string': {
        const choices = options.choices?.[at];
        if (choices) {
          const list = value && !choices.some((c) => c.value === value) ? [{ value, label: value }, ...choices] : choices;
          return { ...input, kind: 'select', placeholder: say(input.required ? 'form.choose' : 'form.none'), options: list.map((c) => ({ ...c, selected: c.value === value })) };
        }
        const kind = s.format === 'email' ? 'email' : s.format === 'date' ? 'date' : s.format === 'date-time' ? 'datetime' : (s.maxLength ?? 0) > 250 ? 'textarea' : 'text';
        const hint = s.format === 'date-time' ? say('form.utc') : s.format === 'uuid' ? say('schemaForm.uuidHint') : null;
        return { ...input, kind, minLength: s.minLength, maxLength: s.maxLength, pattern: kind === 'text' ? s.pattern : undefined, hint };
      }
      default:
        return { ...input, kind: 'json', hint: say('schemaForm.jsonHint') };
    }
  });
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DATE = /^\d{4}-\d\d-\d\d$/;

/**
 * The JSON body of a submitted form: each property from its input, converted to
 * its schema's type; an empty optional input is left out. Errors name the
 * property's pointer and a text key (message: the text, through `say`).
 */
export function bodyFromForm(schema: JsonSchema, form: FormData, options: { prefix?: string; say?: Say } = {}): { body: Record<string, unknown>; errors: SchemaError[] } {
  const errors: SchemaError[] = [];
  const say = options.say ?? ((key: string) => key);
  const fail: Fail = (path, key, values) => {
    errors.push({ path, key, ...(values ? { values } : {}), message: say(key, values) });
    return undefined;
  };
  const body = objectFrom(shapeOf(schema), form, options.prefix ?? '', '', fail) ?? {};
  return { body, errors };
}

/** records an error; answers undefined, the value a property with an error has */
type Fail = (path: string, key: string, values?: Record<string, unknown>) => undefined;

function objectFrom(shape: Shape, form: FormData, prefix: string, pointer: string, fail: Fail): Record<string, unknown> | undefined {
  if (shape.kind !== 'object') return undefined;
  const required = new Set(shape.schema.required ?? []);
  const body: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(shape.properties)) {
    const name = nameOf(prefix, key);
    const at = pointerOf(pointer, key);
    const inner = shapeOf(child);
    const needed = required.has(key) && !inner.nullable;
    if (inner.kind === 'object') {
      const value = objectFrom(inner, form, name, at, fail);
      if (value && (Object.keys(value).length || needed)) body[key] = value;
      continue;
    }
    const value = valueFrom(inner, form[name], at, needed, fail);
    if (value !== undefined) body[key] = value;
  }
  return body;
}

function valueFrom(shape: Shape, raw: string | string[] | undefined, at: string, needed: boolean, fail: Fail): unknown {
  const s = shape.schema;
  if (shape.kind === 'enumArray') {
    const texts = all(raw).filter((v) => v !== '');
    const values = texts.map((t) => shape.choices.find((c) => String(c.value) === t));
    if (values.some((v) => v === undefined)) return fail(at, 'schemaForm.notAChoice');
    if (!texts.length && !needed) return undefined;
    if (s.minItems !== undefined && texts.length < s.minItems) return fail(at, texts.length ? 'schemaForm.tooFew' : 'schemaForm.required', { min: s.minItems });
    if (s.maxItems !== undefined && texts.length > s.maxItems) return fail(at, 'schemaForm.tooMany', { max: s.maxItems });
    return values.map((v) => v!.value);
  }
  const text = shape.kind === 'free' ? (last(raw) ?? '') : (last(raw) ?? '').trim();
  if (text.trim() === '') return needed ? fail(at, 'schemaForm.required') : undefined;
  switch (shape.kind) {
    case 'enum': {
      const choice = shape.choices.find((c) => String(c.value) === text);
      return choice ? choice.value : fail(at, 'schemaForm.notAChoice');
    }
    case 'boolean':
      return text === 'true' ? true : text === 'false' ? false : fail(at, 'schemaForm.notAChoice');
    case 'integer':
    case 'number': {
      const n = Number(text);
      if (shape.kind === 'integer' ? !/^[+-]?\d{1,16}$/.test(text) : !Number.isFinite(n) || !/\d/.test(text))
        return fail(at, shape.kind === 'integer' ? 'schemaForm.notInteger' : 'schemaForm.notNumber');
      if ((s.minimum !== undefined && n < s.minimum) || (s.exclusiveMinimum !== undefined && n <= s.exclusiveMinimum)) return fail(at, 'schemaForm.tooSmall', { min: s.minimum ?? s.exclusiveMinimum });
      if ((s.maximum !== undefined && n > s.maximum) || (s.exclusiveMaximum !== undefined && n >= s.exclusiveMaximum)) return fail(at, 'schemaForm.tooLarge', { max: s.maximum ?? s.exclusiveMaximum });
      return n;
    }
    case 'string':
      return stringFrom(s, text, at, fail);
    default:
      try {
        return JSON.parse(text);
      } catch {
        return fail(at, 'form.invalidJson');
      }
  }
}

function stringFrom(s: JsonSchema, text: string, at: string, fail: Fail): string | undefined {
  let value = text;
  if (s.format === 'date-time') {
    if (/^\d{4}-\d\d-\d\dT\d\d:\d\d$/.test(text)) value = `${text}:00Z`;
    else if (/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?$/.test(text)) value = `${text}Z`;
    if (Number.isNaN(Date.parse(value)) || !/^\d{4}-\d\d-\d\dT/.test(value)) return fail(at, 'schemaForm.dateTime');
  }
  if (s.format === 'date' && (!DATE.test(text) || Number.isNaN(Date.parse(text)))) return fail(at, 'schemaForm.date');
  if (s.format === 'email' && !/^[^@\s]+@[^@\s]+$/.test(text)) return fail(at, 'schemaForm.email');
  if (s.format === 'uuid' && !UUID.test(text)) return fail(at, 'schemaForm.uuid');
  const length = [...value].length;
  if (s.minLength !== undefined && length < s.minLength) return fail(at, 'schemaForm.tooShort', { min: s.minLength });
  if (s.maxLength !== undefined && length > s.maxLength) return fail(at, 'schemaForm.tooLong', { max: s.maxLength });
  if (s.pattern !== undefined && !safeTest(s.pattern, value)) return fail(at, 'schemaForm.pattern');
  return value;
}

/** A pattern this runtime cannot compile is the API's to check. */
function safeTest(pattern: string, text: string): boolean {
  try {
    return new RegExp(pattern, 'u').test(text);
  } catch {
    return true;
  }
}

/** The pointers of properties that name rows of an entity (`x-entity`), so the caller can read their options. */
export function referencesOf(schema: JsonSchema, pointer = ''): { pointer: string; entity: string }[] {
  const shape = shapeOf(schema);
  if (shape.kind !== 'object') return [];
  return Object.entries(shape.properties).flatMap(([key, child]) => {
    const at = pointerOf(pointer, key);
    const inner = shapeOf(child);
    if (inner.kind === 'object') return referencesOf(child, at);
    const entity = inner.schema['x-entity'] ?? child['x-entity'];
    return inner.kind === 'string' && typeof entity === 'string' ? [{ pointer: at, entity }] : [];
  });
}
