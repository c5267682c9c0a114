// Which fields a unique_violation (23505) is about, read from PostgreSQL's
// detail "Key (company_id, sku)=(…) already exists." (the driver's error and
// MikroORM's wrapper both carry it). Only the column names are used: the values
// stay out of the answer. Columns are snake_case field names (manifest/names.ts).

const FIELD = /^[a-z][a-z0-9]*(_[a-z0-9]+)*$/;
const fieldOf = (column: string) => column.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());

/** The API field names of the violated unique key, or [] when the detail names none (an expression index). */
export function uniqueViolationFields(err: { detail?: unknown }): string[] {
  const key = typeof err.detail === 'string' ? /^Key \((.+?)\)=\(/.exec(err.detail)?.[1] : undefined;
  if (!key) return [];
  const columns = key.split(', ').map((c) => c.replace(/^"(.*)"$/, '$1'));
  if (!columns.every((c) => FIELD.test(c))) return [];
  // a company-scoped entity's unique keys lead with its company: the scope, not what clashed
  const clashing = columns.length > 1 && columns[0] === 'company_id' ? columns.slice(1) : columns;
  return clashing.map(fieldOf);
}
