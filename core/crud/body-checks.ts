// Checks JSON Schema cannot express, run after schema validation: decimal
// bounds, and references that must point at a row in the caller's own scope
// (another company's row is as unknown as none). Text the database cannot
// store never gets this far: http/input-guard.ts refuses it for every route.
import type { EntityManager } from '@mikro-orm/core';
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

export async function referenceErrors(em: EntityManager, model: EntityModel, models: Map<string, EntityModel>, body: Record<string, unknown>, companyId: string | null): Promise<FieldError[]> {
  const out: FieldError[] = [];
  for (const f of model.refs) {
    const id = body[f.name];
    if (typeof id !== 'string') continue;
    const target = models.get(f.entity!)!;
    const where: Record<string, unknown> = { id };
    if (target.scope === 'company') where.companyId = companyId;
    if (await em.count(target.schema, where) === 0) out.push({ path: `/${f.name}`, message: `no ${target.name} with id ${id}` });
  }
  return out;
}
