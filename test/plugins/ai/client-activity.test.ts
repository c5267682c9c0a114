// The client-activity report and the clients and jobs dashboard sections,
// against a data set counted by hand on a controlled clock: alice's three
// clients (one busy, one silent holding a lease, one revoked) and a job for
// any of her clients; bob's one client with a queued job. A member's report
// and dashboard see only their own clients; an admin's see the tenant's.
import t from 'tap';
import { clientsWorld, MINUTE } from './clients-api.ts';
import { queueJob } from '../../../plugins/ai/jobs.ts';
import { clientsSection, jobsSection } from '../../../plugins/ai/client-dashboard.ts';
import { SYSTEM } from '../../../core/access/principal.ts';
import type { ModuleContext } from '../../../core/plugin-api.ts';

const w = await clientsWorld(t);
const RANGE = { to: '2031-01-01T00:00:00Z' };
const ok = (res: { statusCode: number; body: string }, code: number, what: string) => {
  if (res.statusCode !== code) throw new Error(`${what}: ${res.statusCode} ${res.body}`);
  return JSON.parse(res.body || 'null');
};
const queue = async (clientId: string) => ok(await w.asUser(w.alice.token, 'POST', `/api/ai/clients/${clientId}/jobs`, { kind: 'work' }), 201, 'queue');
const claim = async (token: string) => ok(await w.asClient(token, 'POST', '/api/ai/client/jobs/claim'), 200, 'claim');
/** a check while the data set is built (an assertion at the top level would end tap's root test early) */
const same = (got: unknown, want: unknown, what: string) => {
  if (got !== want) throw new Error(`${what}: ${String(got)}, not ${String(want)}`);
};
const step = async (token: string, id: string, what: 'complete' | 'fail', body: object) => ok(await w.asClient(token, 'POST', `/api/ai/client/jobs/${id}/${what}`, body), 200, what);

// the data set, counted by hand
const a2 = await w.client(w.alice.token, { name: 'A2 silent' });
const a3 = await w.client(w.alice.token, { name: 'A3 revoked' });
const b1 = await w.client(w.bob.token, { name: 'B1' });
// A2 takes one and falls silent holding it; A3 is revoked; bob's client gets one
const j5 = await queue(a2.id);
same((await claim(a2.token)).id, j5.id, 'claim j5');
ok(await w.asUser(w.alice.token, 'POST', `/api/ai/clients/${a3.id}/revoke`), 200, 'revoke');
ok(await w.asUser(w.bob.token, 'POST', `/api/ai/clients/${b1.id}/jobs`, { kind: 'work' }), 201, "bob's job");
// 15 minutes on (A2 and B1 offline), A1 comes: two completed (60 s and 56 s from lease to done),
// one failed for good, one still queued
w.clock.advance(15 * MINUTE);
const a1 = await w.client(w.alice.token, { name: 'A1 busy' });
const j1 = await queue(a1.id);
const j2 = await queue(a1.id);
same((await claim(a1.token)).id, j1.id, 'claim j1');
w.clock.advance(4000);
same((await claim(a1.token)).id, j2.id, 'claim j2');
w.clock.advance(56_000);
await step(a1.token, j1.id, 'complete', { result: {} });
await step(a1.token, j2.id, 'complete', { result: {} });
const j3 = await queue(a1.id);
same((await claim(a1.token)).id, j3.id, 'claim j3');
await step(a1.token, j3.id, 'fail', { error: 'cannot', retry: false });
await queue(a1.id);
// a user holding erp:ai:admin (and erp:pm:view, to name a user): their reports and dashboard cover the tenant
const chief = await w.ctx.user(w.tenant, { codes: ['erp:ai:admin', 'erp:pm:view'] });
// one for any of alice's clients, none takes it
const sys = (await w.ctx.kernel.contextFor({ tenant: w.tenant.id, principal: SYSTEM })) as ModuleContext;
await queueJob(sys, { ownerId: w.alice.id, kind: 'anyone' });

const noJobs = { queued: 0, leased: 0, done: 0, failed: 0, dead: 0 };
const define = async (token: string, body: object) => ok(await w.asUser(token, 'POST', '/api/ai/reports', { name: 'Clients', type: 'client-activity', ...body }), 201, 'define');
const run = async (token: string, id: string, range: object = RANGE) => ok(await w.asUser(token, 'POST', `/api/ai/reports/${id}/run`, range), 201, 'run');

