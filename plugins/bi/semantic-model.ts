// The semantic model, derived from the loaded manifests as the caller may
// read them (ctx.model()): every entity they may read is a table, each field
// they may read a dimension, a measure (integers and decimals) or a time
// dimension (dates and datetimes), and each reference between two such
// tables a relation. Nothing is declared twice: a new module's entities
// appear here as soon as it is loaded and the caller holds its codes.
import { handler, httpError, Type, validationError, type EntityInfo, type FieldInfo, type ModuleContext } from '../../core/plugin-api.ts';
import { parseQuery, perCurrency, type ParsedQuery, type Role } from './query.ts';

/** Field types analytics cannot group, measure or filter (documents, texts stored per language). */
const UNUSABLE = new Set(['json']);

export interface BiField {
  name: string;
  label: string;
  type: string;
  role: Role;
  /** a ref: the table it points at */
  ref?: string;
  values?: string[];
  /** an amount of money: the field (path) of its table holding its currency */
  currency?: string;
}

export interface BiTable {
  name: string;
  label: string;
  /** the module declaring the entity; "external" for a table of a data source, "queries" for a saved query */
  module: string;
  /** a data source's table: the source's name */
  source?: string;
  description?: string;
  fields: BiField[];
}

export function roleOf(type: string): Role {
  if (type === 'integer' || type === 'decimal') return 'measure';
  if (type === 'date' || type === 'datetime') return 'time';
  return 'dimension';
}

const usable = (f: FieldInfo) => f.readable && !UNUSABLE.has(f.type) && !f.translatable;

/** The tables the caller may read, each with the fields they may read. */
export function tablesOf(ctx: ModuleContext): BiTable[] {
  return ctx
    .model()
    .filter((e) => e.readable)
    .map((e: EntityInfo) => ({
      name: e.name,
      label: e.label,
      module: e.module,
      ...(e.description ? { description: e.description } : {}),
      fields: e.fields.filter(usable).map((f) => ({
        name: f.name,
        label: f.label,
        type: f.type,
        role: roleOf(f.type),
        ...(f.ref ? { ref: f.ref } : {}),
        ...(f.values ? { values: f.values } : {}),
        ...(f.currency ? { currency: f.currency } : {}),
      })),
    }));
}

export interface BiRelation {
  name: string;
  from: string;
  field: string;
  to: string;
  toField: 'id';
  cardinality: 'many-to-one';
  label: string;
}

/** The references between readable tables: what a dimension path ("projectId.name") may follow. */
export function relationsOf(tables: BiTable[]): BiRelation[] {
  const names = new Set(tables.map((t) => t.name));
  return tables.flatMap((t) =>
    t.fields
      .filter((f) => f.ref && names.has(f.ref))
      .map((f) => ({ name: `${t.name}.${f.name}`, from: t.name, field: f.name, to: f.ref!, toField: 'id' as const, cardinality: 'many-to-one' as const, label: `${t.label} → ${f.label}` })),
  );
}

/** A query over an entity checked for shape and its table against the caller's model; its fields are the kernel's to check. */
export function entityQuery(ctx: ModuleContext, input: unknown, tables: BiTable[] = tablesOf(ctx)): ParsedQuery {
  const parsed = parseQuery(input, ctx.timeZone, (table, path) => fieldOf(tables, table, path)?.type);
  if (!tables.some((t) => t.name === parsed.table)) {
    const exists = ctx.model().some((e) => e.name === parsed.table);
    // an entity the caller may not read is refused as its own routes refuse it; an unknown name is a bad query
    if (exists) throw httpError('FORBIDDEN', `not allowed to read ${parsed.table}`, { errors: [{ path: '/table', message: 'is a table you may not read' }] });
    throw validationError([{ path: '/table', message: `names no table: GET /api/bi/app-tables lists them` }]);
  }
  return perCurrency(parsed, (path) => currencyOf(fieldOf(tables, parsed.table, path), path));
}

/** The path of the currency of money field `field` at `path` ("opportunityId.amount" → "opportunityId.currency"). */
function currencyOf(field: BiField | undefined, path: string): string | undefined {
  if (!field?.currency) return undefined;
  const at = path.lastIndexOf('.');
  return at < 0 ? field.currency : `${path.slice(0, at)}.${field.currency}`;
}

