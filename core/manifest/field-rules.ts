// The rules about one field that the JSON Schema cannot say: which options go
// with which type, and whether a default fits its field. Each fault names the
// option at fault (its key), or none when something is missing.
import type { ManifestField } from './format.ts';
import { schemaFault, type NamedSchemas } from './schemas.ts';

const TEXT_TYPES = new Set(['string', 'text']);
const NUMBER_TYPES = new Set(['integer', 'decimal']);
const RESERVED_FIELDS = new Set(['id', 'createdAt', 'updatedAt', 'version', 'translations']);
/** PostgreSQL truncates longer identifiers, after which every schema diff sees a new table. */
export const MAX_IDENTIFIER = 63;
export const DECIMAL_DEFAULT = { precision: 12, scale: 2 };
export const STRING_MAX_LENGTH = 255;
const INT4 = { min: -2147483648, max: 2147483647 };
// PostgreSQL shows such characters escaped in the catalog, so MikroORM's diff
// would see a changed default or check constraint on every run.
// eslint-disable-next-line no-control-regex -- control characters are what it looks for
const CONTROL = /[\u0000-\u001f\u007f]/;

export interface FieldFault {
  key?: string;
  reason: string;
}

export const escapePointer = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');

/** `schemas`: the manifest's named schemas, which the field's "schema" may name ({ "$ref": "<Name>" }). */
export function checkFieldRules(name: string, f: ManifestField, scope: 'tenant' | 'company', schemas: NamedSchemas = {}): FieldFault | undefined {
  const at = (key: string | undefined, reason: string): FieldFault => ({ key, reason });
  const text = TEXT_TYPES.has(f.type);
  if (!/^[a-z][A-Za-z0-9]{0,40}$/.test(name)) return at(undefined, 'field names are camelCase');
  if (RESERVED_FIELDS.has(name)) return at(undefined, `"${name}" is provided by the kernel on every entity`);
  if (name === 'companyId' && scope === 'company') return at(undefined, '"companyId" of a company-scoped entity comes from the company context');
  if (f.type === 'enum' && !f.values) return at(undefined, 'an enum field needs "values"');
  if (f.type !== 'enum' && f.values) return at('values', '"values" only applies to enum fields');
  const control = (f.values ?? []).findIndex((v) => CONTROL.test(v));
  if (control >= 0) return at(`values/${control}`, 'enum values cannot hold control characters (line breaks, tabs)');
  if (f.type === 'ref' && !f.entity) return at(undefined, 'a ref field needs "entity"');
  if (f.type === 'ref' && !name.endsWith('Id')) return at(undefined, 'a ref field is named after its target with an "Id" suffix, e.g. categoryId');
  if (f.type !== 'ref' && f.entity !== undefined) return at('entity', '"entity" only applies to ref fields');
  if (f.type !== 'ref' && f.onDelete !== undefined) return at('onDelete', '"onDelete" only applies to ref fields');
  for (const key of ['precision', 'scale'] as const) {
    if (f.type !== 'decimal' && f[key] !== undefined) return at(key, `"${key}" only applies to decimal fields`);
  }
  if (f.type === 'decimal' && (f.scale ?? DECIMAL_DEFAULT.scale) > (f.precision ?? DECIMAL_DEFAULT.precision)) {
    return at(f.scale !== undefined ? 'scale' : 'precision', `"scale" (default ${DECIMAL_DEFAULT.scale}) cannot exceed "precision" (default ${DECIMAL_DEFAULT.precision})`);
  }
  if (f.translatable && !text) return at('translatable', 'only string and text fields can be translatable');
  if (f.translatable && f.unique) return at('unique', 'a translatable field cannot be unique');
  for (const key of ['maxLength', 'minLength', 'pattern'] as const) {
    if (f[key] !== undefined && !text) return at(key, `"${key}" only applies to string and text fields`);
  }
  if (f.minLength !== undefined && f.minLength > (f.maxLength ?? Infinity)) return at('minLength', '"minLength" cannot exceed "maxLength"');
  for (const key of ['minimum', 'maximum'] as const) {
    if (f[key] !== undefined && !NUMBER_TYPES.has(f.type)) return at(key, `"${key}" only applies to integer and decimal fields`);
  }
  if (f.minimum !== undefined && f.maximum !== undefined && f.minimum > f.maximum) return at('minimum', '"minimum" cannot exceed "maximum"');
  if (f.search && !text) return at('search', 'only string and text fields can be searched');
  if (f.onDelete === 'setNull' && f.required) return at('onDelete', 'onDelete "setNull" needs a field that is not required');
  if (f.internal && (f.filter || f.sort || f.search)) return at('internal', 'an internal field cannot be filtered, sorted or searched');
  if (f.secret) {
    if (!text) return at('secret', 'only string and text fields can be secret');
    for (const key of ['translatable', 'filter', 'sort', 'search', 'unique', 'index', 'internal', 'readOnly', 'default'] as const) {
      if (f[key] !== undefined && f[key] !== false) return at(key, `a secret field cannot have "${key}": it is stored encrypted and never read back`);
    }
  }
  if (f.readOnly && f.internal) return at('readOnly', 'an internal field is neither read nor written through the API');
  if (f.readOnly && f.required && f.default === undefined) return at('readOnly', 'a required read-only field needs a "default": no request can set it');
  if (f.format !== undefined && !text) return at('format', '"format" only applies to string and text fields');
  if (f.schema !== undefined) {
    if (f.type !== 'json') return at('schema', '"schema" only applies to json fields');
    const fault = schemaFault(f.schema, schemas);
    if (fault) return at(['schema', ...fault.at.map(escapePointer)].join('/'), fault.reason);
  }
  if (f.pattern !== undefined) {
    try {
      new RegExp(f.pattern, 'u');
    } catch {
      return at('pattern', '"pattern" is not a valid regular expression');
    }
  }
  return undefined;
}

