// Jobs as operators and tenant admins see them: read from the job runner's
// table (pg-boss keeps finished jobs for a week), newest first. A tenant's jobs
// are the ones in its group (every job the runtime sends names its tenant so).
import type { EntityManager } from '@mikro-orm/core';
import { run, type Row } from '../data/sql.ts';

export const JOB_STATES = ['created', 'retry', 'active', 'completed', 'cancelled', 'failed'] as const;

export interface JobFilter {
  id?: string;
  tenantId?: string;
  queue?: string;
  state?: (typeof JOB_STATES)[number];
  page: number;
  size: number;
}

export interface JobView {
  id: string;
  queue: string;
  tenant: string | null;
  state: string;
  attempt: number;
  attempts: number;
  createdAt: string;
  startAfter: string;
  startedAt: string | null;
  completedAt: string | null;
  error: string | null;
  /** a subscriber's job: how many events it carries */
  events: number | null;
}

const iso = (v: unknown) => (v === null || v === undefined ? null : new Date(v as string).toISOString());

export async function listJobs(em: EntityManager, schema: string, f: JobFilter): Promise<{ items: JobView[]; total: number }> {
  const where: string[] = [];
  const values: unknown[] = [];
  const add = (sql: string, v: unknown) => (values.push(v), where.push(sql.replace('?', `$${values.length}`)));
  if (f.id !== undefined) add('id = ?', f.id);
  if (f.tenantId !== undefined) add('group_id = ?', f.tenantId);
  if (f.queue !== undefined) add('name = ?', f.queue);
  if (f.state !== undefined) add('state::text = ?', f.state);
  const filter = where.length ? `where ${where.join(' and ')}` : '';
  const table = `"${schema}".job`;
  const [{ total }] = await run(em, `select count(*)::int as "total" from ${table} ${filter}`, values);
  const rows = await run(
    em,
    `select id, name, group_id, state::text as state, retry_count, retry_limit, created_on, start_after, started_on, completed_on, output,
       jsonb_array_length(case when jsonb_typeof(data->'events') = 'array' then data->'events' end) as events
     from ${table} ${filter} order by created_on desc, id limit ${f.size} offset ${(f.page - 1) * f.size}`,
    values,
  );
  return { items: rows.map(view), total: Number(total) };
}

function view(r: Row): JobView {
  const output = r.output as { message?: unknown } | null;
  return {
    id: r.id,
    queue: r.name,
    tenant: r.group_id ?? null,
    state: r.state,
    attempt: Number(r.retry_count) + 1,
    attempts: Number(r.retry_limit) + 1,
    createdAt: iso(r.created_on)!,
    startAfter: iso(r.start_after)!,
    startedAt: iso(r.started_on),
    completedAt: iso(r.completed_on),
    error: typeof output?.message === 'string' ? output.message : null,
    events: r.events === null || r.events === undefined ? null : Number(r.events),
  };
}
