// The one scope compiler: a grant condition (CASL/Mongo style, as the
// manifests write it) becomes a parameterised SQL condition on the entity's
// table, aliased `t`. Every list, count, read, write, lock, reference check and
// parent check adds it to its statement, so one meaning of a rule holds
// everywhere and conditions are never evaluated in memory.
//
// Compiled once per model and condition object (conditions come from rule
// sets cached per tenant and role set); caller placeholders ("${user.id}") and
// the tenant's schema are bound when a statement is built, from its Params.
//
// NULL semantics, the same on every path: a field without a value is distinct
// from every value. `$ne: v` and `$nin: [...]` hold for NULL; `$eq`, `$in` and
// the range operators do not; `$eq: null` / `$ne: null` test for NULL.
//
// Relational conditions: `{ "$exists": { "entity": "ProjectMember",
// "on": { "projectId": "id" }, "where": { "userId": "${user.id}" } } }` holds
// for rows that some row of the other entity points at (`on` maps its fields
// to this entity's), compiled to a subquery: membership checks never load the
// caller's memberships into memory. A one-column `on` becomes an uncorrelated
// `in (select …)` that PostgreSQL evaluates once per statement, so a grant
// like "my projects' tasks, or my personal ones" costs a hash probe per row
// rather than an index lookup per row; wider ones a correlated `exists`.
import type { EntityModel } from '../model/entity-model.ts';
import { bind, usesCaller } from '../access/permission-catalog.ts';
import { q, type Params } from './sql.ts';
import { dayIn } from '../calendar.ts';
import type { FieldOperator, KernelField } from '../manifest/conditions.ts';

export type Condition = Record<string, unknown>;
/** A boolean SQL expression; called once per statement, it adds its values to the statement's Params. */
export type Fragment = (p: Params) => string;
/** Models by entity name, for relational conditions. */
export type Models = ReadonlyMap<string, EntityModel>;

export interface Related {
  entity: string;
  on: Record<string, string>;
  where?: Condition;
}

const KERNEL_COLUMNS: Record<KernelField, string> = { id: 'id', companyId: 'company_id', createdAt: 'created_at', updatedAt: 'updated_at', version: 'version' };
export const TRUE: Fragment = () => 'true';
const FALSE: Fragment = () => 'false';

/** The tenant's current date, in a condition of a named list filter. */
const TODAY = '${today}';

const cache = new WeakMap<Condition, Map<EntityModel, Fragment>>();

const COMPANY: Fragment = (p) => `t."company_id" = ${p.add(p.companyId)}`;

/**
 * The rows of `model` (table aliased `t`) a caller reaches through a grant
 * condition: the statement's company, for company-scoped entities, and `cond`
 * ({} is every row).
 */
export function compileScope(models: Models, model: EntityModel, cond: Condition): Fragment {
  let perModel = cache.get(cond);
  if (!perModel) cache.set(cond, (perModel = new Map()));
  let fragment = perModel.get(model);
  if (!fragment) perModel.set(model, (fragment = and([model.scope === 'company' ? COMPANY : TRUE, compile(models, model, cond, 't', 0)])));
  return fragment;
}

/** `cond` alone (no company), e.g. a module's query inside a scope; compiled anew for each new object. */
export function compileCondition(models: Models, model: EntityModel, cond: Condition): Fragment {
  return Object.keys(cond).length ? compile(models, model, cond, 't', 0) : TRUE;
}

/** `t.<field> = value` for each entry, e.g. the parent ids of a nested route's path. */
export function matching(model: EntityModel, values: Record<string, unknown>): Fragment {
  const entries = Object.entries(values);
  if (!entries.length) return TRUE;
  return (p) => entries.map(([field, v]) => `t.${q(columnOf(model, field)!)} = ${p.add(v)}`).join(' and ');
}

/** The column of a field (manifest or kernel), or undefined. */
export function columnOf(model: EntityModel, field: string): string | undefined {
  return KERNEL_COLUMNS[field as KernelField] ?? model.byName.get(field)?.column;
}

export function and(parts: Fragment[]): Fragment {
  const real = parts.filter((f) => f !== TRUE);
  if (!real.length) return TRUE;
  if (real.length === 1) return real[0];
  return (p) => real.map((f) => `(${f(p)})`).join(' and ');
}

function or(parts: Fragment[]): Fragment {
  if (!parts.length) return FALSE;
  if (parts.length === 1) return parts[0];
  return (p) => `(${parts.map((f) => `(${f(p)})`).join(' or ')})`;
}

