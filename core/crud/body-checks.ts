// Checks JSON Schema cannot express, run after schema validation: text the
// database cannot store, decimal bounds, and references that must point at a
// row in the caller's own scope (another company's row is as unknown as none).
import type { EntityManager } from '@mikro-orm/core';
import type { EntityModel } from '../model/entity-model.ts';
import type { FieldError } from '../errors.ts';

const MAX_JSON_DEPTH = 32;

/**
 * PostgreSQL text and jsonb reject U+0000; jsonb rejects a lone UTF-16 surrogate
 * ("\ud800", valid JSON but no character), which text would silently turn into
 * U+FFFD; and very deep JSON exhausts its stack.
 */
export function storableErrors(value: unknown, path = '', depth = 0, out: FieldError[] = []): FieldError[] {
  if (out.length >= 10) return out;
  if (typeof value === 'string') {
    const fault = unstorable(value);
    if (fault) out.push({ path: path || '/', message: `must not contain ${fault}` });
  } else if (value && typeof value === 'object') {
    if (depth > MAX_JSON_DEPTH) { out.push({ path: path || '/', message: `nests deeper than ${MAX_JSON_DEPTH} levels` }); return out; }
    for (const [k, v] of Object.entries(value)) {
      const child = `${path}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`;
      const fault = unstorable(k);
      if (fault) out.push({ path: child, message: `keys must not contain ${fault}` });
      storableErrors(v, child, depth + 1, out);
    }
  }
  return out;
}

function unstorable(s: string): string | undefined {
  if (s.includes('\u0000')) return 'the NUL character (\\u0000)';
  if (!s.isWellFormed()) return 'a lone UTF-16 surrogate';
  return undefined;
}

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
