// The "client activity" report type: per API-key client its owner's scope
// holds, presence and last use (as of the run: past presence is not kept),
// the jobs queued in the range by their state now, those that ended in the
// range (completed, or failed for good) and how long a completed job ran
// (its last lease to done). Registered in the report registry like the others.
import { Type, type ModuleContext, type Row } from '../../core/plugin-api.ts';
import { registerReportType, type ReportRange } from './report-types.ts';
import { JOB_STATES } from './jobs.ts';
import { withPresence } from './presence.ts';

/** clients listed at most */
const MAX_CLIENTS = 1000;
/** completed jobs whose durations are averaged at most (the latest ones) */
const MAX_DURATIONS = 5000;

type ByState = Record<(typeof JOB_STATES)[number], number>;
const noJobs = (): ByState => Object.fromEntries(JOB_STATES.map((s) => [s, 0])) as ByState;
const within = (field: string, range: ReportRange) => ({ [field]: { $lte: range.to.toISOString(), ...(range.from ? { $gte: range.from.toISOString() } : {}) } });
const keyOf = (clientId: unknown) => (typeof clientId === 'string' ? clientId : '');

export interface ClientActivity {
  clientId: string;
  name: string;
  ownerId: string;
  status: string;
  presence: string;
  lastSeenAt: string | null;
  jobs: ByState;
  completed: number;
  failed: number;
  averageDurationMs: number | null;
}

async function computeActivity(ctx: ModuleContext, p: Record<string, unknown>, range: ReportRange): Promise<Record<string, unknown>> {
  const now = ctx.now();
  const empty = { asOf: now.toISOString(), clients: [], unassigned: noJobs(), truncated: false };
  if (!ctx.can('read', 'AiClient') || !ctx.can('read', 'AiJob')) return empty;
  const only = typeof p.clientId === 'string' ? { id: p.clientId } : {};
  const clientsData = ctx.data('AiClient');
  const where = { ...only, createdAt: { $lte: range.to.toISOString() } };
  const count = await clientsData.count(where);
  const clients = await clientsData.find(where, { limit: MAX_CLIENTS, orderBy: 'name,createdAt' });
  const jobs = ctx.data('AiJob');
  const forClients = typeof p.clientId === 'string' ? { clientId: p.clientId } : {};
  const queued = await jobs.aggregate({ groupBy: ['clientId', 'state'], measures: { n: { count: true } }, where: { ...forClients, ...within('createdAt', range) }, limit: 10_000 });
  const ended = await jobs.aggregate({
    groupBy: ['clientId', 'state'],
    measures: { n: { count: true } },
    where: { ...forClients, state: { $in: ['done', 'dead'] }, ...within('finishedAt', range) },
    limit: 10_000,
  });
  const done = await jobs.find({ ...forClients, state: 'done', leasedAt: { $ne: null }, ...within('finishedAt', range) }, { limit: MAX_DURATIONS, orderBy: '-finishedAt' });

  const byState = new Map<string, ByState>();
  for (const r of queued) {
    const k = keyOf(r.clientId);
    if (!byState.has(k)) byState.set(k, noJobs());
    byState.get(k)![r.state as keyof ByState] += Number(r.n);
  }
  const endedOf = (k: string, state: string) => ended.filter((r) => keyOf(r.clientId) === k && r.state === state).reduce((a, r) => a + Number(r.n), 0);
  const durations = new Map<string, number[]>();
  for (const j of done) {
    const ms = new Date(j.finishedAt).getTime() - new Date(j.leasedAt).getTime();
    durations.set(keyOf(j.clientId), [...(durations.get(keyOf(j.clientId)) ?? []), ms]);
  }
  const average = (xs: number[] | undefined) => (xs?.length ? Math.round(xs.reduce((a, b) => a + b, 0) / xs.length) : null);
  const items: ClientActivity[] = clients.map((c: Row) => {
    const dto = withPresence(clientsData.toDto(c), now);
    return {
      clientId: c.id,
      name: c.name,
      ownerId: c.ownerId,
      status: c.status,
      presence: dto.presence as string,
      lastSeenAt: (dto.lastSeenAt as string | null) ?? null,
      jobs: byState.get(c.id) ?? noJobs(),
      completed: endedOf(c.id, 'done'),
      failed: endedOf(c.id, 'dead'),
      averageDurationMs: average(durations.get(c.id)),
    };
  });
  // jobs queued for any client of their owner that none has taken yet
  return { asOf: now.toISOString(), clients: items, unassigned: typeof p.clientId === 'string' ? noJobs() : (byState.get('') ?? noJobs()), truncated: count > items.length };
}

registerReportType({
  name: 'client-activity',
  title: 'Client activity',
  description:
    "Per API-key client the owner can see (created before the range's end): presence and last use as of the run, the jobs queued in the range by their state now, the jobs completed and failed for good (dead) in the range, and the average time a completed job ran (its last lease to done, over the latest 5000); jobs queued for any client and not taken yet under unassigned",
  parameters: Type.Object({ clientId: Type.Optional(Type.String({ format: 'uuid', description: 'only this client', 'x-entity': 'AiClient' })) }, { additionalProperties: false }),
  run: computeActivity,
  figures(r) {
    const items = (r.clients ?? []) as ClientActivity[];
    const out: Record<string, number> = { clients: items.length, online: items.filter((c) => c.presence === 'online').length, completed: 0, failed: 0 };
    for (const s of JOB_STATES) out[`jobs.${s}`] = items.reduce((a, c) => a + (c.jobs?.[s] ?? 0), 0);
    for (const c of items) {
      Object.assign(out, { [`completed.${c.clientId}`]: c.completed, [`failed.${c.clientId}`]: c.failed });
      out.completed += c.completed;
      out.failed += c.failed;
    }
    return out;
  },
});
