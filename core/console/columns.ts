// The columns of an entity's lists, as the manifest names them.
import type { MetaEntity, MetaField } from './fields.ts';

/** The columns of an entity's lists: the manifest's, else its first five plain fields. */
export function columnsOf(entity: MetaEntity): MetaField[] {
  const readable = entity.fields.filter((f) => !f.writeOnly);
  const named = entity.listColumns.map((c) => readable.find((f) => f.name === c)).filter((f): f is MetaField => f !== undefined);
  return named.length ? named : readable.filter((f) => f.type !== 'json' && f.type !== 'text').slice(0, 5);
}
