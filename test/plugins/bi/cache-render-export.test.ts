// The result cache of analytics (a repeat is served from it, a write to a table
// read ends it, it is never shared across tenants, companies or callers whose
// rules differ, identical concurrent queries run once), the dashboard render
// of a sheet (every widget's data in one call, a failing widget alone), and
// the CSV export (quoting, no formula reaches a spreadsheet).
import t from 'tap';
import { build } from '../../helper.ts';
import { pmApi } from '../pm/pm-api.ts';
import { biApi, expectProblem, expectStatus, UNKNOWN_ID } from './bi-api.ts';

const ctx = await build(t);
const tenant = await ctx.tenant();
const bi = biApi(ctx, tenant);
const analyst = await bi.user(['erp:bi:view', 'erp:crm:manage']);
const customer = expectStatus(await analyst.api('POST', '/api/crm/customers', { name: 'Acme', currency: 'EUR' }), 201, 'customer').id;
const opportunity = (name: string, amount: string) => analyst.api('POST', '/api/crm/opportunities', { name, customerId: customer, amount, currency: 'EUR' });
for (const [name, amount] of [
  ['O1', '10.00'],
  ['O2', '5.50'],
]) {
  expectStatus(await opportunity(name, amount), 201, name);
}

const COUNT = { table: 'Opportunity', measures: [{ agg: 'count' }, { agg: 'sum', field: 'amount' }] };
const analytics = async (as: { api: typeof analyst.api }, query: object = COUNT, headers: Record<string, string> = {}) =>
  expectStatus(await as.api('POST', '/api/bi/analytics', query, headers), 200, 'analytics');

t.test('a repeat is served from the cache until a table it reads is written', async (t) => {
  const query = { ...COUNT, filters: [{ field: 'name', op: 'startsWith', value: 'O' }] };
  const first = await analytics(analyst, query);
  // an amount of money comes per currency: here EUR alone
  t.same([first.cached, first.rows], [false, [{ currency: 'EUR', count: 2, sum_amount: '15.50' }]]);
  const again = await analytics(analyst, query);
  t.same([again.cached, again.rows], [true, first.rows]);
  t.equal(expectStatus(await analyst.api('GET', `/api/bi/analytics?query=${encodeURIComponent(JSON.stringify(query))}`), 200, 'GET').cached, true, 'GET and POST share it');

  const o3 = expectStatus(await opportunity('O3', '1.00'), 201, 'O3');
  const after = await analytics(analyst, query);
  t.same([after.cached, after.rows], [false, [{ currency: 'EUR', count: 3, sum_amount: '16.50' }]], 'a create ends it');
  // a write to a table the query joins: the customer's name, read through customerId.name
  const byCustomer = { ...query, dimensions: ['customerId.name'] };
  t.equal((await analytics(analyst, byCustomer)).rows[0]['customerId.name'], 'Acme');
  t.equal((await analytics(analyst, byCustomer)).cached, true);
  expectStatus(await analyst.api('PATCH', `/api/crm/customers/${customer}`, { name: 'Acme Ltd' }, { 'if-match': '"1"' }), 200, 'rename');
  const renamed = await analytics(analyst, byCustomer);
  t.same([renamed.cached, renamed.rows[0]['customerId.name']], [false, 'Acme Ltd'], 'a write to a joined table ends it');
  t.equal((await analytics(analyst, query)).cached, true, 'a query not reading that table keeps its result');

  expectStatus(await analyst.api('DELETE', `/api/crm/opportunities/${o3.id}`, undefined, { 'if-match': `"${o3.version}"` }), 204, 'delete');
  t.same((await analytics(analyst, query)).rows, first.rows, 'a delete ends it');
});

