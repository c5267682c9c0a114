// Entity row ↔ API shape. Built once per model: resolves translatable fields to
// one language, drops internal and secret fields, and merges written text into the
// language map so no other language is lost.
import type { EntityModel, FieldModel } from '../model/entity-model.ts';
import { DECIMAL_DEFAULT } from '../model/entity-builder.ts';
import { pick, type Translations } from '../i18n.ts';

export interface ReadOptions {
  /** languages in order of preference, tenant default last */
  prefs: string[];
  /** false, true (every language) or the languages asked for */
  translations: boolean | string[];
}

export type Row = Record<string, any>;
export type Dto = Record<string, unknown>;

export function rowMapper(model: EntityModel) {
  const plain = model.readable.filter((f) => !f.translatable).map((f) => f.name);
  const translatable = model.translatable.map((f) => f.name);
  const company = model.scope === 'company';
  return (row: Row, opts: ReadOptions, used?: Set<string>): Dto => {
    const dto: Dto = { id: row.id };
    if (company) dto.companyId = row.companyId;
    for (const name of plain) dto[name] = row[name] ?? null;
    for (const name of translatable) {
      const { text, lang } = pick(row[name], opts.prefs);
      dto[name] = text;
      if (lang) used?.add(lang);
    }
    dto.createdAt = row.createdAt;
    dto.updatedAt = row.updatedAt;
    dto.version = row.version;
    if (opts.translations && translatable.length) {
      const only = Array.isArray(opts.translations) ? new Set(opts.translations.map((l) => l.toLowerCase())) : null;
      dto.translations = Object.fromEntries(
        translatable.map((name) => {
          const all: Translations = row[name] ?? {};
          return [name, only ? Object.fromEntries(Object.entries(all).filter(([l]) => only.has(l))) : all];
        }),
      );
    }
    return dto;
  };
}

/** Merges a write's text into a stored language map: a string goes under `lang`, a map merges, null clears. */
/** A write's texts over the stored ones: a language given null loses its text. */
export function mergeTranslations(
  stored: Translations | null | undefined,
  text: string | null | undefined,
  perLanguage: Record<string, string | null> | undefined,
  lang: string,
  clear: boolean,
): Translations {
  const out: Translations = clear ? {} : { ...(stored ?? {}) };
  for (const [l, t] of Object.entries(perLanguage ?? {})) {
    if (t === null) delete out[l.toLowerCase()];
    else out[l.toLowerCase()] = t;
  }
  if (typeof text === 'string') out[lang] = text;
  return out;
}

/**
 * A written value as the database will hold it, so the response to a write
 * shows what a later read returns: a decimal "7" is stored and read as "7.00".
 */
export function storedValue(f: FieldModel, value: unknown): unknown {
  // RFC 3339 allows "t" and "z" in lower case; MikroORM's own string-to-Date
  // conversion on create does not (an invalid Date), JavaScript's Date does
  if (f.type === 'datetime' && typeof value === 'string') return new Date(value);
  if (f.type !== 'decimal') return value;
  const scale = f.scale ?? DECIMAL_DEFAULT.scale;
  if (typeof value === 'number') return value.toFixed(scale); // a manifest default
  if (typeof value !== 'string') return value;
  const negative = value.startsWith('-');
  const [wholeGiven, fraction = ''] = (negative ? value.slice(1) : value).split('.');
  // as numeric stores it: "007.5" is 7.50
  const whole = wholeGiven.replace(/^0+(?=\d)/, '');
  const digits = scale > 0 ? `${whole}.${fraction.padEnd(scale, '0')}` : whole;
  // numeric has no negative zero
  return negative && /[1-9]/.test(digits) ? `-${digits}` : digits;
}
