// Ajv's errors as a person reads them: one entry per fault, not one per schema
// branch. A nullable field is anyOf [value, null]; Ajv reports the value's
// fault, "must be null" and "must match a schema in anyOf" for it; only the
// first says what is wrong. Decimals are strings checked by a pattern the body
// schema derives from precision and scale; the message says those, not the regex.
import type { ErrorObject } from 'ajv';
import type { FieldError } from '../errors.ts';

/** How many faults one answer lists; the detail says how many more there were. */
export const MAX_FIELD_ERRORS = 20;

type Schema = Record<string, unknown>;

const plural = (n: unknown, word: string, many = `${word}s`) => `${n} ${n === 1 ? word : many}`;

// the pattern json-schemas.ts builds for a decimal: ^-?(0|[1-9]\d{0,W})(\.\d{1,S})?$
const DECIMAL_PATTERN = /^\^(-\?)?(?:\(0\|\[1-9\]\\d\{0,(\d+)\}\)|0)(?:\(\\\.\\d\{1,(\d+)\}\)\?)?\$$/;

function decimalText(pattern: unknown): string | undefined {
  const m = typeof pattern === 'string' ? DECIMAL_PATTERN.exec(pattern) : null;
  if (!m) return undefined;
  const [, signed, wholeMinusOne, scale] = m;
  const whole = wholeMinusOne === undefined ? 0 : Number(wholeMinusOne) + 1;
  const places = Number(scale ?? 0);
  const kind = `${signed ? 'a' : 'a non-negative'} ${places ? `decimal with at most ${plural(places, 'place')}` : 'whole number'}`;
  const size = whole ? (places ? ` and at most ${plural(whole, 'digit')} before the point` : ` of at most ${plural(whole, 'digit')}`) : ' below 1';
  const example = places ? (places === 1 ? '12.5' : '12.50') : '12';
  return `must be ${kind}${size}, written as a string such as "${example}"`;
}

const TYPE_NAMES: Record<string, string> = {
  string: 'a string',
  integer: 'a whole number',
  number: 'a number',
  boolean: 'true or false',
  object: 'an object',
  array: 'a list',
  null: 'null',
};

const FORMATS: Record<string, string> = {
  uuid: 'a UUID',
  date: 'a date as YYYY-MM-DD',
  'date-time': 'a date and time in ISO 8601, such as 2026-01-15T09:30:00Z',
  email: 'an e-mail address',
  uri: 'an absolute URI',
  url: 'an absolute URL',
};