function compile(models: Models, model: EntityModel, cond: Condition, alias: string, depth: number): Fragment {
  return and(
    Object.entries(cond).map(([key, value]): Fragment => {
      if (key === '$and') return and((value as Condition[]).map((c) => compile(models, model, c, alias, depth)));
      if (key === '$or') return or((value as Condition[]).map((c) => compile(models, model, c, alias, depth)));
      if (key === '$not') {
        const inner = compile(models, model, value as Condition, alias, depth);
        return (p) => `not (${inner(p)})`;
      }
      if (key === '$exists') return exists(models, model, value as Related, alias, depth);
      const column = columnOf(model, key);
      if (!column) throw new Error(`condition on unknown field "${key}" of ${model.name}`);
      return compare(`${alias}.${q(column)}`, value);
    }),
  );
}

function exists(models: Models, model: EntityModel, rel: Related, alias: string, depth: number): Fragment {
  const other = models.get(rel.entity);
  if (!other) throw new Error(`relational condition on unknown entity "${rel.entity}"`);
  const inner = `r${depth + 1}`;
  const where = compile(models, other, rel.where ?? {}, inner, depth + 1);
  const pairs = Object.entries(rel.on);
  if (pairs.length === 1) {
    // one column: an uncorrelated `in`, which PostgreSQL runs once (a semi-join, or a hashed set inside an
    // $or) rather than once per row; the null guards keep exists' meaning under $not
    const ours = `${alias}.${q(columnOf(model, pairs[0][1])!)}`;
    const theirs = `${inner}.${q(columnOf(other, pairs[0][0])!)}`;
    return (p) => `(${ours} is not null and ${ours} in (select ${theirs} from ${p.table(other.table)} ${inner} where ${theirs} is not null and ${where(p)}))`;
  }
  const joins = pairs.map(([theirs, ours]) => `${inner}.${q(columnOf(other, theirs)!)} = ${alias}.${q(columnOf(model, ours)!)}`).join(' and ');
  return (p) => `exists (select 1 from ${p.table(other.table)} ${inner} where ${joins} and ${where(p)})`;
}

/** A value, with the caller's values bound at statement time when it names them. */
function valueOf(v: unknown): (p: Params) => unknown {
  // a named list filter's "today" (manifest "filters"): the day the statement runs on the tenant's clock,
  // the same day ctx.today() gives module code (a report's "overdue" and the list's agree)
  if (v === TODAY) return (p) => dayIn(p.timeZone);
  if (!usesCaller(v)) return () => v;
  return (p) => {
    if (!p.caller) throw new Error('a grant condition names the caller, but the statement has no caller');
    return bind(v, p.caller);
  };
}

function compare(col: string, value: unknown): Fragment {
  if (value === null) return () => `${col} is null`;
  if (typeof value !== 'object' || Array.isArray(value)) return op(col, '$eq', value);
  return and(Object.entries(value as Condition).map(([name, v]) => op(col, name, v)));
}

type Value = (p: Params) => unknown;
/** One entry per operator the manifest loader accepts (FIELD_OPERATORS): a new one fails the type check until compiled here. */
const OPERATORS: Record<FieldOperator, (col: string, value: Value) => Fragment> = {
  $eq: (col, value) => (p) => `${col} = ${p.add(value(p))}`,
  $ne: (col, value) => (p) => `${col} is distinct from ${p.add(value(p))}`,
  $gt: (col, value) => (p) => `${col} > ${p.add(value(p))}`,
  $gte: (col, value) => (p) => `${col} >= ${p.add(value(p))}`,
  $lt: (col, value) => (p) => `${col} < ${p.add(value(p))}`,
  $lte: (col, value) => (p) => `${col} <= ${p.add(value(p))}`,
  $in: (col, value) => (p) => `${col} = any(${p.add(value(p))})`,
  $nin: (col, value) => (p) => `(${col} is null or not (${col} = any(${p.add(value(p))})))`,
};

function op(col: string, name: string, v: unknown): Fragment {
  if (name === '$eq' && v === null) return () => `${col} is null`;
  if (name === '$ne' && v === null) return () => `${col} is not null`;
  const compile = OPERATORS[name as FieldOperator];
  if (!compile) throw new Error(`unsupported operator ${name}`);
  return compile(col, valueOf(v));
}
