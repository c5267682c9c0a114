// One NULL semantics for grant conditions, wherever they are evaluated (the SQL
// reader, the write path's row load through MikroORM, CASL in memory): a field
// without a value is distinct from every value. So `$ne: v` and `$nin: [..]`
// hold for NULL (as CASL says: null !== v), while `$eq`, `$in` and the range
// operators do not; `$eq: null` / `$ne: null` test for NULL. The SQL reader
// compiles this directly (`is distinct from`, `is null or not = any`);
// MikroORM's `!=` and `not in` drop NULLs, so its filters are widened here.
type Condition = Record<string, unknown>;

const isOperators = (v: unknown): v is Condition =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Date) && Object.keys(v).every((k) => k.startsWith('$'));

/** The condition as a MikroORM filter with the semantics above. */
export function forMikroOrm(cond: Condition): Condition {
  const parts: Condition[] = [];
  for (const [key, value] of Object.entries(cond)) {
    if (key === '$and' || key === '$or') parts.push({ [key]: (value as Condition[]).map(forMikroOrm) });
    else if (key === '$not') parts.push({ $not: forMikroOrm(value as Condition) });
    else if (isOperators(value)) {
      for (const [op, v] of Object.entries(value)) {
        const test = { [key]: { [op]: v } };
        parts.push((op === '$ne' && v !== null) || op === '$nin' ? { $or: [test, { [key]: null }] } : test);
      }
    } else parts.push({ [key]: value });
  }
  return parts.length === 1 ? parts[0] : { $and: parts };
}
