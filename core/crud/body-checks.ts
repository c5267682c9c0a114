// Checks JSON Schema cannot express, run after schema validation: decimal
// bounds (references are checked by CrudService, in the caller's scope). Text
// the database cannot store never gets this far: http/input-guard.ts refuses
// it for every route.
import type { EntityModel } from '../model/entity-model.ts';
import type { FieldError } from '../errors.ts';

export function decimalBoundErrors(model: EntityModel, body: Record<string, unknown>): FieldError[] {
  const out: FieldError[] = [];
  for (const f of model.fields) {
    const v = body[f.name];
    if (f.type !== 'decimal' || typeof v !== 'string') continue;
    if (f.minimum !== undefined && Number(v) < f.minimum) out.push({ path: `/${f.name}`, message: `must be >= ${f.minimum}` });
    if (f.maximum !== undefined && Number(v) > f.maximum) out.push({ path: `/${f.name}`, message: `must be <= ${f.maximum}` });
  }
  return out;
}
