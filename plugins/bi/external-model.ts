// The tables of an application's external data sources in its semantic model.
// A source's test introspects its schema (ctx.externalDb().describe) into the
// table list the source row keeps (`tables`): each table and view with the
// columns analytics can use, typed as BI types (integers and decimals are
// measures, dates and timestamps time dimensions, the rest dimensions) and
// labelled from their names. In the model a table is `<source>.<table>`: a
// tenant entity's name starts with a capital and has no dot, so the two never
// collide. Columns of types analytics cannot group or compare (json, arrays,
// binary data, intervals…) and names that are no plain identifier are left
// out, and named in `skipped`.
import type { ExternalColumn, ExternalTable, TypedColumn } from '../../core/plugin-api.ts';

/** A column as analytics reads it (name, label, BI type, PostgreSQL type, scale, enum values), with what the source said of it. */
export interface SourceColumn extends TypedColumn {
  nullable: boolean;
  description?: string;
}

export interface SourceTable {
  name: string;
  label: string;
  kind: string;
  rowEstimate: number | null;
  description?: string;
  columns: SourceColumn[];
  /** columns analytics cannot use: "name (type)" */
  skipped?: string[];
}

/** A name SQL needs no care for beyond quoting, and the query language can spell. */
const PLAIN = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;
export const SOURCE_NAME = /^[a-z][a-z0-9_]{0,39}$/;

const BI_TYPES: Record<string, string> = {
  int2: 'integer',
  int4: 'integer',
  int8: 'integer',
  numeric: 'decimal',
  float4: 'decimal',
  float8: 'decimal',
  text: 'string',
  varchar: 'string',
  bpchar: 'string',
  name: 'string',
  citext: 'string',
  uuid: 'uuid',
  bool: 'boolean',
  date: 'date',
  timestamp: 'datetime',
  timestamptz: 'datetime',
};

/** "order_date" → "Order date" */
function labelOf(name: string): string {
  const words = name.replace(/_+/g, ' ').trim() || name;
  return words[0].toUpperCase() + words.slice(1);
}

function columnOf(c: ExternalColumn): SourceColumn | null {
  const type = c.category === 'E' ? 'enum' : BI_TYPES[c.type];
  if (!type || !PLAIN.test(c.name)) return null;
  return {
    name: c.name,
    label: labelOf(c.name),
    type,
    dbType: c.type,
    nullable: c.nullable,
    ...(c.scale !== undefined ? { scale: c.scale } : {}),
    ...(c.values ? { values: c.values } : {}),
    ...(c.description ? { description: c.description.slice(0, 1000) } : {}),
  };
}

/** The introspected tables as a source keeps them: usable columns typed for BI, tables with a plain name and at least one such column. */
export function sourceTablesOf(tables: ExternalTable[], maxColumns: number): SourceTable[] {
  return tables.flatMap((t) => {
    if (!PLAIN.test(t.name)) return [];
    const columns: SourceColumn[] = [];
    const skipped: string[] = [];
    for (const c of t.columns) {
      const usable = columns.length < maxColumns ? columnOf(c) : null;
      if (usable) columns.push(usable);
      else skipped.push(`${c.name} (${c.type})`);
    }
    if (!columns.length) return [];
    return [
      {
        name: t.name,
        label: labelOf(t.name),
        kind: t.kind,
        rowEstimate: t.rowEstimate,
        ...(t.description ? { description: t.description.slice(0, 1000) } : {}),
        columns,
        ...(skipped.length ? { skipped } : {}),
      },
    ];
  });
}

/** "warehouse.orders" → its source and table names; undefined for an entity's name. */
export function externalName(table: unknown): { source: string; table: string } | undefined {
  if (typeof table !== 'string') return undefined;
  const dot = table.indexOf('.');
  if (dot < 0) return undefined;
  return { source: table.slice(0, dot), table: table.slice(dot + 1) };
}