t.test('never shared across tenants, companies or callers whose rules differ', async (t) => {
  const warm = await analytics(analyst);
  t.equal(warm.rows[0].count, 2);
  // another tenant, the same query: its own (empty) answer
  const other = await ctx.tenant();
  const stranger = await biApi(ctx, other).user(['erp:bi:view', 'erp:crm:manage']);
  const theirs = await analytics(stranger);
  t.same([theirs.cached, theirs.rows], [false, []], 'no opportunity: no currency to sum in');
  // another company of the same tenant
  const second = await ctx.company(tenant, 'C2', [analyst.id]);
  const inSecond = await analytics(analyst, COUNT, { 'x-company-id': second });
  t.same([inSecond.cached, inSecond.rows], [false, []]);
  // project tasks: a member and a non-member ask the same; rules bound to the caller keep them apart
  const pm = pmApi(ctx, tenant);
  const team = await pm.team();
  await pm.task(team.owner, { projectId: team.project.id, estimate: '2.00' });
  const member = await bi.user(['erp:bi:view', 'erp:pm:view']);
  const outsider = await bi.user(['erp:bi:view', 'erp:pm:view']);
  await pm.member(team.owner, team.project.id, member.id, 'viewer');
  const tasks = { table: 'Task', measures: [{ agg: 'count' }] };
  t.same((await analytics(member, tasks)).rows, [{ count: 1 }]);
  const theirsToo = await analytics(outsider, tasks);
  t.same([theirsToo.cached, theirsToo.rows], [false, [{ count: 0 }]], "the member's result is not the outsider's");
  t.same((await analytics(member, tasks)).cached, true);
});

t.test('identical queries running at the same time run once', async (t) => {
  const query = { ...COUNT, dimensions: ['name'], limit: 7 };
  const answers = await Promise.all(Array.from({ length: 6 }, () => analytics(analyst, query)));
  t.equal(answers.filter((a) => !a.cached).length, 1);
  for (const a of answers) t.same(a.rows, answers[0].rows);
});

t.test('CSV export: a header of column names, quoted values, no formula', async (t) => {
  const evil = expectStatus(await analyst.api('POST', '/api/crm/customers', { name: '=HYPERLINK("http://x.test","a, b")', currency: 'EUR' }), 201, 'evil').id;
  expectStatus(await analyst.api('POST', '/api/crm/opportunities', { name: '@SUM(A1)', customerId: evil, amount: '1.25', currency: 'EUR' }), 201, 'evil opp');
  const query = { table: 'Opportunity', dimensions: ['customerId.name', 'name'], measures: [{ agg: 'sum', field: 'amount', name: 'total' }], order: [{ by: 'name' }] };
  const res = await analyst.api('GET', `/api/bi/analytics/csv?query=${encodeURIComponent(JSON.stringify(query))}`);
  t.equal(res.statusCode, 200);
  t.match(res.headers['content-type'], /^text\/csv; charset=utf-8/);
  t.equal(res.headers['content-disposition'], 'attachment; filename="Opportunity.csv"');
  t.equal(res.body, ['customerId.name,name,currency,total', `"'=HYPERLINK(""http://x.test"",""a, b"")",'@SUM(A1),EUR,1.25`, 'Acme Ltd,O1,EUR,10.00', 'Acme Ltd,O2,EUR,5.50', ''].join('\r\n'));
  const posted = await analyst.api('POST', '/api/bi/analytics/csv', query);
  t.same([posted.statusCode, posted.body], [200, res.body], 'POST answers the same');
  expectProblem(t, await analyst.api('GET', '/api/bi/analytics/csv?query=%7Bnot'), 400, 'VALIDATION_FAILED', 'no JSON');
  expectProblem(t, await analyst.api('POST', '/api/bi/analytics/csv', { table: 'Opportunity', dimensions: ['nope'], measures: [{ agg: 'count' }] }), 400, 'VALIDATION_FAILED', 'unknown field');
  const viewer = await bi.user(['erp:bi:view']);
  expectProblem(t, await viewer.api('POST', '/api/bi/analytics/csv', query), 403, 'FORBIDDEN', 'a table the caller may not read');
});

