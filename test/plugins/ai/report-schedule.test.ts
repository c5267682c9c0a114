// Scheduled reports on a controlled clock (times after the tasks were made, so a
// summary up to the run counts them), in a tenant on Europe/Berlin time:
// the next run across both DST changes, due runs made once (also when two
// sweeps race), one catch-up after downtime, paused reports, and runs made as
// the owner (a member's report counts only their projects' tasks).
import t from 'tap';
import { build, PASSWORD, uniqueId, type TestTenant } from '../../helper.ts';
import { provisionTenant } from '../../../core/tenancy/provision.ts';
import { SYSTEM } from '../../../core/plugin-api.ts';
import { nextRunAfter, runDueReports } from '../../../plugins/ai/schedule.ts';
import { expectStatus, pmApi } from '../pm/pm-api.ts';

const ctx = await build(t);
const id = uniqueId();
const adminEmail = `admin@${id}.test`;
const provisioned = await provisionTenant(ctx.kernel, {
  id,
  name: 'Berlin',
  timeZone: 'Europe/Berlin',
  company: { code: 'HQ', name: 'HQ' },
  admin: { email: adminEmail, name: 'Admin', password: PASSWORD },
});
const login = expectStatus(await ctx.login(id, adminEmail, PASSWORD), 200, 'login');
const tenant: TestTenant = { id, schema: provisioned.tenant.schema, companyId: provisioned.companyId, adminEmail, adminToken: login.accessToken };
const system = await ctx.kernel.contextFor({ tenant: id, principal: SYSTEM });
const pm = pmApi(ctx, tenant);
const AI = ['erp:pm:view', 'erp:ai:view'];

const at = (iso: string) => new Date(iso);
/** Puts a definition's next run where a test wants it (read-only on the API: the schedule keeps it). */
const nextRunAt = (reportId: string, iso: string) => system.data('AiReport').update(reportId, {}, { set: { nextRunAt: iso } });
const runsOf = async (reportId: string) => system.data('AiReportRun').find({ reportId }, { orderBy: 'startedAt' });

t.test('next run on the tenant clock, across daylight saving time', async (t) => {
  const tz = 'Europe/Berlin';
  // 09:00 in Berlin: 08:00 UTC in winter, 07:00 UTC in summer
  t.equal(nextRunAfter('0 9 * * *', tz, at('2026-03-28T08:00:00Z')).toISOString(), '2026-03-29T07:00:00.000Z', 'spring forward');
  t.equal(nextRunAfter('0 9 * * *', tz, at('2026-03-27T09:00:00Z')).toISOString(), '2026-03-28T08:00:00.000Z', 'the day before');
  t.equal(nextRunAfter('0 9 * * *', tz, at('2026-10-24T07:00:00Z')).toISOString(), '2026-10-25T08:00:00.000Z', 'fall back');
  t.equal(nextRunAfter('0 9 * * *', tz, at('2026-03-29T07:00:00Z')).toISOString(), '2026-03-30T07:00:00.000Z', 'strictly after');
  t.equal(nextRunAfter('0 9 * * *', 'UTC', at('2026-03-28T08:00:00Z')).toISOString(), '2026-03-28T09:00:00.000Z', 'UTC differs');
  // 02:30 does not exist on 2026-03-29 in Berlin: it runs once that day, an hour on
  const skipped = nextRunAfter('30 2 * * *', tz, at('2026-03-28T12:00:00Z'));
  t.equal(skipped.toISOString().slice(0, 10), '2026-03-29');
  t.equal(nextRunAfter('30 2 * * *', tz, skipped).toISOString(), '2026-03-30T00:30:00.000Z');
  t.equal(nextRunAfter('0 0 1 * *', tz, at('2026-11-15T00:00:00Z')).toISOString(), '2026-11-30T23:00:00.000Z', 'first of the month, Berlin midnight');
});

