// A form's input for each field: the widget its type and manifest hint ask for
// (a select for enums, a searchable select for references, one input per
// language for translatable fields, rows of keys and values for a key-value
// JSON field), filled from a stored row, from what the user sent, or on a new
// form from the fields' defaults.
import { formLanguages, inputValue, languageInput, pairInputs, storedPairs, type FieldError, type FormData, type MetaEntity, type MetaField, type Row } from './fields.ts';
import { bodyFromForm, formFromBody, referencesOf, schemaInputs, type Choice, type JsonSchema } from './schema-form.ts';
import { cronOfInputs, presetOf, PRESETS, scheduleInputs } from './cron-words.ts';
import { referenceOptions } from './references.ts';
import { sayFrom, type Say } from './texts.ts';
import type { Page } from './shell.ts';

/**
 * What GET /api/meta may say of a field beyond fields.ts's MetaField (each optional; the
 * console works without them): labels of an enum's values, the field holding a money
 * field's currency, a JSON field's schema, or where its schema is read.
 */
export interface FieldHints {
  valueLabels?: Record<string, string>;
  currency?: string;
  schema?: JsonSchema;
  /** GET `path` answers { items }; the item whose `key` (default "name") is the row's `match` field holds the schema under the field's name */
  schemaFrom?: { path: string; match: string; key?: string };
}
type HintedField = MetaField & FieldHints;

export const formValue = (values: FormData, name: string): string => {
  const v = values[name];
  return Array.isArray(v) ? (v[v.length - 1] ?? '') : (v ?? '');
};
const formValues = (values: FormData, name: string): string[] => {
  const v = values[name];
  return v === undefined ? [] : Array.isArray(v) ? v : [v];
};

/** Blank rows a key-value field offers below its stored ones (console.js adds more). */
const BLANK_PAIRS = 2;

/** A stored row as the form a user would send to keep it unchanged. */
export function formOf(entity: MetaEntity, row: Row): FormData {
  const form: FormData = {};
  const translations = (row.translations ?? {}) as Record<string, Record<string, string>>;
  for (const f of entity.fields) {
    const pairs = widgetOf(f) === 'key-value' ? storedPairs(row[f.name]) : null;
    if (f.translatable) for (const [language, text] of Object.entries(translations[f.name] ?? {})) form[languageInput(f.name, language)] = text;
    else if (pairs) {
      const names = pairInputs(f.name);
      form[names.key] = pairs.map((p) => p.key);
      form[names.value] = pairs.map((p) => p.value);
    } else form[f.name] = inputValue(f, row[f.name]);
  }
  return form;
}

/**
 * The values a create form starts from: each field's default (a box whose default is true starts
 * checked); a required company reference without one starts at the user's current company.
 */
export function defaultsOf(entity: MetaEntity, current: { companyId?: string | null } = {}): FormData {
  const form: FormData = {};
  for (const f of entity.fields) {
    if (f.readOnly || f.writeOnly) continue;
    if (f.default !== undefined && f.default !== null) form[f.name] = inputValue(f, f.default);
    else if (f.type === 'ref' && f.entity === 'Company' && f.required && current.companyId) form[f.name] = current.companyId;
  }
  return form;
}

interface FormContext {
  mode: 'create' | 'update';
  /** the console's languages, and the one the user chose ('' for automatic) */
  offered: string[];
  chosen: string;
  /** the form's entity: a money field of one with a `currency` field shows that currency */
  entity?: MetaEntity;
  /** the console's texts in the user's language (default: the built-in English) */
  say?: Say;
  /** the schemas of the form's schema-backed JSON fields (formSchemas) */
  schemas?: Map<string, FieldSchema>;
  /** every error of the form (the console's and the API's), for the inputs of schema-backed fields */
  errors?: FieldError[];
}

