// The shape of a list's items: `fields=sku,price` keeps those fields (and id)
// of each item, `include=categoryId` embeds the row a ref field points at under
// `_embedded.category`. Fields keep the values field rules left (a hidden one
// stays null); an embedded row is read through the referenced entity's own
// read scope and field rules, in one query per include for the whole page, and
// a row the caller could not read directly is embedded as null.
import type { EntityModel, FieldModel } from '../model/entity-model.ts';
import { httpError } from '../errors.ts';
import { q, run, type Params, type Row } from '../data/sql.ts';
import { tableOf } from '../data/table.ts';
import type { Fragment } from '../data/scope.ts';
import { rowMapper, type Dto, type ReadOptions } from './row-mapper.ts';
import type { EntityManager } from '@mikro-orm/core';

export interface ListShape {
  /** the item fields asked for (id always among them); undefined: every field */
  fields?: Set<string>;
  include: FieldModel[];
}

/** The fields a list item has: what `fields=` may name. */
export function itemFields(model: EntityModel): string[] {
  return ['id', ...(model.scope === 'company' ? ['companyId'] : []), ...model.readable.map((f) => f.name), 'createdAt', 'updatedAt', 'version'];
}

/** The ref fields `include=` may name. */
export const includable = (model: EntityModel) => model.readable.filter((f) => f.type === 'ref');

/** The key an embedded row has under `_embedded`: the ref field's name without "Id" (categoryId → category). */
export const embedKey = (f: FieldModel) => (f.name.endsWith('Id') && f.name.length > 2 ? f.name.slice(0, -2) : f.name);

function names(text: string | undefined, allowed: string[], param: string): string[] | undefined {
  if (text === undefined) return undefined;
  const out = text.split(',');
  const unknown = out.find((n) => !allowed.includes(n));
  if (unknown !== undefined) {
    const message = `"${unknown}" is not one of ${allowed.join(', ')}`;
    throw httpError('VALIDATION_FAILED', `${param}: ${message}`, { errors: [{ path: `/${param}`, message }] });
  }
  return out;
}

/** The shape a list query asks for; 400 naming the parameter for a name the entity does not offer. */
export function listShape(model: EntityModel, query: Record<string, unknown>): ListShape {
  const fields = names(query.fields as string | undefined, itemFields(model), 'fields');
  const refs = includable(model);
  const include = names(
    query.include as string | undefined,
    refs.map((f) => f.name),
    'include',
  );
  return { fields: fields && new Set(['id', ...fields]), include: [...new Set(include ?? [])].map((n) => refs.find((f) => f.name === n)!) };
}

/** An item cut down to the fields asked for; what the list adds besides fields (translations, _embedded) stays. */
export function pickFields(dto: Dto, fields: Set<string>, all: Set<string>): Dto {
  return Object.fromEntries(Object.entries(dto).filter(([k]) => fields.has(k) || !all.has(k)));
}

/** What reading a referenced entity takes: its read scope (null: none), the select list field rules leave. */
export interface EmbedSource {
  target: EntityModel;
  scope: Fragment | null;
  columns?: Fragment;
}

const mappers = new WeakMap<EntityModel, ReturnType<typeof rowMapper>>();

/** Embeds under `_embedded[key]` the row each item's ref points at, read in one query, or null where the caller cannot read it. */
export async function embedRows(em: EntityManager, p: Params, items: Dto[], f: FieldModel, source: EmbedSource, read: ReadOptions, used?: Set<string>): Promise<void> {
  const ids = [...new Set(items.map((i) => i[f.name]).filter((v): v is string => typeof v === 'string'))];
  const found = new Map<string, Row>();
  if (ids.length && source.scope) {
    const table = tableOf(source.target);
    const sql = `select ${source.columns?.(p) ?? table.columns} from ${p.table(source.target.table)} t where t.${q('id')} in (${ids.map((id) => p.add(id)).join(', ')}) and ${source.scope(p)}`;
    for (const row of await run(em, sql, p.values)) found.set(row.id, row);
  }
  let toDto = mappers.get(source.target);
  if (!toDto) mappers.set(source.target, (toDto = rowMapper(source.target)));
  const key = embedKey(f);
  for (const item of items) {
    const row = found.get(item[f.name] as string);
    const embedded = (item._embedded ??= {}) as Record<string, unknown>;
    embedded[key] = row ? toDto(row, read, used) : null;
  }
}
