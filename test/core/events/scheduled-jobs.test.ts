// Module jobs: sent with ctx.enqueue (only if the transaction commits), run in
// the tenant and company they were sent for, retried until their attempts, then
// dead (dead() told once); cron jobs scheduled once per time zone in use and
// fanned out to that zone's active tenants only.
import { randomBytes } from 'node:crypto';
import t from 'tap';
import { build, type TestTenant } from '../../helper.ts';
import { until } from '../../support/wait.ts';
import { modulesWith, SDK_URL } from '../../support/manifests.ts';
import { SYSTEM } from '../../../core/access/principal.ts';

// a name of this run's own: the helper drops the registry at teardown, and another run may be using its namesake
const REGISTRY = `events_sched_${randomBytes(4).toString('hex')}`;
const log = { error: () => {}, warn: () => {} };

// "ticker": a job that records where it ran, one that always fails, and a daily cron job
const { manifestsDir, pluginsDir } = modulesWith(t, {
  ticker: {
    manifest: {},
    plugin: `
import { httpError } from '${SDK_URL}';
const runs = (globalThis.tickerRuns ??= []);
export const jobs = {
  note: { async handle(ctx, data, run) { runs.push({ job: 'note', tenant: ctx.tenantId, company: ctx.companyId, data, attempt: run.attempt, system: ctx.principal.kind }); } },
  doomed: {
    attempts: 2,
    async handle(ctx, data, run) { runs.push({ job: 'doomed', tenant: ctx.tenantId, attempt: run.attempt }); throw new Error('always'); },
    async dead(ctx, data, error) { runs.push({ job: 'doomed:dead', tenant: ctx.tenantId, error }); },
  },
  nightly: { cron: '0 3 * * *', async handle(ctx) { runs.push({ job: 'nightly', tenant: ctx.tenantId }); } },
};
`,
  },
});
type Run = { job: string; tenant: string; company?: string | null; data?: unknown; attempt?: number; system?: string; error?: string };
const runs = ((globalThis as { tickerRuns?: Run[] }).tickerRuns ??= []);

const ctx = await build(t, {
  config: {
    manifestsDir,
    pluginsDir,
    registrySchema: REGISTRY,
    workers: true,
    events: { enabled: true, pollMs: 20, batchSize: 500, perTenant: 100, tenantConcurrency: 5, retentionDays: 7, retryDelaySeconds: 1 },
  },
});
await ctx.kernel.startWorkers(log);

const sql = (text: string, params: unknown[] = []) => ctx.kernel.dbs.main.em.getConnection().execute(text, params) as Promise<Record<string, any>[]>;
async function inZone(tenant: TestTenant, timeZone: string) {
  await sql(`update ${REGISTRY}.tenants set time_zone = ? where id = ?`, [timeZone, tenant.id]);
  ctx.kernel.tenants.forget(tenant.id);
}

t.test('a job runs in the tenant and company it was sent for, as the system; a rolled-back send sends nothing', async (t) => {
  const tenant = await ctx.tenant();
  const sys = await ctx.kernel.contextFor({ tenant: tenant.id, principal: SYSTEM, companyId: tenant.companyId });
  await t.rejects(
    sys.transaction(async (tx) => {
      await tx.enqueue('ticker.note', { n: 'rolled back' });
      throw new Error('changed my mind');
    }),
  );
  const id = await sys.transaction((tx) => tx.enqueue('ticker.note', { n: 1 }));
  t.ok(id, 'sent inside a transaction: its id');
  const mine = await until(
    () => runs.filter((r) => r.job === 'note' && r.tenant === tenant.id),
    (r) => r.length >= 1,
  );
  await new Promise((r) => setTimeout(r, 300));
  t.same(
    runs.filter((r) => r.job === 'note' && r.tenant === tenant.id),
    [{ job: 'note', tenant: tenant.id, company: tenant.companyId, data: { n: 1 }, attempt: 1, system: 'system' }],
    'once, in its tenant and company, never the rolled-back one',
  );
  t.equal(mine.length, 1);
  await t.rejects(sys.enqueue('ticker.nosuch', {}), /no module declares the job "ticker.nosuch"/);
});

t.test('a job failing every try is retried until its attempts, then dead, and dead() hears of it once', async (t) => {
  const tenant = await ctx.tenant();
  const sys = await ctx.kernel.contextFor({ tenant: tenant.id, principal: SYSTEM, companyId: tenant.companyId });
  await sys.enqueue('ticker.doomed', {});
  const dead = await until(
    () => runs.filter((r) => r.tenant === tenant.id && r.job === 'doomed:dead'),
    (r) => r.length >= 1,
  );
  t.same(
    runs.filter((r) => r.tenant === tenant.id && r.job === 'doomed').map((r) => r.attempt),
    [1, 2],
    'two tries',
  );
  t.match(dead, [{ error: 'always' }]);
  const jobs = (await ctx.as(tenant.adminToken, { method: 'GET', url: '/api/jobs?queue=ticker.doomed' })).json();
  t.match(jobs.items, [{ state: 'failed', attempt: 2, attempts: 2, error: 'always' }], 'dead: failed for good');
  const letters = await until(
    () => ctx.kernel.queues.boss('main').findJobs('ticker.doomed.dead', { data: { tenantId: tenant.id } }),
    (j) => j.length > 0,
  );
  t.equal(letters.length, 1, 'and kept in the dead-letter queue');
});

t.test("cron jobs: one schedule per time zone in use, each fanned out to that zone's active tenants", async (t) => {
  const [berlin, berlin2, newYork, suspended, failed] = [await ctx.tenant(), await ctx.tenant(), await ctx.tenant(), await ctx.tenant(), await ctx.tenant()];
  await inZone(berlin, 'Europe/Berlin');
  await inZone(berlin2, 'Europe/Berlin');
  await inZone(newYork, 'America/New_York');
  await inZone(suspended, 'Asia/Tokyo');
  await sql(`update ${REGISTRY}.tenants set status = 'suspended' where id = ?`, [suspended.id]);
  // its schema could not be migrated: it answers nothing, so no cron job either
  await inZone(failed, 'Europe/Berlin');
  await sql(`update ${REGISTRY}.tenants set migration_error = '{"code": "MIGRATION_FAILED"}'::jsonb where id = ?`, [failed.id]);
  await ctx.kernel.eventRuntime.syncSchedules('main');
  const boss = ctx.kernel.queues.boss('main');
  const schedules = (await boss.getSchedules('plinth.cron')).filter((s) => (s.data as { job?: string })?.job === 'ticker.nightly');
  const zones = Object.fromEntries(schedules.map((s) => [s.timezone, s.cron]));
  t.match(zones, { 'Europe/Berlin': '0 3 * * *', 'America/New_York': '0 3 * * *' }, "one schedule per zone, on the zone's clock");
  t.notOk('Asia/Tokyo' in zones, 'no schedule for a zone with only suspended tenants');

  // what the schedule sends at 03:00 in Berlin
  await boss.send('plinth.cron', { job: 'ticker.nightly', tz: 'Europe/Berlin' });
  const ran = await until(
    () => runs.filter((r) => r.job === 'nightly').map((r) => r.tenant),
    (r) => r.includes(berlin.id) && r.includes(berlin2.id),
  );
  await new Promise((r) => setTimeout(r, 500));
  t.ok(ran.includes(berlin.id) && ran.includes(berlin2.id), 'every Berlin tenant');
  t.notOk(
    runs.some((r) => r.job === 'nightly' && [newYork.id, suspended.id, failed.id].includes(r.tenant)),
    'no tenant of another zone, no suspended one, none whose migration failed',
  );
});