/** The field partial's data (views/partials/field.hbs). */
export function fieldInput(f: MetaField, values: FormData, { mode, offered, chosen, entity, say = sayFrom(), schemas, errors = [] }: FormContext) {
  const id = `field-${f.name}`;
  const value = formValue(values, f.name);
  const base = {
    name: f.name,
    id,
    label: f.label,
    required: f.required && !(mode === 'update' && f.writeOnly),
    maxLength: f.maxLength,
    value,
    // a key of the console's texts
    hint: f.writeOnly && mode === 'update' ? 'form.keepSecret' : f.type === 'datetime' ? 'form.utc' : null,
  };
  const widget = widgetOf(f);
  if (widget === 'translations') {
    const given = Object.keys(values).filter((n) => n.startsWith(`${f.name}:`));
    const languages = formLanguages(offered, chosen, Object.fromEntries(given.map((n) => [n.slice(f.name.length + 1), true])));
    const names = languageNames(chosen);
    return {
      ...base,
      widget,
      multiline: f.type === 'text' || f.widget === 'textarea' || f.widget === 'markdown',
      languages: languages.map((code, i) => ({
        code,
        // the first keeps the field's id, so the field's label, error and links point at it
        id: i === 0 ? id : `${id}-${code}`,
        name: languageInput(f.name, code),
        label: `${f.label} (${names(code)})`,
        // a form sent with the field's plain name (one language) shows it in the first
        value: formValue(values, languageInput(f.name, code)) || (i === 0 && !given.length ? value : ''),
      })),
    };
  }
  if (widget === 'key-value') {
    const names = pairInputs(f.name);
    const keys = formValues(values, names.key);
    const texts = formValues(values, names.value);
    // a stored value that is no flat object keeps its JSON in a textarea
    if (!keys.length && value.trim() !== '' && storedPairs(safeJson(value)) === null) return { ...base, widget: 'textarea' };
    const pairs = keys.length ? keys.map((key, i) => ({ key, value: texts[i] ?? '' })) : (storedPairs(safeJson(value)) ?? []);
    const rows = [...pairs, ...Array.from({ length: BLANK_PAIRS }, () => ({ key: '', value: '' }))];
    return {
      ...base,
      widget,
      keyName: names.key,
      valueName: names.value,
      rows: rows.map((r, i) => ({ ...r, n: i + 1, keyId: i === 0 ? id : `${id}-key-${i + 1}`, valueId: `${id}-value-${i + 1}` })),
      hint: 'form.pairTypes',
    };
  }
  const hinted = f as HintedField;
  const schema = schemas?.get(f.name);
  if (f.type === 'json' && schema) return { ...base, widget: 'schema', ...schemaWidget(f, schema, values, say, errors) };
  if (widget === 'cron') return { ...base, widget, ...cronWidget(f, values) };
  return {
    ...base,
    widget,
    checked: value === 'true',
    // a value's label in the user's language when the API gives one (meta's valueLabels)
    options: f.type === 'enum' ? (f.values ?? []).map((v) => ({ value: v, label: hinted.valueLabels?.[v] ?? v, selected: value === v })) : undefined,
    ...moneyOf(hinted, values, entity),
  };
}

/** A money field's currency: the code its currency field holds (or that field's label, while it holds none). */
function moneyOf(f: HintedField, values: FormData, entity: MetaEntity | undefined) {
  const held = f.currency ?? (f.type === 'decimal' && (entity?.fields.some((c) => c.name === 'currency') || 'currency' in values) ? 'currency' : undefined);
  // "quoteId.currency" names a field of another row: not on this form
  if (!held || held.includes('.') || (f.type !== 'decimal' && f.type !== 'integer')) return {};
  const code = formValue(values, held).trim();
  return code ? { currency: code } : { currencyField: entity?.fields.find((c) => c.name === held)?.label ?? held };
}

