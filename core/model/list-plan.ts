// How a list's rows are ordered, planned once per entity: the sort keys of a
// sort parameter, and the index that serves an entity's default order.
//
// A list orders by its sort keys and then by id ascending (the reader's
// #orderBy), so every order is total and pages are stable. A generated list
// route asked for no sort uses the entity's defaultSort; that is the request
// every list page sends first, so the entity builder gives it an index:
//   (company_id,) (path-bound refs,) <default sort columns, each in its direction>, id
// With it PostgreSQL reads the first page off the index and stops after `size`
// rows, instead of sorting every row of the company (see bench/, scenario
// default-list). Not indexed:
//   - a default sort naming a translatable field: its order is the text the
//     reader sees, which depends on the request's languages (displayedText);
//     no one index serves every language, so such a list sorts all its rows;
//   - entities no generated route lists;
//   - a default sort a unique key already serves (same leading columns, then
//     the sort columns in one direction): the key orders the rows, and the id
//     tiebreak never has two rows to order.
import type { IndexColumnOptions } from '@mikro-orm/core';
import type { Manifest } from '../manifest/format.ts';
import type { EntityModel } from './entity-model.ts';

export interface SortKey {
  field: string;
  desc: boolean;
}

/** "name,-createdAt" → [{ field: 'name', desc: false }, { field: 'createdAt', desc: true }] */
export const sortKeys = (sort: string): SortKey[] => sort.split(',').map((part) => (part.startsWith('-') ? { field: part.slice(1), desc: true } : { field: part, desc: false }));

/** Some generated CRUD route of the manifest lists this entity. */
export function isListed(manifest: Manifest, entity: string): boolean {
  return (manifest.routes ?? []).some((r) => 'entity' in r && r.entity === entity && (!r.operations || r.operations.includes('list')));
}

/**
 * The index columns (MikroORM property names, with their sort order) that serve
 * the model's default list, or null when none should be declared (see above).
 * `uniques`: the entity's unique keys, as property names.
 */
export function defaultSortIndex(model: EntityModel, listed: boolean, uniques: string[][]): IndexColumnOptions[] | null {
  if (!listed) return null;
  // equality columns first: every list of a company-scoped entity filters by
  // its company, a nested route's list by its parent (their order is moot)
  const leading = [...(model.scope === 'company' ? ['companyId'] : []), ...model.pathBound.map((f) => f.name)];
  const keys = sortKeys(model.defaultSort).filter((k) => !leading.includes(k.field));
  if (keys.some((k) => model.byName.get(k.field)?.translatable)) return null;
  const sorted = keys.map((k) => k.field);
  const oneWay = keys.every((k) => k.desc === keys[0].desc);
  const same = (a: string[], b: string[]) => a.length === b.length && a.every((x, i) => x === b[i]);
  if (oneWay && uniques.some((u) => same(u, [...leading, ...sorted]))) return null;
  return [...leading.map((name) => ({ name })), ...keys.map((k) => (k.desc ? { name: k.field, sort: 'DESC' as const } : { name: k.field })), { name: 'id' }];
}
