// An analytics query over a table of an external data source: the kernel's
// aggregate over typed columns (crud/column-aggregate.ts) from the table the
// source's test introspected, in the source's schema, for that database.
import { compileColumnAggregate, type AggregateQuery, type ColumnStatement } from '../../core/plugin-api.ts';
import type { SourceTable } from './external-model.ts';

/** an identifier of the introspected model, quoted */
const qi = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** The one statement of `query` over `table` in schema `schemaName`, at most `maxRows` groups (`derived`: as a table for another query). */
export function compileExternal(schemaName: string, table: SourceTable, query: AggregateQuery, opts: { maxRows: number; derived?: boolean }): ColumnStatement {
  return compileColumnAggregate(`${qi(schemaName)}.${qi(table.name)}`, table, query, opts);
}
