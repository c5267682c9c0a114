// The grant conditions the kernel can turn into SQL, checked when manifests
// load: a condition the query compiler cannot express (an unknown operator such
// as $regex, a field the subject does not have, a malformed value) stops the
// start with the file and JSON pointer, never a 500 on a later list.
import { escapePointer } from './field-rules.ts';

/** Comparison operators on one field (the SQL reader compiles exactly these). */
export const FIELD_OPERATORS = ['$eq', '$ne', '$gt', '$gte', '$lt', '$lte', '$in', '$nin'] as const;
/** Operators that combine conditions. */
export const LOGICAL_OPERATORS = ['$and', '$or', '$not'] as const;
/** Columns every entity has beside its manifest fields (companyId: company-scoped ones). */
export const KERNEL_FIELDS = ['id', 'createdAt', 'updatedAt', 'version'] as const;

const FIELD_OPS = new Set<string>(FIELD_OPERATORS);
const LIST_OPS = new Set(['$in', '$nin']);

export interface ConditionFault { pointer: string; message: string }

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
// "${user.companyIds}" stands for a list of the caller's values
const isListPlaceholder = (v: unknown) => typeof v === 'string' && /^\$\{[a-zA-Z.]+\}$/.test(v);
const isScalar = (v: unknown) => v === null || ['string', 'number', 'boolean'].includes(typeof v);

/** Faults of `cond` (relative to `at`) for a subject whose fields are `fields`. */
export function conditionFaults(cond: unknown, fields: Set<string>, at = ''): ConditionFault[] {
  if (!isPlainObject(cond)) return [{ pointer: at || '/', message: 'must be an object of field conditions' }];
  return Object.entries(cond).flatMap(([key, value]) => {
    const ptr = `${at}/${escapePointer(key)}`;
    if (key === '$and' || key === '$or') {
      if (!Array.isArray(value) || !value.length) return [{ pointer: ptr, message: `${key} takes a non-empty list of conditions` }];
      return value.flatMap((c, i) => conditionFaults(c, fields, `${ptr}/${i}`));
    }
    if (key === '$not') return conditionFaults(value, fields, ptr);
    if (key.startsWith('$')) return [{ pointer: ptr, message: `unsupported operator ${key} (use ${[...LOGICAL_OPERATORS, ...FIELD_OPERATORS].join(', ')})` }];
    if (!fields.has(key)) return [{ pointer: ptr, message: `no field "${key}" on this subject` }];
    return valueFaults(value, ptr);
  });
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