t.test('due runs: once, raced, caught up once, paused; as the owner', async (t) => {
  const owner = await pm.user(AI);
  const stranger = await pm.user(AI);
  const lead = await pm.user(AI);
  const mine = await pm.project(lead);
  await pm.member(lead, mine.id, owner.id, 'member');
  const theirs = await pm.project(stranger);
  await pm.task(owner, { projectId: mine.id });
  await pm.task(stranger, { projectId: theirs.id });
  await pm.task(stranger, { projectId: theirs.id });
  const def = expectStatus(await owner.api('POST', '/api/ai/reports', { name: 'Daily', type: 'task-summary', schedule: '0 9 * * *' }), 201, 'define');
  // created now: the next 09:00 in Berlin
  const next = new Date(def.nextRunAt);
  t.ok(next > new Date(), 'in the future');
  t.equal(new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Berlin', hour: '2-digit', minute: '2-digit' }).format(next), '09:00');

  await nextRunAt(def.id, '2027-03-27T08:00:00.000Z');
  t.same(await runDueReports(system, at('2027-03-27T07:59:59Z')), [], 'not yet');
  const [first] = await Promise.all([runDueReports(system, at('2027-03-27T08:00:30Z')), runDueReports(system, at('2027-03-27T08:00:30Z'))]).then((r) => r.flat());
  t.equal((await runsOf(def.id)).length, 1, 'two racing sweeps run it once');
  t.match(first, { status: 'succeeded', triggeredBy: 'schedule', runById: null, rangeFrom: null });
  t.equal(first.result.total, 1, "the owner's task, not the stranger's two");
  let stored = (await system.data('AiReport').find({ id: def.id }))[0];
  t.equal(new Date(stored.nextRunAt).toISOString(), '2027-03-28T07:00:00.000Z', 'next: 09:00 summer time');
  t.same(await runDueReports(system, at('2027-03-27T08:05:00Z')), [], 'not again the same day');

  const second = await runDueReports(system, at('2027-03-28T07:00:05Z'));
  t.equal(second.length, 1);
  t.equal(new Date(second[0].rangeFrom).toISOString(), '2027-03-27T08:00:30.000Z', 'the range starts at the last scheduled run');

  // down for three days: one run, then the next 09:00 after now
  const caughtUp = await runDueReports(system, at('2027-04-02T10:00:00Z'));
  t.equal(caughtUp.length, 1, 'caught up once');
  stored = (await system.data('AiReport').find({ id: def.id }))[0];
  t.equal(new Date(stored.nextRunAt).toISOString(), '2027-04-03T07:00:00.000Z');
  t.equal((await runsOf(def.id)).length, 3);

  expectStatus(await owner.api('PATCH', `/api/ai/reports/${def.id}`, { enabled: false }), 200, 'pause');
  t.same(await runDueReports(system, at('2030-01-01T00:00:00Z')), [], 'paused: never due');
  const resumed = expectStatus(await owner.api('PATCH', `/api/ai/reports/${def.id}`, { enabled: true }), 200, 'resume');
  t.ok(new Date(resumed.nextRunAt) > new Date(), 'resumed from now, no backlog');

  // the owner leaves the project: the next scheduled run no longer counts its task
  const membership = (await system.data('ProjectMember').find({ projectId: mine.id, userId: owner.id }))[0];
  await system.data('ProjectMember').remove(membership.id);
  await nextRunAt(def.id, '2027-05-01T07:00:00.000Z');
  const [after] = await runDueReports(system, at('2027-05-01T07:00:01Z'));
  t.equal(after.result.total, 0, 'no longer a member: nothing counted');
  const stranger2 = await pm.user(AI);
  const own = expectStatus(await stranger2.api('POST', '/api/ai/reports', { name: 'Nothing', type: 'task-summary', schedule: '*/5 * * * *' }), 201, 'define');
  await nextRunAt(own.id, '2027-05-01T07:00:00.000Z');
  const [empty] = await runDueReports(system, at('2027-05-01T07:00:02Z'));
  t.equal(empty.result.total, 0, 'a user in no project counts nothing');
  stored = (await system.data('AiReport').find({ id: own.id }))[0];
  t.equal(new Date(stored.nextRunAt).toISOString(), '2027-05-01T07:05:00.000Z', 'every five minutes');
});

t.test('an owner no longer active: the run is kept, failed', async (t) => {
  const owner = await pm.user(AI);
  const def = expectStatus(await owner.api('POST', '/api/ai/reports', { name: 'Orphan', type: 'workload', schedule: '0 * * * *' }), 201, 'define');
  await system.data('User').update(owner.id, { isActive: false });
  await nextRunAt(def.id, '2027-06-01T10:00:00.000Z');
  const failed = (await runDueReports(system, at('2027-06-01T10:00:01Z'))).find((r) => r.reportId === def.id)!;
  t.match(failed, { status: 'failed', result: null, triggeredBy: 'schedule' });
  t.match(failed.error, /owner/);
});

t.test('the job is declared on a cron', async (t) => {
  const jobs = (await import('../../../plugins/ai/index.ts')).jobs!;
  t.equal(jobs['scheduled-reports'].cron, '* * * * *');
});
