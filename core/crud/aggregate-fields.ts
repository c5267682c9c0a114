// The fields an aggregate names, as SQL the caller may see: a field of the
// aggregated entity (`estimate`), or a field of a row it references along a
// declared ref, any number of refs deep (`projectId.name`,
// `projectId.leadId.name`). Each referenced entity is joined as a derived
// table holding only the rows the caller's own read scope of THAT entity
// (company and grant conditions, from the one scope compiler) lets them read,
// with its field rules applied: a reference to a row they could not GET
// directly reads as null, exactly as `include=` embeds it, and an entity they
// may not read at all is a 403. Names are looked up in the models; no name a
// caller wrote reaches SQL.
import type { EntityModel, FieldModel } from '../model/entity-model.ts';
import { DECIMAL_DEFAULT } from '../model/entity-builder.ts';
import { accessFilter, hasFieldRules, type Ability } from '../access/abilities.ts';
import { httpError } from '../errors.ts';
import { columnOf, compileScope, type Fragment, type Models } from '../data/scope.ts';
import { readableColumn } from '../data/field-access.ts';
import { q, type Params } from '../data/sql.ts';

export interface AggregateSource {
  models: Models;
  model: EntityModel;
  ability: Ability;
}

export interface Field {
  /** the path as named ("projectId.name") */
  name: string;
  type: string;
  scale: number;
  /** the manifest's labels along the path ("Project › Name") */
  label: string;
  /** enum values, to check filter values against */
  values?: string[];
  /** the column as the caller may read it (null where a field rule hides it or the referenced row is out of reach) */
  value: Fragment;
}

/** the kernel's columns, as fields of every entity */
const KERNEL_TYPES: Record<string, string> = { id: 'ref', companyId: 'ref', createdAt: 'datetime', updatedAt: 'datetime', version: 'integer' };
const KERNEL_LABELS: Record<string, string> = { id: 'Id', companyId: 'Company', createdAt: 'Created at', updatedAt: 'Updated at', version: 'Version' };
/** refs followed from the aggregated entity at most */
const MAX_DEPTH = 3;

export const invalid = (path: string, message: string) => httpError('VALIDATION_FAILED', `${path} ${message}`, { errors: [{ path, message }] });

interface Join {
  alias: string;
  model: EntityModel;
  /** the referencing column, as the parent may read it */
  on: Fragment;
  /** columns the statement reads from this join, by field name → their alias inside it */
  columns: Map<string, { alias: string; value: Fragment }>;
}

/** Resolves field paths of one aggregate and collects the joins they need (in the order first named). */
export class FieldResolver {
  readonly #source: AggregateSource;
  readonly #joins = new Map<string, Join>();

  constructor(source: AggregateSource) {
    this.#source = source;
  }

  /** A field (or ref path) as the caller may read it; 400 for a name the model lacks, 403 for one hidden from them. */
  resolve(name: unknown, path: string): Field {
    if (typeof name !== 'string' || !name) throw invalid(path, 'is a field name');
    const parts = name.split('.');
    if (parts.length > MAX_DEPTH + 1) throw invalid(path, `follows at most ${MAX_DEPTH} references`);
    let model = this.#source.model;
    let on: Join | undefined;
    const labels: string[] = [];
    for (let i = 0; i < parts.length - 1; i++) {
      const ref = this.#local(model, parts[i], path);
      const f = model.byName.get(parts[i]);
      if (ref.type !== 'ref' || !f?.entity) throw invalid(path, `${model.name}.${parts[i]} is no reference to follow`);
      const target = this.#source.models.get(f.entity);
      if (!target) throw invalid(path, `${model.name}.${parts[i]} is no reference to follow`);
      if (accessFilter(this.#source.ability, 'read', target.name) === null) {
        throw httpError('FORBIDDEN', `not allowed to read ${target.name}`, { errors: [{ path, message: `names ${target.name}, which you may not read` }] });
      }
      const key = parts.slice(0, i + 1).join('.');
      let join = this.#joins.get(key);
      if (!join) {
        const parentRef = on ? this.#column(on, parts[i], ref.value) : ref.value;
        join = { alias: `j${this.#joins.size}`, model: target, on: parentRef, columns: new Map() };
        this.#joins.set(key, join);
      }
      labels.push(f.label ?? parts[i]);
      on = join;
      model = target;
    }
    const last = parts[parts.length - 1];
    const local = this.#local(model, last, path);
    labels.push(local.label);
    return { ...local, name, label: labels.join(' › '), value: on ? this.#column(on, last, local.value) : local.value };
  }

  /** `left join`s of the referenced entities, each narrowed to the rows the caller may read. */
  joins(): Fragment {
    const joins = [...this.#joins.values()];
    return (p) =>
      joins
        .map((j) => {
          const access = accessFilter(this.#source.ability, 'read', j.model.name)!;
          const scope = compileScope(this.#source.models, j.model, access);
          const cols = [...j.columns.values()].map((c) => `${c.value(p)} as "${c.alias}"`);
          return ` left join (select t."id" as "id"${cols.map((c) => `, ${c}`).join('')} from ${p.table(j.model.table)} t where ${scope(p)}) ${j.alias} on ${j.alias}."id" = ${j.on(p)}`;
        })
        .join('');
  }

  /** A column of a join, read inside its derived table (where the table is `t`, as the scope compiler writes it). */
  #column(join: Join, field: string, inner: Fragment): Fragment {
    let col = join.columns.get(field);
    if (!col) join.columns.set(field, (col = { alias: `c${join.columns.size}`, value: inner }));
    const alias = `${join.alias}."${col.alias}"`;
    return () => alias;
  }

  /** A field of `model` as the caller may read it, on alias `t`. */
  #local(model: EntityModel, name: string, path: string): Omit<Field, 'name'> {
    const { models, ability } = this.#source;
    const kernelType = Object.hasOwn(KERNEL_TYPES, name) && (name !== 'companyId' || model.scope === 'company') ? KERNEL_TYPES[name] : undefined;
    if (kernelType) return { type: kernelType, scale: 0, label: KERNEL_LABELS[name], value: () => `t.${q(columnOf(model, name)!)}` };
    const f: FieldModel | undefined = model.byName.get(name);
    if (!f || f.internal || f.secret) throw invalid(path, `names no field "${name}" of ${model.name}`);
    hidden(model, ability, name, path);
    const limited = readableColumn(models, model, ability, name);
    return {
      type: f.translatable ? 'translatable' : f.type,
      scale: f.scale ?? DECIMAL_DEFAULT.scale,
      label: f.label ?? name,
      ...(f.values ? { values: f.values } : {}),
      value: limited ?? (() => `t.${q(f.column)}`),
    };
  }
}

/** 403 when field rules hide `name` from the caller on every row. */
export function hidden(model: EntityModel, ability: Ability, name: string, path: string): void {
  if (!model.byName.has(name) || !hasFieldRules(ability, 'read', model.name)) return;
  if (accessFilter(ability, 'read', model.name, name) === null) {
    throw httpError('FORBIDDEN', `not allowed to read ${model.name}.${name}`, { errors: [{ path, message: 'is not a field you may read' }] });
  }
}

export type { Params };