const orList = (items: string[]) => (items.length < 2 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} or ${items.at(-1)}`);

/** What a schema accepts, in words: for an anyOf none of whose branches matched. */
function describe(schema: Schema | undefined): string {
  if (!schema) return 'a valid value';
  const decimal = decimalText(schema.pattern);
  if (decimal) return decimal.replace(/^must be /, '');
  if (Array.isArray(schema.enum)) return `one of ${schema.enum.map((v) => JSON.stringify(v)).join(', ')}`;
  if (typeof schema.format === 'string' && FORMATS[schema.format]) return FORMATS[schema.format];
  const types = [schema.type].flat().filter((t): t is string => typeof t === 'string');
  return types.length ? orList(types.map((t) => TYPE_NAMES[t] ?? t)) : 'a valid value';
}

function typeMessage(types: string[], parent: Schema | undefined): string {
  const decimal = types.includes('string') ? decimalText(parent?.pattern) : undefined;
  if (decimal) return decimal;
  const format = types.includes('string') && typeof parent?.format === 'string' ? FORMATS[parent.format] : undefined;
  if (format) return `must be ${format}`;
  return `must be ${orList([...new Set(types)].map((t) => TYPE_NAMES[t] ?? t))}`;
}

function message(e: ErrorObject): string {
  const p = e.params as Record<string, unknown>;
  const parent = e.parentSchema as Schema | undefined;
  switch (e.keyword) {
    case 'required':
      return 'is required';
    case 'additionalProperties':
      return 'is not a known field';
    case 'false schema':
      // a property a schema rules out ({ "properties": { "app": false } }: a stored query names no app)
      return 'is not allowed here';
    case 'type':
      return typeMessage(String(p.type).split(','), parent);
    case 'pattern':
      return decimalText(p.pattern) ?? e.message ?? 'is invalid';
    case 'format':
      return FORMATS[String(p.format)] ? `must be ${FORMATS[String(p.format)]}` : (e.message ?? 'is invalid');
    case 'enum': {
      const allowed = (p.allowedValues as unknown[]).filter((v) => v !== null);
      const shown = allowed.slice(0, 12).map((v) => JSON.stringify(v));
      return `must be one of ${shown.join(', ')}${allowed.length > shown.length ? ', …' : ''}`;
    }
    case 'maxLength':
      return `must be at most ${plural(p.limit, 'character')} long`;
    case 'minLength':
      return p.limit === 1 ? 'must not be empty' : `must be at least ${plural(p.limit, 'character')} long`;
    case 'maximum':
    case 'exclusiveMaximum':
      return `must be ${e.keyword === 'maximum' ? 'at most' : 'less than'} ${p.limit}`;
    case 'minimum':
    case 'exclusiveMinimum':
      return `must be ${e.keyword === 'minimum' ? 'at least' : 'more than'} ${p.limit}`;
    case 'maxItems':
      return `must hold at most ${plural(p.limit, 'item')}`;
    case 'minItems':
      return `must hold at least ${plural(p.limit, 'item')}`;
    case 'uniqueItems':
      return `must not hold the same item twice (items ${p.j} and ${p.i} are equal)`;
    case 'maxProperties':
      return `must hold at most ${plural(p.limit, 'entry', 'entries')}`;
    case 'minProperties':
      return e.instancePath === '' && p.limit === 1 ? 'must name at least one field' : `must hold at least ${plural(p.limit, 'entry', 'entries')}`;
    case 'anyOf':
    case 'oneOf': {
      const branches = (parent?.[e.keyword] as Schema[] | undefined) ?? [];
      return `must be ${orList(branches.map(describe))}`;
    }
    default:
      return e.message ?? 'is invalid';
  }
}

const pathOf = (e: ErrorObject) => {
  const p = e.params as Record<string, unknown>;
  const child = p.missingProperty ?? p.additionalProperty;
  return `${e.instancePath}${child === undefined ? '' : `/${String(child)}`}` || '/';
};

/** The `null` branch of a nullable value, failing because a value was sent: never news. */
const isNullBranch = (e: ErrorObject) => e.keyword === 'type' && (e.params as { type?: string }).type === 'null' && /\/(anyOf|oneOf)\/\d+\/type$/.test(e.schemaPath);

const isUnder = (path: string, parent: string) => path === parent || path.startsWith(`${parent}/`);

/**
 * Ajv's errors as field errors: branch noise dropped (an anyOf whose branch
 * errors explain it), type errors at one place merged ("a string or null"),
 * duplicates removed, at most `cap`; `more` counts the rest.
 */
export function fieldErrors(errors: readonly ErrorObject[], cap = MAX_FIELD_ERRORS): { errors: FieldError[]; more: number } {
  const kept = errors.filter((e) => !isNullBranch(e));
  const explainedAll = kept.filter((e) => {
    if (e.keyword !== 'anyOf' && e.keyword !== 'oneOf') return true;
    return !kept.some((o) => o !== e && o.keyword !== 'anyOf' && o.keyword !== 'oneOf' && isUnder(o.instancePath, e.instancePath));
  });
  // an enum's message lists its values, which says the type too
  const enumAt = new Set(explainedAll.filter((e) => e.keyword === 'enum').map((e) => e.instancePath));
  const explained = explainedAll.filter((e) => !(e.keyword === 'type' && enumAt.has(e.instancePath)));
  const typesAt = new Map<string, string[]>();
  for (const e of explained) if (e.keyword === 'type') typesAt.set(e.instancePath, [...(typesAt.get(e.instancePath) ?? []), ...String((e.params as { type: string }).type).split(',')]);
  const out = new Map<string, FieldError>();
  for (const e of explained) {
    const path = pathOf(e);
    const text = e.keyword === 'type' ? typeMessage(typesAt.get(e.instancePath)!, e.parentSchema as Schema | undefined) : message(e);
    out.set(`${path}\u0000${text}`, { path, message: text });
  }
  const all = [...out.values()];
  return { errors: all.slice(0, cap), more: Math.max(0, all.length - cap) };
}
