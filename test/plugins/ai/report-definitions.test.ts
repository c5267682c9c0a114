// A report definition keeps what it was given and its history: every read
// answers its stored parameters, and a client (the console's edit form
// included) writing back what it read keeps them; a report is archived rather
// than deleted (kept with its runs, hidden from the default list, restored),
// and deleting one that has runs takes ?force=true, which the console's
// confirmation asks for after naming the runs that go.
import t from 'tap';
import { build, PASSWORD } from '../../helper.ts';
import { SYSTEM } from '../../../core/plugin-api.ts';
import { runDueReports } from '../../../plugins/ai/schedule.ts';
import { ConsoleSession } from '../../support/console-session.ts';
import { expectProblem, expectStatus, pmApi, UNKNOWN_ID, type PmUser } from '../pm/pm-api.ts';

const ctx = await build(t);
const tenant = await ctx.tenant();
const pm = pmApi(ctx, tenant);
const system = await ctx.kernel.contextFor({ tenant: tenant.id, principal: SYSTEM });
const AI = ['erp:pm:view', 'erp:ai:view'];

const owner = await pm.user(AI);
const stranger = await pm.user(AI);
const one = await pm.project(owner);
const two = await pm.project(owner);
await pm.task(owner, { projectId: one.id });
await pm.task(owner, { projectId: two.id });
await pm.task(owner, { projectId: two.id });

const define = async (as: PmUser, body: Record<string, unknown>) => expectStatus(await as.api('POST', '/api/ai/reports', body), 201, 'define');
const run = async (id: string) => expectStatus(await owner.api('POST', `/api/ai/reports/${id}/run`, {}), 201, 'run');
const openIn = (w: { result: { items: { open: number }[] } }) => w.result.items.reduce((n, i) => n + i.open, 0);
const ids = (list: { items: { id: string }[] }) => list.items.map((i) => i.id);

t.test('every read answers the stored parameters; a write changes them only when sent', async (t) => {
  const params = { projectId: one.id };
  const created = await define(owner, { name: 'Project one', type: 'workload', parameters: params });
  t.same(created.parameters, params, 'create');
  t.same(expectStatus(await owner.api('GET', `/api/ai/reports/${created.id}`), 200, 'read').parameters, params, 'read');
  const listed = expectStatus(await owner.api('GET', '/api/ai/reports'), 200, 'list').items.find((i: { id: string }) => i.id === created.id);
  t.same(listed.parameters, params, 'list');
  const patched = expectStatus(await owner.api('PATCH', `/api/ai/reports/${created.id}`, { name: 'Only project one' }), 200, 'rename');
  t.same(patched.parameters, params, 'a PATCH without parameters keeps them, and says so');

  // read, modify, write back: a PUT of what was read keeps them
  const { id, type, parameters, schedule, enabled, ownerId } = patched;
  const replaced = expectStatus(await owner.api('PUT', `/api/ai/reports/${id}`, { name: 'Project one again', type, parameters, schedule, enabled, ownerId }), 200, 'put what was read');
  t.same(replaced.parameters, params);
  t.equal(openIn(await run(id)), 1, "the run counts project one's task only");

  const cleared = expectStatus(await owner.api('PATCH', `/api/ai/reports/${id}`, { parameters: null }), 200, 'sent: null');
  t.equal(cleared.parameters, null, 'sent, they change');
  t.equal(openIn(await run(id)), 3, 'the defaults: every project');
});

t.test("the console's edit form shows the parameters and saving it keeps them", async (t) => {
  const params = { projectId: one.id };
  const report = await define(owner, { name: 'Edited', type: 'workload', parameters: params });
  const session = new ConsoleSession(ctx.app);
  const email = expectStatus(await ctx.as(tenant.adminToken, { method: 'GET', url: `/api/users/${owner.id}` }), 200, 'user').email;
  t.equal((await session.login(tenant.id, email, PASSWORD)).statusCode, 303, 'logged in');

  const form = await session.get(`/ai/reports/${report.id}/edit`);
  t.equal(form.statusCode, 200);
  t.notMatch(form.body, /<textarea[^>]*name="parameters"/, 'the parameters are no raw JSON');
  const picker = /<select[^>]*name="(parameters:workload\.projectId)"[^>]*>([\s\S]*?)<\/select>/.exec(form.body);
  t.ok(picker, "a project picker of the report's type");
  t.match(picker![2], new RegExp(`<option value="${one.id}" selected>`), 'the stored project chosen');
  const version = /name="_version" value="(\d+)"/.exec(form.body)![1];

  // the browser sends back what the form holds, the name changed
  const saved = await session.post(`/ai/reports/${report.id}`, { _version: version, name: 'Edited in the console', type: 'workload', [picker![1]]: one.id });
  t.equal(saved.statusCode, 303, saved.body);
  const stored = expectStatus(await owner.api('GET', `/api/ai/reports/${report.id}`), 200, 'read');
  t.match(stored, { name: 'Edited in the console', parameters: params }, 'kept');
  t.equal(openIn(await run(report.id)), 1, 'still one project');
});