t.test('a sheet renders every widget in one call; a failing widget fails alone', async (t) => {
  const owner = await bi.user(['erp:bi:view', 'erp:crm:view']);
  const app = await bi.app(owner);
  const sheet = await bi.sheet(owner, app.id);
  const viewer = await bi.user(['erp:bi:view']);
  await bi.share(owner, app.id, viewer.id, 'viewer');
  const saved = expectStatus(await owner.api('POST', `/api/bi/apps/${app.id}/queries`, { name: 'Apps', query: { table: 'BiApp', measures: [{ agg: 'count' }] } }), 201, 'saved query');
  const apps = { table: 'BiApp', measures: [{ agg: 'count' }] };
  const text = await bi.widget(owner, sheet.id, { kind: 'text', title: 'Notes', w: 12, h: 1 });
  const kpi = await bi.widget(owner, sheet.id, { kind: 'number', title: 'Apps', query: apps, w: 4, h: 2 });
  const same = await bi.widget(owner, sheet.id, { kind: 'table', title: 'Apps again', query: apps, w: 4, h: 2 });
  const fromSaved = await bi.widget(owner, sheet.id, { kind: 'number', title: 'Saved', queryId: saved.id, w: 4, h: 2 });
  const crm = await bi.widget(owner, sheet.id, {
    kind: 'chart',
    chartType: 'bar',
    title: 'Pipeline',
    query: { table: 'Opportunity', dimensions: ['name'], measures: [{ agg: 'count' }] },
    w: 12,
    h: 4,
  });

  const mine = expectStatus(await owner.api('GET', `/api/bi/sheets/${sheet.id}/data`), 200, 'render');
  t.equal(mine.sheetId, sheet.id);
  const byId = new Map(mine.widgets.map((w: { widgetId: string }) => [w.widgetId, w]));
  t.same(
    mine.widgets.map((w: { widgetId: string }) => w.widgetId),
    [text.id, kpi.id, same.id, fromSaved.id, crm.id],
    'in layout order',
  );
  t.same(byId.get(text.id), { widgetId: text.id, kind: 'text' });
  t.same((byId.get(kpi.id) as { data: { rows: unknown } }).data.rows, [{ count: 1 }]);
  t.same((byId.get(same.id) as { data: unknown }).data, (byId.get(kpi.id) as { data: unknown }).data, 'identical queries, one answer');
  t.same((byId.get(fromSaved.id) as { data: { rows: unknown } }).data.rows, [{ count: 1 }]);
  t.equal((byId.get(crm.id) as { data: { rows: unknown[] } }).data.rows.length, 3);

  // the viewer may read the sheet but not the CRM: that widget alone says why
  const theirs = expectStatus(await viewer.api('GET', `/api/bi/sheets/${sheet.id}/data`), 200, 'viewer render');
  const crmWidget = theirs.widgets.find((w: { widgetId: string }) => w.widgetId === crm.id);
  t.match(crmWidget, { kind: 'chart', problem: { status: 403, code: 'FORBIDDEN', title: String } });
  t.notOk('data' in crmWidget);
  t.same(theirs.widgets.find((w: { widgetId: string }) => w.widgetId === kpi.id).data.rows, [{ count: 1 }]);

  const outsider = await bi.user(['erp:bi:view']);
  expectProblem(t, await outsider.api('GET', `/api/bi/sheets/${sheet.id}/data`), 404, 'NOT_FOUND', 'an application not shared with them');
  expectProblem(t, await owner.api('GET', `/api/bi/sheets/${UNKNOWN_ID}/data`), 404, 'NOT_FOUND', 'no such sheet');
  expectProblem(t, await owner.api('GET', '/api/bi/sheets/not-a-uuid/data'), 400, 'VALIDATION_FAILED', 'a malformed id');
  const stranger = await biApi(ctx, await ctx.tenant()).user(['erp:bi:view', 'erp:crm:view']);
  expectProblem(t, await stranger.api('GET', `/api/bi/sheets/${sheet.id}/data`), 404, 'NOT_FOUND', 'another tenant');
  const noBi = await bi.user(['erp:crm:view']);
  expectProblem(t, await noBi.api('GET', `/api/bi/sheets/${sheet.id}/data`), 403, 'FORBIDDEN', 'no BI code');
});

t.test('one widget at a time still renders them all', async (t) => {
  const owner = await bi.user(['erp:bi:view']);
  const app = await bi.app(owner);
  const sheet = await bi.sheet(owner, app.id);
  for (const [i, agg] of ['count', 'countDistinct'].entries()) {
    await bi.widget(owner, sheet.id, { kind: 'number', title: `W${i}`, query: { table: 'BiSheet', measures: [agg === 'count' ? { agg } : { agg, field: 'appId' }] }, w: 2, h: 1 });
  }
  process.env.BI_RENDER_CONCURRENCY = '1';
  t.teardown(() => void delete process.env.BI_RENDER_CONCURRENCY);
  const res = expectStatus(await owner.api('GET', `/api/bi/sheets/${sheet.id}/data`), 200, 'render');
  t.same(
    res.widgets.map((w: { data: { rows: Record<string, number>[] } }) => Object.values(w.data.rows[0])[0]),
    [1, 1],
  );
});