/** The field at a path from `table` ("projectId.name"), or undefined when the caller's model lacks it (the kernel then says why). */
function fieldOf(tables: BiTable[], table: string, path: string): BiField | undefined {
  const byName = new Map(tables.map((t) => [t.name, t]));
  let current = byName.get(table);
  const parts = path.split('.');
  for (let i = 0; i < parts.length; i++) {
    const f = current?.fields.find((x) => x.name === parts[i]);
    if (!f) return undefined;
    if (i === parts.length - 1) return f;
    current = f.ref ? byName.get(f.ref) : undefined;
  }
  return undefined;
}

const Field = Type.Object(
  {
    name: Type.String(),
    label: Type.String(),
    type: Type.String({ description: 'the manifest type (string, text, integer, decimal, boolean, date, datetime, enum, ref) or id' }),
    role: Type.Unsafe<Role>({ type: 'string', enum: ['dimension', 'measure', 'time'] }),
    ref: Type.Optional(Type.String({ description: 'ref: the table it points at' })),
    values: Type.Optional(Type.Array(Type.String(), { description: 'enum: its values' })),
    currency: Type.Optional(Type.String({ description: 'an amount of money: the field (path) holding its currency; sums, averages, minimums and maximums of it come out per currency' })),
  },
  { additionalProperties: false },
);
export const Table = Type.Object(
  {
    name: Type.String({ description: 'an entity; of the application asked for, `<source>.<table>` of a data source or `query:<id>` of a saved query' }),
    label: Type.String(),
    module: Type.String({ description: 'the module declaring the entity; external for a data source table, queries for a saved query' }),
    source: Type.Optional(Type.String({ description: "a data source table: the source's name" })),
    description: Type.Optional(Type.String()),
    fields: Type.Array(Field),
  },
  { additionalProperties: false },
);
export const Relation = Type.Object(
  {
    name: Type.String(),
    from: Type.String(),
    field: Type.String(),
    to: Type.String(),
    toField: Type.Literal('id'),
    cardinality: Type.Literal('many-to-one'),
    label: Type.String(),
  },
  { additionalProperties: false },
);
const NoQuery = Type.Object({}, { additionalProperties: false });
export const AppQuery = Type.Object(
  { app: Type.Optional(Type.String({ format: 'uuid', description: "an application: its data sources' tables and its saved queries are listed too (404 for one the caller cannot read)" })) },
  { additionalProperties: false },
);
export const listOf = (item: typeof Table | typeof Relation, description: string) =>
  Type.Object({ items: Type.Array(item), page: Type.Integer(), size: Type.Integer(), total: Type.Integer() }, { additionalProperties: false, description });

export const all = <T>(items: T[]) => ({ items, page: 1, size: items.length, total: items.length });

export const listRelations = handler({ querystring: NoQuery, response: { 200: listOf(Relation, 'References between tables the caller may read') } }, async (ctx) => all(relationsOf(tablesOf(ctx))));

const Size = Type.Integer({ minimum: 0, description: 'bytes, indexes and TOAST included' });

export const getDatabase = handler(
  {
    querystring: NoQuery,
    response: {
      200: Type.Object(
        {
          serverVersion: Type.String(),
          totalBytes: Size,
          modules: Type.Array(
            Type.Object(
              {
                module: Type.String(),
                bytes: Size,
                tables: Type.Array(Type.Object({ table: Type.String(), label: Type.String(), bytes: Size }, { additionalProperties: false }), { description: 'largest first' }),
              },
              { additionalProperties: false },
            ),
            { description: 'largest first' },
          ),
        },
        { additionalProperties: false, description: "The server's version and the sizes of the tables the caller may read, by module" },
      ),
    },
  },
  async (ctx) => {
    const labels = new Map(ctx.model().map((e) => [e.name, e.label]));
    const storage = await ctx.storage();
    const modules = new Map<string, { module: string; bytes: number; tables: { table: string; label: string; bytes: number }[] }>();
    for (const e of storage.entities) {
      let m = modules.get(e.module);
      if (!m) modules.set(e.module, (m = { module: e.module, bytes: 0, tables: [] }));
      m.bytes += e.bytes;
      m.tables.push({ table: e.entity, label: labels.get(e.entity) ?? e.entity, bytes: e.bytes });
    }
    const list = [...modules.values()].sort((a, b) => b.bytes - a.bytes || a.module.localeCompare(b.module));
    return { serverVersion: storage.serverVersion, totalBytes: list.reduce((s, m) => s + m.bytes, 0), modules: list };
  },
);
