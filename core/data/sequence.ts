// Numbered fields ("sequence" in a manifest): a new row gets max + 1 within
// its group (rows with the same value of `per`, in the same company for
// company-scoped entities). Race-free without a counter table: a
// transaction-scoped advisory lock per group makes concurrent creates of one
// group take turns, and the max is read after the lock, so each one sees the
// rows committed before it. Creates of other groups never wait.
import type { EntityManager } from '@mikro-orm/core';
import type { EntityModel } from '../model/entity-model.ts';
import { Params, q, run, type Row } from './sql.ts';

/** Sets each sequence field of `data` (a row about to be inserted); call inside the insert's transaction. */
export async function numberRow(em: EntityManager, schema: string, model: EntityModel, data: Row): Promise<void> {
  for (const { field, per } of model.sequences) {
    const group = per ? (data[per.name] ?? null) : null;
    const company = model.scope === 'company' ? (data.companyId as string) : null;
    await run(em, 'select pg_advisory_xact_lock(hashtext($1))', [`plinth:sequence:${schema}.${model.table}.${field.column}:${company}:${group}`]);
    const p = new Params(schema, company);
    const where = [per ? `${q(per.column)} is not distinct from ${p.add(group)}` : 'true', company ? `"company_id" = ${p.add(company)}` : 'true'];
    const [row] = await run(em, `select coalesce(max(${q(field.column)}), 0) + 1 as "next" from ${p.table(model.table)} where ${where.join(' and ')}`, p.values);
    data[field.name] = Number(row.next);
  }
}
