// What the analytics builder offers for one table of the semantic model (GET
// /api/bi/schema): its fields and those one reference away ("customerId.name")
// as dimensions and filters, its numbers as measures, its dates as time
// dimensions; each choice with the label a user reads, in their language
// (`text`: the module's texts).
import type { BiTable } from './semantic-model.ts';
import type { Text } from './page-support.ts';

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

/** An aggregation's name ("Sum") and a measure of it ("Sum of {field}"), as keys of the module's texts. */
const AGGREGATIONS: Record<string, { name: string; of: string }> = {
  count: { name: 'measure.count', of: 'measure.countOf' },
  countDistinct: { name: 'measure.countDistinct', of: 'measure.countDistinctOf' },
  sum: { name: 'measure.sum', of: 'measure.sumOf' },
  avg: { name: 'measure.avg', of: 'measure.avgOf' },
  min: { name: 'measure.min', of: 'measure.minOf' },
  max: { name: 'measure.max', of: 'measure.maxOf' },
};
const OPERATORS: Record<string, string> = {
  equals: 'filter.op.equals',
  notEquals: 'filter.op.notEquals',
  in: 'filter.op.in',
  notIn: 'filter.op.notIn',
  gt: 'filter.op.gt',
  gte: 'filter.op.gte',
  lt: 'filter.op.lt',
  lte: 'filter.op.lte',
  contains: 'filter.op.contains',
  startsWith: 'filter.op.startsWith',
  set: 'filter.op.set',
  notSet: 'filter.op.notSet',
};
const GRANULARITIES: Record<string, string> = { day: 'period.day', week: 'period.week', month: 'period.month', quarter: 'period.quarter', year: 'period.year' };

/** The text of `value` in `keys` (a filter operator, a granularity), or the value itself if it has none. */
const named = (keys: Record<string, string>, value: string, text: Text) => (Object.hasOwn(keys, value) ? text(keys[value]) : value);
export const operatorLabel = (op: string, text: Text) => named(OPERATORS, op, text);
export const granularityLabel = (granularity: string, text: Text) => named(GRANULARITIES, granularity, text);

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
export function fieldsOf(table: BiTable, tables: BiTable[], text: Text): TableFields {
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
    label: text(AGGREGATIONS[agg].name),
    options: fields.map((f) => ({ value: `${agg}:${f.path}`, label: text(AGGREGATIONS[agg].of, { field: f.label }) })),
  });
  return {
    table,
    byPath,
    dimensions: [{ label: table.label, options: options(own.filter(groupable)) }, ...refs.map((r) => ({ label: r.label, options: options(r.fields.filter(groupable)) }))].filter(
      (g) => g.options.length,
    ),
    measures: [
      { label: text('measure.rows'), options: [{ value: 'count', label: text('measure.countOfRows') }] },
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
export function measureLabel(fields: TableFields, value: string, text: Text): string {
  if (value === 'count') return text('measure.countOfRows');
  const [agg, path] = value.split(':');
  const field = fields.byPath.get(path)?.label ?? path;
  // an aggregation the address names but the model lacks: the API will say why
  return Object.hasOwn(AGGREGATIONS, agg) ? text(AGGREGATIONS[agg].of, { field }) : text('measure.otherOf', { agg, field });
}

/** Option groups with the chosen value marked, for a <select> of the template. */
export function chosen(groups: OptionGroup[], value: string | undefined, text: Text) {
  const out = groups.map((g) => ({ label: g.label, options: g.options.map((o) => ({ ...o, selected: o.value === value })) }));
  // a choice the address names but the model does not offer (any more) stays chosen, so the API can say why
  if (value && !groups.some((g) => g.options.some((o) => o.value === value))) out.push({ label: text('analytics.notOffered'), options: [{ value, label: value, selected: true }] });
  return out;
}

export const chosenOptions = (opts: Option[], value: string | undefined) => opts.map((o) => ({ ...o, selected: o.value === value }));