t.test('archived: kept with its runs, out of the default list, read-only, never run; restored', async (t) => {
  const report = await define(owner, { name: 'Archived', type: 'task-summary', schedule: '0 * * * *' });
  const first = await run(report.id);
  const archived = expectStatus(await owner.api('POST', `/api/ai/reports/${report.id}/archive`), 200, 'archive');
  t.match(archived, { archived: true, nextRunAt: null });
  t.ok(archived.archivedAt);
  t.notOk(ids(expectStatus(await owner.api('GET', '/api/ai/reports'), 200, 'list')).includes(report.id), 'not in the default list');
  t.ok(ids(expectStatus(await owner.api('GET', '/api/ai/reports?archived=true'), 200, 'archived')).includes(report.id), 'listed when asked');
  t.equal(expectStatus(await owner.api('GET', `/api/ai/report-runs/${first.id}`), 200, 'its run').id, first.id, 'its runs stay');
  expectProblem(t, await owner.api('PATCH', `/api/ai/reports/${report.id}`, { name: 'x' }), 409, 'STATE_LOCKED', 'read-only');
  expectProblem(t, await owner.api('POST', `/api/ai/reports/${report.id}/run`, {}), 409, 'STATE_LOCKED', 'not run on demand');
  await system.data('AiReport').update(report.id, {}, { set: { nextRunAt: '2027-01-01T00:00:00.000Z' } });
  t.notOk(
    (await runDueReports(system, new Date('2027-01-01T00:00:01Z'))).some((r) => r.reportId === report.id),
    'not run on schedule',
  );
  expectProblem(t, await stranger.api('POST', `/api/ai/reports/${report.id}/unarchive`), 404, 'NOT_FOUND', "another's report");

  const restored = expectStatus(await owner.api('POST', `/api/ai/reports/${report.id}/unarchive`), 200, 'restore');
  t.match(restored, { archived: false, archivedAt: null });
  t.ok(new Date(restored.nextRunAt) > new Date(), 'its schedule runs again');
  t.ok(ids(expectStatus(await owner.api('GET', '/api/ai/reports'), 200, 'list')).includes(report.id), 'listed again');
  expectStatus(await owner.api('PATCH', `/api/ai/reports/${report.id}`, { name: 'Back' }), 200, 'writable again');
});