/** A cron field as presets: none, daily, weekly, monthly at a time, or a cron of one's own (the field's own input). */
function cronWidget(f: MetaField, values: FormData) {
  const names = scheduleInputs(f.name);
  const given = values[names.preset] !== undefined;
  const stored = presetOf(formValue(values, f.name));
  const s = given
    ? { preset: formValue(values, names.preset), time: formValue(values, names.time), weekday: formValue(values, names.weekday), monthday: formValue(values, names.monthday) }
    : { ...stored, weekday: String(stored.weekday), monthday: String(stored.monthday) };
  return {
    names,
    presets: PRESETS.map((p) => ({ value: p, key: `schedule.${p}`, selected: p === s.preset })),
    time: s.time,
    weekdays: [1, 2, 3, 4, 5, 6, 0].map((d) => ({ value: String(d), key: `cron.day.${d}`, selected: String(d) === s.weekday })),
    monthday: s.monthday,
    cron: given ? formValue(values, f.name) : stored.preset === 'custom' ? stored.cron : '',
    hint: 'schedule.hint',
  };
}

/** A schema-backed JSON field's inputs: one fieldset per schema it may have (all of them until its `match` field is chosen). */
function schemaWidget(f: MetaField, schema: FieldSchema, values: FormData, say: Say, errors: FieldError[]) {
  const own = errors.filter((e) => e.path.startsWith(`/${f.name}/`)).map((e) => ({ ...e, path: e.path.slice(f.name.length + 1) }));
  const unplaced: string[] = errors.filter((e) => e.path === `/${f.name}`).map((e) => e.message);
  const variants = schema.variants.map((v) => {
    // a stored row's form holds the field's JSON, not the generated inputs
    const fresh = !Object.keys(values).some((n) => n.startsWith(`${v.prefix}.`));
    const start = fresh ? { ...values, ...formFromBody(v.schema, safeJson(formValue(values, f.name)), v.prefix) } : values;
    // the API's errors name the body's pointers: they are the chosen variant's
    const generated = schemaInputs(v.schema, start, say, { prefix: v.prefix, choices: v.choices, errors: schema.variants.length === 1 ? own : [] });
    unplaced.push(...generated.errors);
    return { title: v.title, description: v.description, inputs: generated.inputs };
  });
  return { variants, many: variants.length > 1, matchLabel: schema.matchLabel, unplaced };
}

/** One schema a JSON field may have: the form names of its inputs start with `prefix`. */
export interface SchemaVariant {
  key: string;
  title: string | null;
  description: string | null;
  schema: JsonSchema;
  prefix: string;
  /** by pointer: the options of its references (x-entity) */
  choices: Record<string, Choice[]>;
}

export interface FieldSchema {
  variants: SchemaVariant[];
  /** the label of the field that picks the variant */
  matchLabel: string | null;
}

/**
 * The schemas of an entity's schema-backed JSON fields (meta's `schema` or
 * `schemaFrom`), read as the user, with the options of their references: for
 * fieldInput's `schemas`. Values: the form's, so a chosen `match` narrows them to one;
 * `withChoices: false` skips reading the references' rows (parsing a form needs none).
 */
export async function formSchemas(page: Page, entity: MetaEntity, values: FormData, { withChoices = true } = {}): Promise<Map<string, FieldSchema>> {
  const found = new Map<string, FieldSchema>();
  for (const f of entity.fields as HintedField[]) {
    if (f.type !== 'json' || f.readOnly) continue;
    let variants: Omit<SchemaVariant, 'choices'>[] = [];
    let matchLabel: string | null = null;
    if (f.schema) variants = [{ key: '', title: null, description: null, schema: f.schema, prefix: f.name }];
    else if (f.schemaFrom) {
      const { path, match, key = 'name' } = f.schemaFrom;
      const res = await page.api.get<{ items?: Record<string, unknown>[] }>(path);
      const items = res.ok && Array.isArray(res.body.items) ? res.body.items : [];
      const chosen = formValue(values, match);
      matchLabel = entity.fields.find((m) => m.name === match)?.label ?? match;
      variants = items
        .filter((i) => (!chosen || i[key] === chosen) && i[f.name] && typeof i[f.name] === 'object')
        .map((i) => ({
          key: String(i[key]),
          title: typeof i.title === 'string' ? i.title : String(i[key]),
          description: typeof i.description === 'string' ? i.description : null,
          schema: i[f.name] as JsonSchema,
          prefix: `${f.name}:${String(i[key])}`,
        }));
    }
    if (!variants.length) continue;
    found.set(f.name, { matchLabel, variants: await Promise.all(variants.map(async (v) => ({ ...v, choices: withChoices ? await choicesOf(page, v, values) : {} }))) });
  }
  return found;
}