const DECIMAL = /^-?(\d+)(?:\.(\d+))?$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** A default is stored in the table definition: it must be a valid value of its field. */
export function checkFieldDefault(f: ManifestField): FieldFault | undefined {
  const d = f.default;
  if (d === undefined) return undefined;
  const bad = (reason: string): FieldFault => ({ key: 'default', reason });
  if (f.type === 'ref') return bad('"default" does not apply to ref fields');
  if (f.translatable) return bad('a translatable field has no default: it would have no language');
  if (d === null) return f.required ? bad('a required field cannot default to null') : undefined;
  const inRange = (n: number) => (f.minimum === undefined || n >= f.minimum) && (f.maximum === undefined || n <= f.maximum);
  switch (f.type) {
    case 'string':
    case 'text':
      if (typeof d !== 'string') return bad('must be a string');
      if (CONTROL.test(d)) return bad('cannot hold control characters (line breaks, tabs)');
      if (d.length > (f.maxLength ?? (f.type === 'string' ? STRING_MAX_LENGTH : Infinity)) || d.length < (f.minLength ?? 0)) return bad('is longer or shorter than the field allows');
      if (f.pattern !== undefined && !new RegExp(f.pattern, 'u').test(d)) return bad('does not match "pattern"');
      return undefined;
    case 'integer':
      if (typeof d !== 'number' || !Number.isInteger(d) || d < INT4.min || d > INT4.max) return bad('must be a 32-bit integer');
      return inRange(d) ? undefined : bad('is outside "minimum"/"maximum"');
    case 'decimal': {
      const m = DECIMAL.exec(typeof d === 'number' && Number.isFinite(d) ? String(d) : typeof d === 'string' ? d : '');
      const precision = f.precision ?? DECIMAL_DEFAULT.precision;
      const scale = f.scale ?? DECIMAL_DEFAULT.scale;
      if (!m) return bad('must be a decimal number or decimal string, e.g. "0.00"');
      if (m[1].replace(/^0+/, '').length > precision - scale || (m[2] ?? '').length > scale) return bad(`does not fit precision ${precision}, scale ${scale}`);
      return inRange(Number(d)) ? undefined : bad('is outside "minimum"/"maximum"');
    }
    case 'boolean':
      return typeof d === 'boolean' ? undefined : bad('must be true or false');
    case 'date':
      return typeof d === 'string' && DATE.test(d) && !Number.isNaN(Date.parse(d)) ? undefined : bad('must be a date, e.g. "2025-01-31"');
    case 'datetime':
      // PostgreSQL shows a timestamptz default in the session's time zone, never as written
      return bad('a datetime field has no fixed default');
    case 'enum':
      return typeof d === 'string' && f.values!.includes(d) ? undefined : bad('must be one of "values"');
    case 'json':
      return undefined;
  }
}
