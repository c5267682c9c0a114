// The semantic model as GET /app-tables and GET /schema list it: the entities
// the caller may read (semantic-model.ts) and, for `?app=<id>`, the tables the
// application adds: its data sources' tables (`<source>.<table>`, module
// "external") and its saved queries the caller can run (`query:<id>`, module
// "queries", saved-tables.ts).
import { FILTER_OPS, handler, Type, type ModuleContext, type Row } from '../../core/plugin-api.ts';
import { AGGREGATIONS, GRANULARITIES } from './query.ts';
import { all, AppQuery, listOf, Relation, relationsOf, roleOf, Table, tablesOf, type BiTable } from './semantic-model.ts';
import type { SourceTable } from './external-model.ts';
import { savedTablesOf } from './saved-tables.ts';
import { LIMITS } from './limits.ts';

/** A data source row's tables in the semantic model, named `<source>.<table>` (an entity's name has no dot). */
function sourceTablesIn(source: Row): BiTable[] {
  return ((source.tables ?? []) as SourceTable[]).map((t) => ({
    name: `${source.name}.${t.name}`,
    label: t.label,
    module: 'external',
    source: source.name as string,
    ...(t.description ? { description: t.description } : {}),
    fields: t.columns.map((c) => ({ name: c.name, label: c.label, type: c.type, role: roleOf(c.type), ...(c.values ? { values: c.values } : {}) })),
  }));
}

/** The tables application `app` adds (none without one); 404 for an application the caller cannot read. */
async function appTablesOf(ctx: ModuleContext, app: string | undefined, tables: BiTable[]): Promise<BiTable[]> {
  if (!app) return [];
  await ctx.data('BiApp').read(app);
  const sources = await ctx.data('BiDataSource').find({ appId: app }, { limit: 1000, orderBy: 'name' });
  return [...sources.flatMap(sourceTablesIn), ...(await savedTablesOf(ctx, app, sources, tables))];
}

export const listTables = handler({ querystring: AppQuery, response: { 200: listOf(Table, 'The tables the caller may read, with the fields they may read') } }, async (ctx, request) => {
  const tables = tablesOf(ctx);
  return all([...tables, ...(await appTablesOf(ctx, request.query.app, tables))]);
});

export const getSchema = handler(
  {
    querystring: AppQuery,
    response: {
      200: Type.Object(
        {
          tables: Type.Array(Table),
          relations: Type.Array(Relation),
          aggregations: Type.Array(Type.String()),
          granularities: Type.Array(Type.String()),
          filterOperators: Type.Array(Type.String()),
          limits: Type.Object({ maxRows: Type.Integer(), timeoutMs: Type.Integer(), maxJoinDepth: Type.Integer() }, { additionalProperties: false }),
        },
        { additionalProperties: false, description: 'What analytics may use, with types and labels' },
      ),
    },
  },
  async (ctx, request) => {
    const tables = tablesOf(ctx);
    const limits = LIMITS();
    return {
      // a data source's and a saved query's tables have no relations: they join no other table
      tables: [...tables, ...(await appTablesOf(ctx, request.query.app, tables))],
      relations: relationsOf(tables),
      aggregations: [...AGGREGATIONS],
      granularities: [...GRANULARITIES],
      filterOperators: [...FILTER_OPS],
      limits: { maxRows: limits.maxRows, timeoutMs: limits.timeoutMs, maxJoinDepth: 3 },
    };
  },
);
