// Field-level rules: a grant's `fields` limits it to those fields. Reads select
// a field only where a rule covering it holds (case when <its scope> then the
// column end), so a hidden field never leaves the database: it reads as null.
// Writes naming a field the caller may not change are refused, naming it.
// Nothing here costs anything while no rule of the caller names fields.
import type { EntityModel } from '../model/entity-model.ts';
import { accessFilter, hasFieldRules, type Ability } from '../access/abilities.ts';
import { httpError } from '../errors.ts';
import { compileScope, type Fragment, type Models } from './scope.ts';
import { q } from './sql.ts';
import { tableOf } from './table.ts';

const cache = new WeakMap<Ability, Map<EntityModel, Fragment | null>>();
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** The select list of `model` for `ability`'s reads; null when no field rule applies (the table's plain list). */
export function readColumns(models: Models, model: EntityModel, ability: Ability): Fragment | null {
  let perModel = cache.get(ability);
  if (!perModel) cache.set(ability, (perModel = new Map()));
  if (perModel.has(model)) return perModel.get(model)!;
  const columns = hasFieldRules(ability, 'read', model.name) ? compileColumns(models, model, ability) : null;
  perModel.set(model, columns);
  return columns;
}

function compileColumns(models: Models, model: EntityModel, ability: Ability): Fragment {
  const table = tableOf(model);
  const row = accessFilter(ability, 'read', model.name);
  const parts = [...table.fieldExpressions].map(([name, expr]): Fragment => {
    const cond = accessFilter(ability, 'read', model.name, name);
    if (cond === null) return () => `null as ${q(name)}`;
    if (same(cond, row)) return () => `${expr} as ${q(name)}`;
    const visible = compileScope(models, model, cond);
    return (p) => `case when ${visible(p)} then ${expr} end as ${q(name)}`;
  });
  return (p) => [table.head, ...parts.map((f) => f(p)), table.tail].join(', ');
}

/**
 * What a list filters and sorts field `name` on for `ability`'s reads: the
 * column where a rule lets the caller read it, else a null of its type, so a
 * filter or an order cannot tell a hidden value. Undefined when no rule limits it.
 */
export function readableColumn(models: Models, model: EntityModel, ability: Ability, name: string): Fragment | undefined {
  if (!hasFieldRules(ability, 'read', model.name)) return undefined;
  const col = `t.${q(model.byName.get(name)!.column)}`;
  const cond = accessFilter(ability, 'read', model.name, name);
  if (cond === null) return () => `(case when false then ${col} end)`;
  if (same(cond, accessFilter(ability, 'read', model.name))) return undefined;
  const visible = compileScope(models, model, cond);
  return (p) => `(case when ${visible(p)} then ${col} end)`;
}

/**
 * The fields of a write's input the caller may change only on some rows, as
 * flags to check on the row (`field:<name>`); 403 naming the first field they
 * may not change at all.
 */
export function writeFieldFlags(models: Models, model: EntityModel, ability: Ability, action: string, fields: string[]): Record<string, Fragment> | undefined {
  if (!fields.length || !hasFieldRules(ability, action, model.name)) return undefined;
  const row = accessFilter(ability, action, model.name);
  let flags: Record<string, Fragment> | undefined;
  for (const name of fields) {
    const cond = accessFilter(ability, action, model.name, name);
    if (cond === null)
      throw httpError('FORBIDDEN', `not allowed to ${action === 'create' ? 'set' : 'change'} ${model.name}.${name}`, { errors: [{ path: `/${name}`, message: 'is not a field you may change' }] });
    if (!same(cond, row)) (flags ??= {})[`field:${name}`] = compileScope(models, model, cond);
  }
  return flags;
}
