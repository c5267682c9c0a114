// Names the scaffolder derives (labels, URL segments, permission codes) and the
// names it refuses. Plurals come from the kernel, so a URL segment and the table
// the kernel derives from the same entity always agree.
import { plural } from '../../core/model/entity-model.ts';

export const MODULE_ID = /^[a-z][a-z0-9-]{1,30}$/;
export const ENTITY_NAME = /^[A-Z][A-Za-z0-9]{1,40}$/;
export const FIELD_NAME = /^[a-z][A-Za-z0-9]{0,40}$/;
export const AREA = /^[a-z][a-z0-9-]*$/;
export const PREFIX = /^(\/[a-z0-9][a-z0-9-]*)+$/;
export const ICON = /^[a-z0-9][a-z0-9-]*$/;

/** Words of an identifier in lower case: SalesOrder → sales order, isActive → is active, HTTPProxy → http proxy. */
export const words = (name: string): string[] => (name.match(/[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+/g) ?? [name]).map((w) => w.toLowerCase());

export const kebab = (name: string) => words(name).join('-');
export const camel = (id: string) => id.replace(/-./g, (m) => m[1].toUpperCase());
export const capitalize = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/** Spelled in capitals in labels. */
const ACRONYMS = new Set(['api', 'bic', 'csv', 'ean', 'gtin', 'html', 'http', 'iban', 'id', 'ip', 'isbn', 'iso', 'pdf', 'sku', 'sla', 'url', 'uuid', 'vat']);

/** A label from words: first word capitalised, acronyms in capitals ("SKU", "Available from"). */
export function sentence(ws: string[]): string {
  return ws.map((w, i) => (ACRONYMS.has(w) ? w.toUpperCase() : i === 0 ? capitalize(w) : w)).join(' ');
}

/** The label a field gets unless the spec names one: categoryId → Category, isActive → Active. */
export function fieldLabel(name: string, type: string): string {
  let ws = words(name);
  if (type === 'ref' && ws.length > 1 && ws.at(-1) === 'id') ws = ws.slice(0, -1);
  if (type === 'boolean' && ws.length > 1 && ws[0] === 'is') ws = ws.slice(1);
  return sentence(ws);
}

export const entityLabel = (name: string) => sentence(words(name));

/** "Sales order" → "Sales orders"; only the last word changes. */
export const pluralLabel = (label: string) => label.replace(/(\S+)$/, (w) => (/^[A-Z0-9]+$/.test(w) ? `${w}s` : plural(w)));

/** URL segment of an entity: Category → categories, SalesOrder → sales-orders (or the spec's plural). */
export const pluralSegment = (entity: string, pluralName?: string) => (pluralName ? kebab(pluralName) : plural(kebab(entity)));

/** Lower-cases a label for running text unless it starts with an acronym ("SKU lists" stays). */
export const inText = (label: string) => (/^[A-Z0-9]{2}/.test(label) ? label : label.charAt(0).toLowerCase() + label.slice(1));

/** "a", "a and b", "a, b and c" */
export function joinAnd(items: string[]): string {
  return items.length <= 1 ? items.join('') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`;
}

export const moduleName = (id: string) => id.split('-').map(capitalize).join(' ');

/** Ids that would shadow kernel areas (routes, operationId prefixes, menu paths). */
export const RESERVED_MODULES = new Set(['api', 'api-docs', 'auth', 'health', 'platform']);

/** Kernel-provided or kernel-claimed field names (list query parameters included). */
export const KERNEL_FIELDS = new Map<string, string>([
  ['id', 'the kernel gives every entity its UUIDv7 "id"'],
  ['createdAt', 'the kernel keeps "createdAt" on every entity'],
  ['updatedAt', 'the kernel keeps "updatedAt" on every entity'],
  ['version', 'the kernel keeps "version" (the optimistic lock behind ETags) on every entity'],
  ['translations', '"translations" carries the languages of translatable fields'],
  ['page', '"page" is a list query parameter'],
  ['size', '"size" is a list query parameter'],
  ['sort', '"sort" is a list query parameter'],
  ['search', '"search" is a list query parameter'],
]);

const JS_RESERVED = `arguments await break case catch class const constructor continue debugger default delete do else enum eval
  export extends false finally for function hasOwnProperty if implements import in instanceof interface isPrototypeOf let new null
  package private propertyIsEnumerable protected prototype public return static super switch this throw toLocaleString toString true
  try typeof undefined valueOf var void while with yield __proto__ __defineGetter__ __defineSetter__ __lookupGetter__ __lookupSetter__`;

// PostgreSQL's reserved key words (SQL Key Words appendix, "reserved" in the PostgreSQL column).
const SQL_RESERVED = `all analyse analyze and any array as asc asymmetric both case cast check collate column constraint create
  current_catalog current_date current_role current_time current_timestamp current_user default deferrable desc distinct do else
  end except false fetch for foreign from grant group having in initially intersect into lateral leading limit localtime
  localtimestamp not null offset on only or order placing primary references returning select session_user some symmetric
  system_user table then to trailing true union unique user using variadic when where window with`;

export const JS_WORDS = new Set(JS_RESERVED.split(/\s+/));
export const SQL_WORDS = new Set(SQL_RESERVED.split(/\s+/));

/** Entity names that collide with JavaScript globals (subjects, generated code, readers). */
export const RESERVED_ENTITIES = new Set(
  `Array ArrayBuffer BigInt Boolean Buffer DataView Date Error EvalError Function Infinity Intl
  Iterator JSON Map Math NaN Number Object Promise Proxy RangeError Record ReferenceError Reflect RegExp Set String Symbol SyntaxError
  TypeError URIError URL WeakMap WeakRef WeakSet`.split(/\s+/),
);
