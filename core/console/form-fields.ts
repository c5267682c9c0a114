// A form's input for each field: the widget its type and manifest hint ask for
// (a select for enums, a searchable select for references, one input per
// language for translatable fields, rows of keys and values for a key-value
// JSON field), filled from a stored row, from what the user sent, or on a new
// form from the fields' defaults.
import { formLanguages, inputValue, languageInput, pairInputs, storedPairs, type FormData, type MetaEntity, type MetaField, type Row } from './fields.ts';

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

/** The values a create form starts from: each field's default (a box whose default is true starts checked). */
export function defaultsOf(entity: MetaEntity): FormData {
  const form: FormData = {};
  for (const f of entity.fields) if (f.default !== undefined && f.default !== null && !f.readOnly && !f.writeOnly) form[f.name] = inputValue(f, f.default);
  return form;
}

interface FormContext {
  mode: 'create' | 'update';
  /** the console's languages, and the one the user chose ('' for automatic) */
  offered: string[];
  chosen: string;
}

/** The field partial's data (views/partials/field.hbs). */
export function fieldInput(f: MetaField, values: FormData, { mode, offered, chosen }: FormContext) {
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
  return {
    ...base,
    widget,
    checked: value === 'true',
    options: f.type === 'enum' ? (f.values ?? []).map((v) => ({ value: v, label: v, selected: value === v })) : undefined,
  };
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
  if (f.type === 'text' || f.type === 'json' || f.widget === 'textarea' || f.widget === 'markdown') return 'textarea';
  return { integer: 'number', decimal: 'decimal', date: 'date', datetime: 'datetime' }[f.type as string] ?? 'text';
}
