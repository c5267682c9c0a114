// The grant conditions the kernel can turn into SQL, checked when manifests
// load: a condition the query compiler cannot express (an unknown operator such
// as $regex, a field the subject does not have, a malformed value) stops the
// start with the file and JSON pointer, never a 500 on a later list.
import { escapePointer } from './field-rules.ts';

/** Comparison operators on one field (data/scope.ts compiles exactly these: its table is typed by this list). */
export const FIELD_OPERATORS = ['$eq', '$ne', '$gt', '$gte', '$lt', '$lte', '$in', '$nin'] as const;
export type FieldOperator = (typeof FIELD_OPERATORS)[number];
/** Operators that combine conditions; $exists relates another entity's rows (see data/scope.ts). */
const LOGICAL_OPERATORS = ['$and', '$or', '$not', '$exists'] as const;
/** Columns every entity has beside its manifest fields (companyId: company-scoped ones). */
export const KERNEL_FIELDS = ['id', 'createdAt', 'updatedAt', 'version'] as const;
export type KernelField = (typeof KERNEL_FIELDS)[number] | 'companyId';

const FIELD_OPS = new Set<string>(FIELD_OPERATORS);
const LIST_OPS = new Set(['$in', '$nin']);

export interface ConditionFault {
  pointer: string;
  message: string;
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
// "${user.companyIds}" stands for a list of the caller's values
const isListPlaceholder = (v: unknown) => typeof v === 'string' && /^\$\{[a-zA-Z.]+\}$/.test(v);
const isScalar = (v: unknown) => v === null || ['string', 'number', 'boolean'].includes(typeof v);

/**
 * The fields of an entity conditions may name: true for comparable ones,
 * false for those holding documents (json, translations, secrets).
 */
export type FieldsOf = (entity: string) => Map<string, boolean> | undefined;

/** Relational conditions nest at most this deep: each level is one subquery. */
const MAX_EXISTS_DEPTH = 3;

/** Faults of `cond` (relative to `at`) for rows of `subject`. */
export function conditionFaults(cond: unknown, subject: string, fieldsOf: FieldsOf, at = '', depth = 0): ConditionFault[] {
  if (!isPlainObject(cond)) return [{ pointer: at || '/', message: 'must be an object of field conditions' }];
  const fields = fieldsOf(subject);
  if (!fields) return [{ pointer: at || '/', message: `conditions need an entity subject; "${subject}" is none` }];
  return Object.entries(cond).flatMap(([key, value]) => {
    const ptr = `${at}/${escapePointer(key)}`;
    if (key === '$and' || key === '$or') {
      if (!Array.isArray(value) || !value.length) return [{ pointer: ptr, message: `${key} takes a non-empty list of conditions` }];
      return value.flatMap((c, i) => conditionFaults(c, subject, fieldsOf, `${ptr}/${i}`, depth));
    }
    if (key === '$not') return conditionFaults(value, subject, fieldsOf, ptr, depth);
    if (key === '$exists') return existsFaults(value, subject, fieldsOf, ptr, depth);
    if (key.startsWith('$')) return [{ pointer: ptr, message: `unsupported operator ${key} (use ${[...LOGICAL_OPERATORS, ...FIELD_OPERATORS].join(', ')})` }];
    const comparable = fields.get(key);
    if (comparable === undefined) return [{ pointer: ptr, message: `no field "${key}" on ${subject}` }];
    if (!comparable) return [{ pointer: ptr, message: `${subject}.${key} holds a document (json, translations or a secret); conditions compare plain values only` }];
    return valueFaults(value, ptr);
  });
}

/** { entity, on: { theirField: ourField }, where? } */
function existsFaults(value: unknown, subject: string, fieldsOf: FieldsOf, ptr: string, depth: number): ConditionFault[] {
  if (!isPlainObject(value)) return [{ pointer: ptr, message: '$exists takes { entity, on, where }' }];
  if (depth >= MAX_EXISTS_DEPTH) return [{ pointer: ptr, message: `$exists nests at most ${MAX_EXISTS_DEPTH} deep` }];
  const unknown = Object.keys(value).filter((k) => !['entity', 'on', 'where'].includes(k));
  if (unknown.length) return [{ pointer: `${ptr}/${escapePointer(unknown[0])}`, message: 'is not a known key of $exists (entity, on, where)' }];
  const { entity, on, where } = value;
  if (typeof entity !== 'string' || !fieldsOf(entity)) return [{ pointer: `${ptr}/entity`, message: `names no entity: ${JSON.stringify(entity)}` }];
  if (!isPlainObject(on) || !Object.keys(on).length) return [{ pointer: `${ptr}/on`, message: `maps fields of ${entity} to fields of ${subject}: { "projectId": "id" }` }];
  const theirs = fieldsOf(entity)!;
  const ours = fieldsOf(subject)!;
  const joinFaults = Object.entries(on).flatMap(([their, our]) => {
    const at = `${ptr}/on/${escapePointer(their)}`;
    if (!theirs.get(their)) return [{ pointer: at, message: `no comparable field "${their}" on ${entity}` }];
    return typeof our === 'string' && ours.get(our) ? [] : [{ pointer: at, message: `must name a comparable field of ${subject}` }];
  });
  if (joinFaults.length || where === undefined) return joinFaults;
  return conditionFaults(where, entity, fieldsOf, `${ptr}/where`, depth + 1);
}

function valueFaults(value: unknown, ptr: string): ConditionFault[] {
  if (isScalar(value)) return [];
  if (!isPlainObject(value) || !Object.keys(value).length) return [{ pointer: ptr, message: 'must be a value or an object of operators' }];
  return Object.entries(value).flatMap(([op, v]) => {
    const opPtr = `${ptr}/${escapePointer(op)}`;
    if (!FIELD_OPS.has(op)) return [{ pointer: opPtr, message: `unsupported operator ${op} (use ${FIELD_OPERATORS.join(', ')})` }];
    if (LIST_OPS.has(op)) {
      return (Array.isArray(v) && v.every(isScalar)) || isListPlaceholder(v) ? [] : [{ pointer: opPtr, message: `${op} takes a list of values` }];
    }
    return isScalar(v) ? [] : [{ pointer: opPtr, message: `${op} takes one value` }];
  });
}