/** The rows a variant's references may name, as a reference field's select offers them (the chosen one always). */
async function choicesOf(page: Page, v: Omit<SchemaVariant, 'choices'>, values: FormData): Promise<Record<string, Choice[]>> {
  const choices: Record<string, Choice[]> = {};
  for (const { pointer, entity } of referencesOf(v.schema)) {
    const name = `${v.prefix}${pointer.replaceAll('/', '.')}`;
    const field = { name, type: 'ref', entity, label: entity } as MetaField;
    choices[pointer] = (await referenceOptions(page, field, '', formValue(values, name))).map(({ value, label }) => ({ value, label }));
  }
  return choices;
}

/**
 * Before fields.ts's bodyOf: the generated inputs of cron and schema-backed fields folded
 * into the plain inputs bodyOf reads (the cron's text; the JSON field's JSON), with their
 * errors under the field's pointer (/parameters/limit).
 */
export async function foldForm(page: Page, entity: MetaEntity, form: FormData, say: Say): Promise<{ form: FormData; errors: FieldError[] }> {
  const out: FormData = { ...form };
  const errors: FieldError[] = [];
  for (const f of entity.fields) {
    const names = scheduleInputs(f.name);
    if (widgetOf(f) !== 'cron' || form[names.preset] === undefined) continue;
    const cron = cronOfInputs({
      preset: formValue(form, names.preset),
      time: formValue(form, names.time),
      weekday: formValue(form, names.weekday),
      monthday: formValue(form, names.monthday),
      cron: formValue(form, names.cron),
    });
    if ('error' in cron) errors.push({ path: `/${f.name}`, message: say(cron.error) });
    else out[f.name] = cron.cron;
  }
  // parsing needs the schemas, not the rows a select offers
  const schemas = await formSchemas(page, entity, form, { withChoices: false });
  for (const [name, schema] of schemas) {
    // all variants shown and none chosen: nothing to send (the API asks for the match field)
    if (schema.variants.length !== 1 || !Object.keys(form).some((n) => n.startsWith(`${schema.variants[0].prefix}.`))) continue;
    const v = schema.variants[0];
    const { body, errors: wrong } = bodyFromForm(v.schema, form, { prefix: v.prefix, say });
    errors.push(...wrong.map((e) => ({ path: `/${name}${e.path}`, message: e.message })));
    out[name] = JSON.stringify(body);
  }
  return { form: out, errors };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** "de" → "German", in the user's language where the runtime knows it. */
function languageNames(language: string): (code: string) => string {
  let names: Intl.DisplayNames | null = null;
  try {
    names = new Intl.DisplayNames([language || 'en', 'en'], { type: 'language' });
  } catch {
    names = null;
  }
  return (code) => {
    try {
      return names?.of(code) ?? code;
    } catch {
      return code;
    }
  };
}

function widgetOf(f: MetaField): string {
  if (f.writeOnly) return 'password';
  if (f.translatable) return 'translations';
  if (f.type === 'enum') return 'select';
  if (f.type === 'ref') return 'reference';
  if (f.type === 'boolean') return 'checkbox';
  if (f.type === 'json' && f.widget === 'key-value') return 'key-value';
  if (f.type === 'string' && f.widget === 'cron') return 'cron';
  if (f.type === 'text' || f.type === 'json' || f.widget === 'textarea' || f.widget === 'markdown') return 'textarea';
  return { integer: 'number', decimal: 'decimal', date: 'date', datetime: 'datetime' }[f.type as string] ?? 'text';
}