t.test("the report: per client of the owner's, counted by hand", async (t) => {
  const report = await define(w.alice.token, {});
  const r = await run(w.alice.token, report.id);
  t.equal(r.status, 'succeeded', r.error ?? '');
  t.equal(r.result.asOf, w.clock.now().toISOString());
  t.same(
    r.result.clients.map((c: { name: string }) => c.name),
    ['A1 busy', 'A2 silent', 'A3 revoked'],
    "alice's three, not bob's",
  );
  const [c1, c2, c3] = r.result.clients;
  t.same(c1, {
    clientId: a1.id,
    name: 'A1 busy',
    ownerId: w.alice.id,
    status: 'active',
    presence: 'online',
    lastSeenAt: w.clock.now().toISOString(),
    jobs: { ...noJobs, queued: 1, done: 2, dead: 1 },
    completed: 2,
    failed: 1,
    averageDurationMs: 58_000,
  });
  t.match(c2, { clientId: a2.id, status: 'active', presence: 'offline', jobs: { ...noJobs, leased: 1 }, completed: 0, failed: 0, averageDurationMs: null });
  t.match(c3, { clientId: a3.id, status: 'revoked', presence: 'offline', jobs: noJobs, completed: 0, failed: 0, averageDurationMs: null });
  t.same(r.result.unassigned, { ...noJobs, queued: 1 }, 'the job for any of her clients');
  t.equal(r.result.truncated, false);

  const cmpFirst = ok(await w.asUser(w.alice.token, 'GET', `/api/ai/report-runs/${r.id}/compare`), 200, 'compare');
  const fig = Object.fromEntries(cmpFirst.figures.map((f: { figure: string; current: number }) => [f.figure, f.current]));
  t.match(fig, { clients: 3, online: 1, completed: 2, failed: 1, 'jobs.queued': 1, 'jobs.leased': 1, 'jobs.done': 2, 'jobs.dead': 1, [`completed.${a1.id}`]: 2, [`failed.${a1.id}`]: 1 });

  const admin = ok(await w.admin('POST', `/api/ai/reports/${report.id}/run`, RANGE), 201, 'admin runs alice’s');
  t.equal(admin.result.clients.length, 3, 'as its owner: still her three');
  const own = await define(chief.token, {});
  const all = await run(chief.token, own.id);
  t.same(all.result.clients.map((c: { name: string }) => c.name).sort(), ['A1 busy', 'A2 silent', 'A3 revoked', 'B1'], "an admin's report: the tenant's");
  t.match(
    all.result.clients.find((c: { clientId: string }) => c.clientId === b1.id),
    { presence: 'offline', jobs: { ...noJobs, queued: 1 } },
  );
});

t.test('the range, one client, parameters', async (t) => {
  const report = await define(w.alice.token, {});
  const before = await run(w.alice.token, report.id, { to: '2000-01-01T00:00:00Z' });
  t.same(before.result.clients, [], 'no client existed then');
  const one = await define(w.alice.token, { parameters: { clientId: a1.id } });
  const r = await run(w.alice.token, one.id);
  t.same(
    r.result.clients.map((c: { clientId: string }) => c.clientId),
    [a1.id],
  );
  t.same(r.result.unassigned, noJobs);
  const foreign = await run(w.alice.token, (await define(w.alice.token, { parameters: { clientId: b1.id } })).id);
  t.same(foreign.result.clients, [], "bob's client is not hers to see");
  for (const [parameters, path] of [
    [{ clientId: 'nope' }, '/parameters/clientId'],
    [{ clientId: 5 }, '/parameters/clientId'],
    [{ bogus: true }, '/parameters/bogus'],
  ] as const) {
    const res = await w.asUser(w.alice.token, 'POST', '/api/ai/reports', { name: 'x', type: 'client-activity', parameters });
    t.equal(res.statusCode, 400, JSON.stringify(parameters));
    t.ok(
      res.json().errors?.some((e: { path: string }) => e.path === path),
      path,
    );
  }
  t.equal((await w.asUser(w.nobody.token, 'POST', '/api/ai/reports', { name: 'x', type: 'client-activity' })).statusCode, 403, 'no AI code');
});

t.test('dashboard: clients and jobs of the caller, the tenant for an admin, presence exact', async (t) => {
  const sections = async (token: string) =>
    Object.fromEntries(ok(await w.asUser(token, 'GET', '/api/ai/dashboard'), 200, 'dashboard').sections.map((s: { key: string; figures: unknown }) => [s.key, s.figures]));
  const alice = await sections(w.alice.token);
  t.same(Object.keys(alice), ['tasks', 'clients', 'jobs', 'reports'], 'in order');
  t.same(alice.clients, { total: 3, online: 1, offline: 1, revoked: 1 });
  t.same(alice.jobs, { total: 6, byState: { queued: 2, leased: 1, done: 2, failed: 0, dead: 1 } });
  const bob = await sections(w.bob.token);
  t.same(Object.keys(bob), ['clients', 'jobs', 'reports'], 'no task codes: no task section');
  t.same(bob.clients, { total: 1, online: 0, offline: 1, revoked: 0 });
  t.same(bob.jobs, { total: 1, byState: { ...noJobs, queued: 1 } });
  const admin = await sections(chief.token);
  t.same(admin.clients, { total: 4, online: 1, offline: 2, revoked: 1 });
  t.same(admin.jobs, { total: 7, byState: { queued: 3, leased: 1, done: 2, failed: 0, dead: 1 } });
  w.clock.advance(15 * MINUTE - 1000);
  t.equal((await sections(w.alice.token)).clients.online, 1, 'at 14:59 online');
  w.clock.advance(1000);
  t.same((await sections(w.alice.token)).clients, { total: 3, online: 0, offline: 2, revoked: 1 }, 'at 15:00 offline');
  t.equal((await w.asUser(w.nobody.token, 'GET', '/api/ai/dashboard')).statusCode, 403, 'no AI code');
  const cannot = { can: () => false } as unknown as ModuleContext;
  t.equal(clientsSection.visible!(cannot), false, 'no read of clients: no clients section');
  t.equal(jobsSection.visible!(cannot), false, 'no read of jobs: no jobs section');
});