t.test('deleting a report that has runs: 409 unless asked for with ?force=true', async (t) => {
  const empty = await define(owner, { name: 'Never run', type: 'task-summary' });
  expectStatus(await owner.api('DELETE', `/api/ai/reports/${empty.id}`), 204, 'no runs: deleted');

  const report = await define(owner, { name: 'With history', type: 'task-summary' });
  const runs = [await run(report.id), await run(report.id)];
  const refused = await owner.api('DELETE', `/api/ai/reports/${report.id}`);
  expectProblem(t, refused, 409, 'CONFLICT', 'runs would go');
  t.same(
    refused.json().errors.map((e: { path: string }) => e.path),
    ['/force'],
  );
  expectStatus(await owner.api('GET', `/api/ai/report-runs/${runs[0].id}`), 200, 'its runs are still there');
  expectProblem(t, await owner.api('DELETE', `/api/ai/reports/${report.id}?force=yes`), 400, 'VALIDATION_FAILED', 'force is a boolean');
  expectProblem(t, await owner.api('DELETE', `/api/ai/reports/${report.id}?forced=true`), 400, 'VALIDATION_FAILED', 'an unknown parameter');
  expectProblem(t, await stranger.api('DELETE', `/api/ai/reports/${report.id}?force=true`), 404, 'NOT_FOUND', "another's report");
  expectProblem(t, await owner.api('DELETE', `/api/ai/reports/${report.id}?force=true`, undefined, { 'if-match': '"99"' }), 412, 'PRECONDITION_FAILED', 'stale If-Match');
  expectStatus(await owner.api('DELETE', `/api/ai/reports/${report.id}?force=true`), 204, 'asked for');
  expectProblem(t, await owner.api('GET', `/api/ai/reports/${report.id}`), 404, 'NOT_FOUND', 'gone');
  for (const r of runs) expectProblem(t, await owner.api('GET', `/api/ai/report-runs/${r.id}`), 404, 'NOT_FOUND', 'its runs with it');

  const doc = (await ctx.app.inject({ method: 'GET', url: '/api-docs/json' })).json();
  const del = doc.paths['/api/ai/reports/{id}'].delete;
  t.match(del.summary, /force=true/, 'the summary says how');
  t.ok(
    del.parameters.some((p: { name: string; in: string }) => p.name === 'force' && p.in === 'query'),
    'force is documented',
  );
  t.ok(del.responses['409'], '409 documented');
});

t.test("the console's delete confirmation names the runs that go with the report", async (t) => {
  const report = await define(owner, { name: 'Confirmed', type: 'task-summary' });
  for (let i = 0; i < 3; i++) await run(report.id);
  const session = new ConsoleSession(ctx.app);
  const email = expectStatus(await ctx.as(tenant.adminToken, { method: 'GET', url: `/api/users/${owner.id}` }), 200, 'user').email;
  await session.login(tenant.id, email, PASSWORD);
  const detail = await session.get(`/ai/reports/${report.id}`);
  t.match(detail.body, `href="/ai/reports/${report.id}/delete"`, 'the report page leads to it');
  const page = await session.get(`/ai/reports/${report.id}/delete`);
  t.equal(page.statusCode, 200);
  t.match(page.body, /id="ai-delete-loss"><strong>[^<]*\b3\b[^<]*<\/strong>/, 'it names the three runs');
  t.match(page.body, /id="ai-archive-button"/, 'and offers to archive instead');
  t.match(page.body, /"runs":3/, 'its script asks for the deletion with the runs it named');

  const none = await define(owner, { name: 'Nothing to lose', type: 'task-summary' });
  const plain = await session.get(`/ai/reports/${none.id}/delete`);
  t.notMatch(plain.body, /ai-archive-button/);
  t.match(plain.body, /"runs":0/);
  t.equal((await session.get(`/ai/reports/${UNKNOWN_ID}/delete`)).statusCode, 404, 'an unknown report');
});

t.test("the console's archive page archives or restores, saying what is kept", async (t) => {
  const report = await define(owner, { name: 'To archive', type: 'task-summary' });
  await run(report.id);
  const session = new ConsoleSession(ctx.app);
  const email = expectStatus(await ctx.as(tenant.adminToken, { method: 'GET', url: `/api/users/${owner.id}` }), 200, 'user').email;
  await session.login(tenant.id, email, PASSWORD);
  t.match((await session.get(`/ai/reports/${report.id}`)).body, `href="/ai/reports/${report.id}/archive"`, 'the report page leads to it');
  const open = await session.get(`/ai/reports/${report.id}/archive`);
  t.equal(open.statusCode, 200);
  t.match(open.body, /id="ai-archive-state">[^<]*\b1\b/, 'it names the run that is kept');
  t.match(open.body, /id="ai-archive-button"/);
  t.notMatch(open.body, /ai-restore-button/);

  expectStatus(await owner.api('POST', `/api/ai/reports/${report.id}/archive`), 200, 'archive');
  const archived = await session.get(`/ai/reports/${report.id}/archive`);
  t.match(archived.body, /id="ai-restore-button"/, 'an archived one is restored from there');
  t.notMatch(archived.body, /ai-archive-button/);
  t.match((await session.get('/ai/reports?archived=true')).body, `href="/ai/reports/${report.id}"`, 'the list shows it when asked');
  t.notMatch((await session.get('/ai/reports')).body, `href="/ai/reports/${report.id}"`, 'not by default');
});
