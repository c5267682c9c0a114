// What the analytics builder offers for one table of the semantic model (GET
// /api/bi/schema): its fields and those one reference away ("customerId.name")
// as dimensions and filters, its numbers as measures, its dates as time
// dimensions; each choice with the label a user reads.
import type { BiTable } from './semantic-model.ts';

export interface FieldRef {
  path: string;
  label: string;
  type: string;
  role: 'dimension' | 'measure' | 'time';
  values?: string[];
}

export interface Option {
  value: string;
  label: string;
}

export interface OptionGroup {
  label: string;
  options: Option[];
}

const AGG_LABELS: Record<string, string> = { count: 'Count', countDistinct: 'Count distinct', sum: 'Sum', avg: 'Average', min: 'Minimum', max: 'Maximum' };
export const OP_LABELS: Record<string, string> = {
  equals: 'is',
  notEquals: 'is not',
  in: 'is one of',
  notIn: 'is none of',
  gt: 'greater than',
  gte: 'at least',
  lt: 'less than',
  lte: 'at most',
  contains: 'contains',
  startsWith: 'starts with',
  set: 'has a value',
  notSet: 'has no value',
};
export const GRANULARITY_LABELS: Record<string, string> = { day: 'Day', week: 'Week', month: 'Month', quarter: 'Quarter', year: 'Year' };

/** Grouping by a unique id or a long text answers one group per row: not offered. */
const groupable = (f: FieldRef) => f.role === 'dimension' && f.type !== 'id' && f.type !== 'text';

export interface TableFields {
  table: BiTable;
  /** every field path offered, by path */
  byPath: Map<string, FieldRef>;
  dimensions: OptionGroup[];
  measures: OptionGroup[];
  times: Option[];
  filters: OptionGroup[];
}

const options = (fields: FieldRef[]) => fields.map((f) => ({ value: f.path, label: f.label }));

/** The builder's choices for `table`, given every table the caller may read. */
export function fieldsOf(table: BiTable, tables: BiTable[]): TableFields {
  const own: FieldRef[] = table.fields.map((f) => ({ path: f.name, label: f.label, type: f.type, role: f.role, ...(f.values ? { values: f.values } : {}) }));
  const refs = table.fields.flatMap((f) => {
    const target = f.ref ? tables.find((t) => t.name === f.ref) : undefined;
    if (!target) return [];
    const fields: FieldRef[] = target.fields
      .filter((g) => g.type !== 'ref' && g.type !== 'id' && g.type !== 'text')
      .map((g) => ({ path: `${f.name}.${g.name}`, label: `${f.label} › ${g.label}`, type: g.type, role: g.role, ...(g.values ? { values: g.values } : {}) }));
    return fields.length ? [{ label: f.label, fields }] : [];
  });
  const byPath = new Map([...own, ...refs.flatMap((r) => r.fields)].map((f) => [f.path, f]));
  const numbers = own.filter((f) => f.role === 'measure');
  const ordered = own.filter((f) => f.role === 'measure' || f.role === 'time');
  const distinct = own.filter((f) => groupable(f) || f.role === 'measure');
  const measure = (agg: string, fields: FieldRef[]) => ({
    label: AGG_LABELS[agg],
    options: fields.map((f) => ({ value: `${agg}:${f.path}`, label: `${AGG_LABELS[agg]} of ${f.label}` })),
  });
  return {
    table,
    byPath,
    dimensions: [{ label: table.label, options: options(own.filter(groupable)) }, ...refs.map((r) => ({ label: r.label, options: options(r.fields.filter(groupable)) }))].filter(
      (g) => g.options.length,
    ),
    measures: [
      { label: 'Rows', options: [{ value: 'count', label: 'Count of rows' }] },
      measure('sum', numbers),
      measure('avg', numbers),
      measure('min', ordered),
      measure('max', ordered),
      measure('countDistinct', distinct),
    ].filter((g) => g.options.length),
    times: options(own.filter((f) => f.role === 'time')),
    filters: [{ label: table.label, options: options(own) }, ...refs.map((r) => ({ label: r.label, options: options(r.fields) }))].filter((g) => g.options.length),
  };
}

/** The label of a measure choice ("sum:amount" → "Sum of Amount"). */
export function measureLabel(fields: TableFields, value: string): string {
  if (value === 'count') return 'Count of rows';
  const [agg, path] = value.split(':');
  return `${AGG_LABELS[agg] ?? agg} of ${fields.byPath.get(path)?.label ?? path}`;
}

/** Option groups with the chosen value marked, for a <select> of the template. */
export function chosen(groups: OptionGroup[], value: string | undefined) {
  const out = groups.map((g) => ({ label: g.label, options: g.options.map((o) => ({ ...o, selected: o.value === value })) }));
  // a choice the address names but the model does not offer (any more) stays chosen, so the API can say why
  if (value && !groups.some((g) => g.options.some((o) => o.value === value))) out.push({ label: 'Not offered', options: [{ value, label: value, selected: true }] });
  return out;
}

export const chosenOptions = (opts: Option[], value: string | undefined) => opts.map((o) => ({ ...o, selected: o.value === value }));
