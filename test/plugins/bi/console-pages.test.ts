// The BI pages of the console over app.inject: an application's pages (sheets)
// in their order with the editors' controls, a sheet's dashboard (widgets on the
// grid, their data from one call, a widget's problem in its place, static for
// viewers), the analytics builder (a run, the API's field errors beside their
// controls, the CSV link), adding a result to a dashboard (the sheets a user
// may edit, by application), renaming and removing a widget (for editors
// only, with If-Match), the relay the pages' scripts use, nobody seeing
// what the API would not show them (no BI code, not a member, another tenant),
// and the pages' texts in a tenant's own words for the user's language.
import { readdirSync, readFileSync } from 'node:fs';
import { runInNewContext } from 'node:vm';
import t from 'tap';
import { build, PASSWORD, type TestTenant } from '../../helper.ts';
import { fillIn } from '../../../core/console/texts.ts';
import { buildQuery, errorLinks, stateOf } from '../../../plugins/bi/analytics-form.ts';
import { fieldsOf } from '../../../plugins/bi/analytics-fields.ts';
import type { BiTable } from '../../../plugins/bi/semantic-model.ts';
import { ConsoleSession, menuOf } from '../../support/console-session.ts';
import { apiAs } from '../core/core-api.ts';
import { biApi, BI_USER, expectStatus, UNKNOWN_ID } from './bi-api.ts';

const ctx = await build(t);
const tenant = await ctx.tenant();
const other = await ctx.tenant();
const bi = biApi(ctx, tenant);
const admin = { id: '', token: tenant.adminToken, api: apiAs(ctx, tenant.adminToken) };
admin.id = expectStatus(await admin.api('GET', '/api/auth/me'), 200, 'me').id;

// an application with two pages, seeded through the API; the second page is created first, then reordered
const app = await bi.app(admin, { name: 'Sales <board>' });
const pipeline = await bi.sheet(admin, app.id, { name: 'Pipeline' });
const overview = await bi.sheet(admin, app.id, { name: 'Overview', description: 'At a glance' });
expectStatus(await admin.api('PUT', `/api/bi/apps/${app.id}/sheet-order`, { sheetIds: [overview.id, pipeline.id] }), 200, 'order');
const SHEETS = { table: 'BiSheet', measures: [{ agg: 'count', name: 'sheets' }] };
const number = await bi.widget(admin, overview.id, { kind: 'number', title: 'Sheets', w: 3, h: 2, query: SHEETS });
const chart = await bi.widget(admin, overview.id, {
  kind: 'chart',
  chartType: 'bar',
  title: 'Sheets by name </script>',
  w: 6,
  h: 4,
  query: { ...SHEETS, dimensions: ['name'] },
  chart: { x: 'name', y: ['sheets'], note: '</script><b>' },
});
const text = await bi.widget(admin, overview.id, { kind: 'text', title: 'Notes', w: 6, h: 2, text: '# Read me\n\n**Bold** <script>x</script> and [a link](javascript:alert(1))\n\n- one\n- two' });
// a table no BI viewer may read: its widget carries a problem for them
const roles = await bi.widget(admin, overview.id, { kind: 'table', title: 'Roles', w: 6, h: 3, query: { table: 'Role', measures: [{ agg: 'count', name: 'roles' }] } });

const viewer = await bi.user();
await bi.share(admin, app.id, viewer.id, 'viewer');
const editor = await bi.user();
await bi.share(admin, app.id, editor.id, 'editor');
const outsider = await bi.user();
const clerk = await ctx.user(tenant, { codes: ['erp:catalog:view'] });
const emails = new Map<string, string>();
for (const [id, u] of [
  ['viewer', viewer],
  ['editor', editor],
  ['outsider', outsider],
] as const) {
  emails.set(id, expectStatus(await admin.api('GET', `/api/users/${u.id}`), 200, 'user').email);
}
const theirs = await biApi(ctx, other).app({ id: '', token: other.adminToken, api: apiAs(ctx, other.adminToken) }, { name: 'Foreign app' });
await biApi(ctx, other).sheet({ id: '', token: other.adminToken, api: apiAs(ctx, other.adminToken) }, theirs.id, { name: 'Foreign secret sheet' });

const session = async (email: string, at: TestTenant = tenant) => {
  const s = new ConsoleSession(ctx.app);
  const res = await s.login(at.id, email, PASSWORD);
  if (res.statusCode !== 303) throw new Error(`login failed: ${res.statusCode}`);
  return s;
};
// the module's built-in English, as the kernel gives it to helpers that build a page's strings
const ENGLISH: Record<string, string> = JSON.parse(readFileSync(new URL('../../../plugins/bi/texts.en.json', import.meta.url), 'utf8'));
const english = (key: string, values?: Record<string, string | number>) => fillIn(ENGLISH[key] ?? key, values);
const sheetsUrl = `/bi/apps/${app.id}/sheets`;
const dashboardUrl = `/bi/apps/${app.id}/sheets/${overview.id}`;
const widgetHtml = (html: string, id: string) => new RegExp(`<section class="grid-stack-item-content[^"]*"[^>]*data-widget="${id}">([\\s\\S]*?)</section>`).exec(html)?.[1] ?? '';
const scriptData = (html: string, id: string) => JSON.parse(new RegExp(`<script type="application/json" id="${id}">([^<]*)</script>`).exec(html)![1]);
const relay = (s: ConsoleSession, method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, payload?: unknown, headers: Record<string, string> = {}) =>
  ctx.app.inject({
    method,
    url,
    headers: { cookie: s.cookieHeader, 'x-csrf-token': s.csrf, ...(payload === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    ...(payload === undefined ? {} : { payload: JSON.stringify(payload) }),
  });

t.test("the application's detail page links its pages; the pages in their order with the editors' controls", async (t) => {
  const s = await session(tenant.adminEmail);
  const detail = await s.get(`/bi/apps/${app.id}`);
  t.equal(detail.statusCode, 200);
  t.match(detail.body, new RegExp(`<a class="button" href="${sheetsUrl}">Pages</a>`), 'the detail page links the pages');
  const res = await s.get(sheetsUrl);
  t.equal(res.statusCode, 200);
  t.match(res.body, /<h1>Pages of Sales &lt;board&gt;<\/h1>/, 'the name is escaped');
  const links = [...res.body.matchAll(/<td><a href="(\/bi\/apps\/[^"]+)">([^<]+)<\/a><\/td>/g)].map((m) => [m[1], m[2]]);
  t.same(links, [
    [dashboardUrl, 'Overview'],
    [`${sheetsUrl}/${pipeline.id}`, 'Pipeline'],
  ]);
  t.match(res.body, /aria-label="Move Overview up" disabled/, 'the first cannot move up');
  t.match(res.body, /aria-label="Move Pipeline down" disabled/, 'the last cannot move down');
  t.match(res.body, /id="new-sheet-form"/, 'an owner may add a page');
  t.same(
    scriptData(res.body, 'bi-sheets').sheets.map((x: { id: string }) => x.id),
    [overview.id, pipeline.id],
  );
  t.ok(menuOf(res.body).includes('/bi/analytics'), 'Analytics is in the menu');
  t.match((await s.get(`${sheetsUrl}?notice=created`)).body, /<p class="notice" role="status">Page added\.<\/p>/);
});

t.test('a viewer reads the pages and the dashboard, without any control to change them', async (t) => {
  const s = await session(emails.get('viewer')!);
  const pages = await s.get(sheetsUrl);
  t.equal(pages.statusCode, 200);
  t.match(pages.body, />Overview<\/a>/);
  t.notMatch(pages.body, /data-move|new-sheet-form|data-delete/, 'no move, delete or add');
  const dash = await s.get(dashboardUrl);
  t.equal(dash.statusCode, 200);
  t.notMatch(dash.body, /class="bi-tools"/, 'no arrange buttons');
  t.equal(scriptData(dash.body, 'bi-dashboard').editable, false, 'a static grid');
  t.match(widgetHtml(dash.body, roles.id), /class="bi-problem"><strong>Forbidden<\/strong>/, 'a table they may not read: the problem in its widget');
  t.match(widgetHtml(dash.body, number.id), /<span class="bi-number-value">2<\/span>/, 'the other widgets still show');
  const editorDash = await (await session(emails.get('editor')!)).get(dashboardUrl);
  t.equal(scriptData(editorDash.body, 'bi-dashboard').editable, true, 'an editor gets the editable grid');
  t.match(editorDash.body, /aria-label="Move Sheets left"/);
});

t.test("a sheet's dashboard: its widgets on the grid with the data of one call", async (t) => {
  const s = await session(tenant.adminEmail);
  const res = await s.get(dashboardUrl);
  t.equal(res.statusCode, 200);
  t.match(res.body, /<h1>Overview<\/h1>/);
  t.match(res.body, new RegExp(`<a href="${dashboardUrl}" aria-current="page">Overview</a>`), 'the tabs mark this page');
  t.match(res.body, new RegExp(`gs-id="${number.id}" gs-x="0" gs-y="0" gs-w="3" gs-h="2"`), 'places on the grid');
  t.match(widgetHtml(res.body, number.id), /<span class="bi-number-value">2<\/span> <span class="bi-number-label">Count<\/span>/, 'a number');
  const chartHtml = widgetHtml(res.body, chart.id);
  t.match(chartHtml, /<h2 id="w-[^"]+">Sheets by name &lt;\/script&gt;<\/h2>/);
  t.match(chartHtml, /role="img" aria-label="Bar chart of Count by Name: 2 groups; the values follow as a table\."/, 'the chart says what it shows');
  t.match(
    chartHtml,
    /<table class="bi-table visually-hidden"[\s\S]*<th scope="col">Name<\/th><th scope="col" class="numeric">Count<\/th>[\s\S]*<td>Overview<\/td><td class="numeric">1<\/td>/,
    'and its values as a table',
  );
  const notes = widgetHtml(res.body, text.id);
  t.match(notes, /role="heading" aria-level="3">Read me</, 'markdown headings below the widget title');
  t.match(notes, /<strong>Bold<\/strong> &lt;script&gt;x&lt;\/script&gt; and a link/, 'text stays text; an unsafe link is no link');
  t.match(notes, /<ul><li>one<\/li><li>two<\/li><\/ul>/);
  t.match(widgetHtml(res.body, roles.id), /<table class="bi-table"[\s\S]*<th scope="col" class="numeric">Count<\/th>/, 'the admin reads the roles table');
  const data = scriptData(res.body, 'bi-dashboard');
  t.equal(data.sheetId, overview.id);
  t.equal(data.editable, true);
  const c = data.widgets.find((w: { id: string }) => w.id === chart.id);
  t.same([c.chartType, c.chart, c.rows.length], ['bar', { x: 'name', y: ['sheets'], note: '</script><b>' }, 2], 'the chart data for the script, escaped in the page');
  t.match(res.body, /src="\/console\/vendor\/gridstack\/gridstack-all\.js"/);
  for (const file of ['dashboard.js', 'dashboard-edit.js', 'bi-charts.js', 'sheets.js', 'analytics.js', 'analytics-view.js', 'analytics-add.js', 'bi.css']) {
    t.equal((await ctx.app.inject({ method: 'GET', url: `/console/modules/bi/${file}` })).statusCode, 200, file);
  }
});

t.test('the relay for the scripts: layout, order, add and delete a page, each with the CSRF token', async (t) => {
  const s = await session(emails.get('editor')!);
  await s.get(dashboardUrl);
  const layout = Object.fromEntries(
    expectStatus(await admin.api('GET', `/api/bi/sheets/${overview.id}/widgets?size=500`), 200, 'widgets').items.map((w: { id: string; x: number; y: number; w: number; h: number }) => [
      w.id,
      { x: w.x, y: w.y, w: w.w, h: w.h },
    ]),
  );
  layout[number.id] = { ...layout[number.id], x: 9 };
  t.equal((await relay(s, 'PUT', `/console/api/bi/sheets/${overview.id}/layout`, { widgets: layout }, { 'x-csrf-token': 'forged' })).statusCode, 403, 'no token, no change');
  const saved = await relay(s, 'PUT', `/console/api/bi/sheets/${overview.id}/layout`, { widgets: layout });
  t.equal(saved.statusCode, 200, 'an editor saves the layout');
  t.match((await s.get(dashboardUrl)).body, new RegExp(`gs-id="${number.id}" gs-x="9"`), 'the dashboard shows the new place');
  const clash = { ...layout, [chart.id]: layout[number.id] };
  t.equal((await relay(s, 'PUT', `/console/api/bi/sheets/${overview.id}/layout`, { widgets: clash })).statusCode, 422, 'two widgets on one place: refused');

  const v = await session(emails.get('viewer')!);
  await v.get(dashboardUrl);
  const moved = { ...layout, [number.id]: { ...layout[number.id], x: 0 } };
  t.equal((await relay(v, 'PUT', `/console/api/bi/sheets/${overview.id}/layout`, { widgets: moved })).statusCode, 403, 'a viewer may not');

  const order = await relay(s, 'PUT', `/console/api/bi/apps/${app.id}/sheet-order`, { sheetIds: [pipeline.id, overview.id] });
  t.equal(order.statusCode, 200);
  t.match((await s.get(sheetsUrl)).body, /Pipeline<\/a>[\s\S]*Overview<\/a>/, 'the pages in the new order');
  const added = await relay(s, 'POST', `/console/api/bi/apps/${app.id}/sheets`, { name: 'Added by the script', position: 2 });
  t.equal(added.statusCode, 201);
  const gone = await relay(s, 'DELETE', `/console/api/bi/apps/${app.id}/sheets/${added.json().id}`, undefined, { 'if-match': `"${added.json().version}"` });
  t.equal(gone.statusCode, 204);
  t.notMatch((await s.get(sheetsUrl)).body, /Added by the script/);
});

t.test("a sheet's dashboard: Rename and Remove in each widget's header for editors only, the versions for If-Match", async (t) => {
  const widgets = expectStatus(await admin.api('GET', `/api/bi/sheets/${overview.id}/widgets?size=500`), 200, 'widgets').items as { id: string; version: number }[];
  const dash = await (await session(emails.get('editor')!)).get(dashboardUrl);
  t.equal(dash.statusCode, 200);
  const head = widgetHtml(dash.body, number.id);
  t.match(head, /<button type="button" data-rename-open aria-label="Rename Sheets"[^>]*>Rename<\/button>/, 'Rename, named after the widget');
  t.match(head, /<button type="button" data-remove aria-label="Remove Sheets"[^>]*>Remove<\/button>/, 'Remove, named after the widget');
  t.match(
    head,
    new RegExp(`<label for="rename-${number.id}" class="visually-hidden"[^>]*>New title of Sheets</label>\\s*<input id="rename-${number.id}" name="title" value="Sheets"`),
    'the rename form, its input labelled',
  );
  t.match(head, /<form class="bi-rename" data-rename hidden/, 'closed until Rename is pressed');
  t.match(widgetHtml(dash.body, chart.id), /aria-label="Rename Sheets by name &lt;\/script&gt;"/, 'a title escaped in its label');
  t.match(dash.body, /<dialog id="remove-widget-dialog"[\s\S]*<h2 id="remove-widget-title">Remove this widget\?<\/h2>/, 'the confirmation is a dialog of the page');
  t.match(dash.body, /src="\/console\/modules\/bi\/dashboard-edit\.js"/);
  t.same(
    scriptData(dash.body, 'bi-dashboard')
      .widgets.map((w: { id: string; version: number }) => [w.id, w.version])
      .sort(),
    widgets.map((w) => [w.id, w.version]).sort(),
    "each widget's version for the script's If-Match",
  );

  const viewed = await (await session(emails.get('viewer')!)).get(dashboardUrl);
  t.equal(viewed.statusCode, 200);
  t.notMatch(viewed.body, /data-rename|data-remove|remove-widget-dialog|dashboard-edit\.js/, 'a viewer gets neither Rename nor Remove');
});

t.test('the relay for Rename and Remove: If-Match of the current version, a stale one refused with 412', async (t) => {
  const s = await session(emails.get('editor')!);
  await s.get(dashboardUrl);
  const w = await bi.widget(admin, pipeline.id, { kind: 'table', title: 'To rename', query: SHEETS });
  const url = `/console/api/bi/sheets/${pipeline.id}/widgets/${w.id}`;
  const renamed = await relay(s, 'PATCH', url, { title: 'Renamed' }, { 'if-match': `"${w.version}"` });
  t.equal(renamed.statusCode, 200, 'renamed at its version');
  t.equal(renamed.json().title, 'Renamed');
  t.equal((await relay(s, 'PATCH', url, { title: 'Again' }, { 'if-match': `"${w.version}"` })).statusCode, 412, 'a stale version: 412');
  t.equal((await relay(s, 'DELETE', url, undefined, { 'if-match': `"${w.version}"` })).statusCode, 412, 'nor removed at a stale version');
  const v = await session(emails.get('viewer')!);
  await v.get(dashboardUrl);
  t.equal((await relay(v, 'DELETE', url, undefined, { 'if-match': `"${renamed.json().version}"` })).statusCode, 403, 'a viewer may not remove it');
  t.equal((await relay(s, 'DELETE', url, undefined, { 'if-match': `"${renamed.json().version}"` })).statusCode, 204, 'removed at its current version');
  t.equal((await admin.api('GET', `/api/bi/sheets/${pipeline.id}/widgets/${w.id}`)).statusCode, 404);
});

t.test('analytics: the builder, a run, its CSV, and the API errors beside the controls', async (t) => {
  const s = await session(tenant.adminEmail);
  const start = await s.get('/bi/analytics');
  t.equal(start.statusCode, 200);
  t.match(start.body, /<option value="BiSheet">Sheet<\/option>/, 'the tables of the semantic model');
  t.notMatch(start.body, /id="bi-builder"/, 'no builder before a table is chosen');
  const builder = await s.get('/bi/analytics?table=BiSheet');
  t.match(builder.body, /<option value="count" selected>Count of rows<\/option>/, 'a table starts with a count of its rows');
  t.match(builder.body, /<option value="appId\.name">Application › Name<\/option>/, 'groupings one reference away');
  t.match(builder.body, /<option value="sum:position">Sum of Position<\/option>/, 'sums of numbers');
  t.notMatch(builder.body, /id="bi-result-meta"[^>]*>\d/, 'nothing ran');

  const run = await s.get('/bi/analytics?table=BiSheet&m=count&m=max%3Aposition&d=appId.name&sort=count&dir=desc&chart=pie&run=1');
  t.equal(run.statusCode, 200);
  t.match(run.body, /<p id="bi-result-meta" class="bi-meta" role="status">1 row · \d+ ms/);
  t.match(run.body, /<th scope="col">Application › Name <span class="bi-col-meta" aria-hidden="true">appId\.name · string<\/span><\/th>/, "the answer's column metadata");
  t.match(run.body, /<td>Sales &lt;board&gt;<\/td><td class="numeric">2<\/td><td class="numeric">1<\/td>/);
  t.match(run.body, /<code id="bi-sql">select /, 'the SQL that ran');
  t.match(run.body, /aria-label="Pie chart of Count, [^"]+ by Application › Name: 1 group/);
  t.notMatch(run.body, /Foreign/, "never another tenant's rows");
  const csvHref = /id="bi-csv" href="([^"]+)"/.exec(run.body)![1].replaceAll('&#x3D;', '=');
  const csv = await s.get(csvHref);
  t.equal(csv.statusCode, 200, 'the CSV through the relay');
  t.match(csv.headers['content-type'], /text\/csv/);
  t.equal(csv.body.split('\r\n')[0], 'appId.name,count,max_position');

  const bad = await s.get('/bi/analytics?table=BiSheet&m=sum%3Aname&run=1');
  t.equal(bad.statusCode, 200, 'a refused query is the builder again');
  t.match(bad.body, /<li><a href="#bi-m-0">Measure 1: [^<]+<\/a><\/li>/, 'the error links its control');
  t.match(bad.body, /id="bi-m-0" name="m" aria-invalid="true"/);
  t.match((await s.get('/bi/analytics?table=NoSuchTable')).body, /There is no such table/);

  const posted = await relay(s, 'POST', '/console/api/bi/analytics', { table: 'BiSheet', measures: [{ agg: 'count' }] });
  t.equal(posted.statusCode, 200, "the script's run");
  t.equal(posted.json().rows[0].count, 2);
  const invalid = await relay(s, 'POST', '/console/api/bi/analytics', { table: 'BiSheet', measures: [{ agg: 'sum', field: 'name' }] });
  t.equal(invalid.statusCode, 400);
  t.equal(invalid.json().errors[0].path, '/measures/0/field', 'field errors the script puts beside the control');
});

t.test('analytics: Add to a dashboard offers the sheets the user may edit, by application; a viewer reads why not', async (t) => {
  // beside the application they edit: one they only view, one not shared with them, and two of their own (one without a page)
  const viewedApp = await bi.app(admin, { name: 'Viewed only' });
  await bi.sheet(admin, viewedApp.id, { name: 'Not for the editor' });
  await bi.share(admin, viewedApp.id, editor.id, 'viewer');
  const unshared = await bi.app(admin, { name: 'Not shared' });
  await bi.sheet(admin, unshared.id, { name: 'Unshared page' });
  const own = await bi.app(editor, { name: 'A board of my own' });
  const ownSheet = await bi.sheet(editor, own.id, { name: 'My page' });
  await bi.app(editor, { name: 'Empty board' });
  const salesSheets = expectStatus(await editor.api('GET', `/api/bi/apps/${app.id}/sheets?sort=position,name&size=500`), 200, 'sheets').items as { id: string; name: string }[];

  const s = await session(emails.get('editor')!);
  const run = await s.get('/bi/analytics?table=BiSheet&m=count&d=name&chart=pie&run=1');
  t.equal(run.statusCode, 200);
  const select = /<select id="bi-add-sheet"[^>]*>([\s\S]*?)<\/select>/.exec(run.body)?.[1] ?? '';
  const groups = [...select.matchAll(/<optgroup label="([^"]*)">([\s\S]*?)<\/optgroup>/g)].map((g) => [
    g[1],
    [...g[2].matchAll(/<option value="([^"]+)" data-url="([^"]+)">([^<]*)<\/option>/g)].map((o) => [o[1], o[2], o[3]]),
  ]);
  t.same(
    groups,
    [
      ['A board of my own', [[ownSheet.id, `/bi/apps/${own.id}/sheets/${ownSheet.id}`, 'My page']]],
      ['Sales &lt;board&gt;', salesSheets.map((x) => [x.id, `/bi/apps/${app.id}/sheets/${x.id}`, x.name])],
    ],
    'the sheets of the applications they own or edit, by application; none they only view or cannot read, no application without a page',
  );
  t.match(run.body, /<label for="bi-add-sheet">Page<\/label>/, 'every input has its label');
  t.match(run.body, /<label for="bi-add-title">Title<\/label>\s*<input id="bi-add-title" name="title" value="Sheet: Count of rows by Name" maxlength="200"/, "the title: the query's summary");
  t.match(
    run.body,
    /<select id="bi-add-kind"[^>]*><option value="chart" selected>Chart<\/option><option value="number">Number<\/option><option value="table">Table<\/option><\/select>/,
    'a chart, as the builder draws one',
  );
  const chartTypes = [...(/<select id="bi-add-chart"[^>]*>([\s\S]*?)<\/select>/.exec(run.body)?.[1] ?? '').matchAll(/<option value="(\w+)"/g)].map((m) => m[1]);
  t.same(chartTypes, ['bar', 'line', 'area', 'pie', 'scatter', 'stackedBar', 'funnel', 'heatmap'], 'the chart types BI knows');
  t.match(run.body, /<option value="pie" selected>Pie<\/option>/, "the builder's chart type");
  t.match(run.body, /src="\/console\/modules\/bi\/analytics-add\.js"/);
  t.notMatch(run.body, /id="bi-add-none"/);
  t.same(scriptData(run.body, 'bi-analytics').query, { table: 'BiSheet', measures: [{ agg: 'count' }], dimensions: ['name'] }, 'the query that answered, for the script to post');
  const single = await s.get('/bi/analytics?table=BiSheet&m=count&chart=&run=1');
  t.match(single.body, /<option value="number" selected>Number<\/option>/, 'one group and no chart: a number');
  t.match(single.body, /id="bi-add-chart-field" hidden/, 'no chart type for a number');
  t.match(single.body, /value="Sheet: Count of rows"/);
  const before = await s.get('/bi/analytics?table=BiSheet');
  t.match(before.body, /<section id="bi-result"[^>]*hidden>[\s\S]*id="bi-add-form"/, 'before a run the form waits with the result for the script');
  t.equal(scriptData(before.body, 'bi-analytics').query, null);

  // what the script posts: the API places the widget below the others; a sheet the user only views refuses it
  await s.get('/bi/analytics?table=BiSheet&m=count&run=1');
  const body = { kind: 'chart', title: 'Sheet: Count of rows by Name', chartType: 'pie', query: { table: 'BiSheet', measures: [{ agg: 'count' }], dimensions: ['name'] }, w: 6, h: 4 };
  const first = await relay(s, 'POST', `/console/api/bi/sheets/${ownSheet.id}/widgets`, body);
  t.equal(first.statusCode, 201, 'added through the relay');
  const second = await relay(s, 'POST', `/console/api/bi/sheets/${ownSheet.id}/widgets`, { ...body, kind: 'number', chartType: undefined, w: 3, h: 2 });
  t.same([first.json().y, second.json().x, second.json().y], [0, 0, 4], 'the next one below it');
  const notChart = await relay(s, 'POST', `/console/api/bi/sheets/${ownSheet.id}/widgets`, { ...body, chartType: undefined });
  t.equal(notChart.statusCode, 400);
  t.equal(notChart.json().errors[0].path, '/chartType', 'a field error the script puts beside its input');
  const viewedSheet = expectStatus(await admin.api('GET', `/api/bi/apps/${viewedApp.id}/sheets`), 200, 'sheets').items[0].id as string;
  t.equal((await relay(s, 'POST', `/console/api/bi/sheets/${viewedSheet}/widgets`, body)).statusCode, 403, 'a sheet they only view: refused');

  const viewerRun = await (await session(emails.get('viewer')!)).get('/bi/analytics?table=BiSheet&m=count&d=name&run=1');
  t.equal(viewerRun.statusCode, 200);
  t.notMatch(viewerRun.body, /id="bi-add-form"|analytics-add\.js"/, 'a viewer of every application they read gets no form');
  t.match(viewerRun.body, /<p id="bi-add-none" class="hint">You cannot add this result to a dashboard: [^<]+<\/p>/, 'and a sentence says why');
});

t.test('nobody sees what the API would not show them', async (t) => {
  const c = await session(clerk.email);
  const page = await c.get('/catalog/products');
  t.notOk(menuOf(page.body).includes('/bi/analytics'), 'no BI code: no Analytics in the menu');
  for (const url of [sheetsUrl, dashboardUrl, '/bi/analytics', '/bi/analytics?table=BiSheet&m=count&run=1']) {
    const res = await c.get(url);
    t.ok(res.statusCode >= 400 && res.statusCode < 500, `${url}: ${res.statusCode}`);
    t.notMatch(res.body, /Overview|Sales &lt;board&gt;|<option value="BiSheet"/, `${url}: none of the data`);
  }
  const o = await session(emails.get('outsider')!);
  for (const url of [sheetsUrl, dashboardUrl]) {
    const res = await o.get(url);
    t.equal(res.statusCode, 404, `not a member: ${url}`);
    t.notMatch(res.body, /Overview|Sales &lt;board&gt;/);
  }
  const analytics = await o.get('/bi/analytics?table=BiSheet&m=count&d=name&run=1');
  t.match(analytics.body, /No row matched\./, "a member of no application counts no sheet of others'");
  const foreign = await session(other.adminEmail, other);
  for (const url of [sheetsUrl, dashboardUrl]) t.equal((await foreign.get(url)).statusCode, 404, `another tenant: ${url}`);
  const theirRun = await foreign.get('/bi/analytics?table=BiSheet&m=count&d=name&run=1');
  t.match(theirRun.body, /Foreign secret sheet/);
  t.notMatch(theirRun.body, /Overview|Pipeline/, "never this tenant's rows");
});

t.test('bad path parameters are a 4xx page, never a 5xx', async (t) => {
  const s = await session(tenant.adminEmail);
  const cases: [string, number][] = [
    ['/bi/apps/not-a-uuid/sheets', 400],
    [`/bi/apps/${UNKNOWN_ID}/sheets`, 404],
    [`/bi/apps/${app.id}/sheets/not-a-uuid`, 400],
    [`/bi/apps/${app.id}/sheets/${UNKNOWN_ID}`, 404],
    [`/bi/apps/${UNKNOWN_ID}/sheets/${overview.id}`, 404],
    [`/bi/apps/${theirs.id}/sheets`, 404],
  ];
  const second = await bi.app(admin, { name: 'Second' });
  cases.push([`/bi/apps/${second.id}/sheets/${overview.id}`, 404]);
  for (const [url, status] of cases) {
    const res = await s.get(url);
    t.equal(res.statusCode, status, url);
    t.match(res.headers['content-type'], /text\/html/);
  }
});

t.test('a BI user without membership of any application still gets their own pages', async (t) => {
  const u = await bi.user(BI_USER);
  const own = await bi.app(u, { name: 'Mine' });
  const email = expectStatus(await admin.api('GET', `/api/users/${u.id}`), 200, 'user').email;
  const res = await (await session(email)).get(`/bi/apps/${own.id}/sheets`);
  t.equal(res.statusCode, 200);
  t.match(res.body, /This application has no page yet\./);
  t.match(res.body, /id="new-sheet-form"/, 'the owner may add one');
});

t.test('every chart type is an ECharts option of its kind, from the columns or the chart settings', async (t) => {
  const window: { biCharts?: { option(type: string, columns: unknown[], rows: unknown[], chart?: object): any } } = {};
  runInNewContext(readFileSync(new URL('../../../plugins/bi/assets/bi-charts.js', import.meta.url), 'utf8'), { window });
  const columns = [
    { name: 'stage', type: 'enum', label: 'Stage', role: 'dimension' },
    { name: 'owner', type: 'string', label: 'Owner', role: 'dimension' },
    { name: 'deals', type: 'integer', label: 'Deals', role: 'measure' },
    { name: 'amount', type: 'decimal', label: 'Amount', role: 'measure' },
  ];
  const rows = [
    { stage: 'won', owner: 'Ann', deals: 2, amount: '1200.50' },
    { stage: 'lost', owner: 'Ann', deals: 1, amount: '300.00' },
    { stage: 'won', owner: null, deals: 1, amount: '99.00' },
  ];
  const option = (type: string, chart = {}) => window.biCharts!.option(type, columns, rows, chart);
  const stacked = option('stackedBar');
  t.same(
    stacked.series.map((x: { name: string; type: string; stack: string }) => [x.name, x.type, x.stack]),
    [
      ['Ann', 'bar', 'total'],
      ['(none)', 'bar', 'total'],
    ],
    'a second grouping is the series; a missing name reads "(none)"',
  );
  t.same(stacked.xAxis.data, ['won', 'lost']);
  t.same(stacked.series[0].data, [2, 1], 'the first measure by default');
  t.same(option('stackedBar', { y: ['amount'] }).series[0].data, [1200.5, 300], 'decimals as numbers');
  t.same(option('line', { x: 'stage', y: ['deals'], series: 'owner' }).series[0].data, [2, 1], 'the settings name the columns');
  t.ok(
    option('area').series.every((x: { type: string; areaStyle?: object }) => x.type === 'line' && x.areaStyle),
    'an area is a filled line',
  );
  t.same(option('pie', { name: 'stage', value: 'deals' }).series[0].data[0], { name: 'won', value: 2 });
  t.equal(option('funnel').series[0].type, 'funnel');
  t.same(option('scatter').series[0].data[0], [2, 1200.5], 'a scatter of two measures');
  const heat = option('heatmap');
  t.same([heat.series[0].type, heat.xAxis.data, heat.yAxis.data], ['heatmap', ['won', 'lost'], ['Ann', '(none)']]);
  t.ok(heat.visualMap, 'a heat map has its colour scale');
  t.same(option('bar', { colors: ['#123456'] }).color, ['#123456']);
  t.equal(option('no such type').series[0].type, 'bar', 'an unknown type draws bars');
});

t.test("the builder's form is the query, and the API's error paths point at its controls", async (t) => {
  const table: BiTable = {
    name: 'Deal',
    label: 'Deal',
    module: 'x',
    fields: [
      { name: 'stage', label: 'Stage', type: 'enum', role: 'dimension', values: ['won', 'lost'] },
      { name: 'seats', label: 'Seats', type: 'integer', role: 'measure' },
      { name: 'closed', label: 'Closed', type: 'date', role: 'time' },
    ],
  };
  const fields = fieldsOf(table, [table], english);
  const state = stateOf({
    table: 'Deal',
    m: ['count', 'sum:seats', ''],
    d: ['stage', ''],
    t: 'closed',
    g: 'month',
    from: '2026-01-01',
    to: '2026-03-31',
    ff: ['seats', '', 'stage'],
    fo: ['gte', 'equals', 'in'],
    fv: ['3', '', 'won, lost'],
    sort: 'sum_seats',
    dir: 'desc',
    limit: '10',
    run: '1',
  });
  const { query, controls } = buildQuery(state, fields, english);
  t.same(query, {
    table: 'Deal',
    measures: [{ agg: 'count' }, { agg: 'sum', field: 'seats' }],
    dimensions: ['stage'],
    timeDimensions: [{ field: 'closed', granularity: 'month', dateRange: ['2026-01-01', '2026-03-31'] }],
    filters: [
      { field: 'seats', op: 'gte', value: 3 },
      { field: 'stage', op: 'in', values: ['won', 'lost'] },
    ],
    order: [{ by: 'sum_seats', dir: 'desc' }],
    limit: 10,
  });
  t.same(
    errorLinks(
      [
        { path: '/filters/1/values/0', message: 'is no value' },
        { path: '/measures/1/field', message: 'cannot be summed' },
        { path: '/timeDimensions/0/dateRange', message: 'starts after it ends' },
        { path: '/elsewhere', message: 'odd' },
      ],
      controls,
      english,
    ),
    [
      { id: 'bi-fv-1', text: 'Filter 2 values: is no value' },
      { id: 'bi-m-1', text: 'Measure 2: cannot be summed' },
      { id: 'bi-to', text: 'Date range: starts after it ends' },
      { id: null, text: '/elsewhere: odd' },
    ],
  );
  t.same(stateOf({ table: 'Deal' }).measures, ['count'], 'a table alone starts with a count');
  t.same(stateOf({ table: 'Deal', run: '1' }).measures, [], 'a run keeps what was chosen');
});

t.test("a tenant's German texts on the BI pages, English where it has none, and a page title by its own key", async (t) => {
  const german: Record<string, string> = {
    'sheets.pagesOf': 'Seiten von {app}',
    'sheets.added': 'Seite hinzugefügt.',
    'sheetsScript.nameRequired': 'Gib der Seite einen Namen.',
    'chart.type.bar': 'Balken',
    'page.bi.analytics': 'Auswertungen',
    'control.table': 'Tabelle',
    'measure.countOfRows': 'Anzahl der Zeilen',
  };
  for (const [key, text] of Object.entries(german)) expectStatus(await admin.api('POST', '/api/translations', { language: 'de', namespace: 'bi', key, text }), 201, key);
  const s = await session(tenant.adminEmail);
  await s.get(sheetsUrl);
  t.equal((await s.post('/console/language', { value: 'de', back: sheetsUrl })).statusCode, 303, 'German chosen in the switcher');

  const pages = await s.get(`${sheetsUrl}?notice=created`);
  t.match(pages.body, /<h1>Seiten von Sales &lt;board&gt;<\/h1>/, "the view's text, its placeholder filled and escaped");
  t.match(pages.body, /<p class="notice" role="status">Seite hinzugefügt\.<\/p>/, 'a text load() gives');
  t.match(pages.body, /<caption>Each page is a dashboard of widgets, in this order in the application\.<\/caption>/, 'English for a key without a German text');
  const scriptTexts = scriptData(pages.body, 'bi-texts');
  t.equal(scriptTexts['sheetsScript.nameRequired'], 'Gib der Seite einen Namen.', "the script's texts in German");
  t.equal(scriptTexts['sheetsScript.movedUp'], 'Moved {name} up to position {position}.', 'with their placeholders left for the script');

  const dash = await s.get(dashboardUrl);
  t.match(widgetHtml(dash.body, chart.id), /role="img" aria-label="Balken chart of Count by Name: \d+ groups; the values follow as a table\."/, "a chart's summary load() builds");

  const analytics = await s.get('/bi/analytics?table=BiSheet');
  t.match(analytics.body, /<title>Auswertungen · Plinth<\/title>/, "the page's title by its key page.bi.analytics");
  t.match(analytics.body, /<h1>Auswertungen<\/h1>/, 'and its heading');
  t.match(analytics.body, /<label for="bi-table">Tabelle<\/label>/);
  t.match(analytics.body, /<option value="count" selected>Anzahl der Zeilen<\/option>/, 'a measure load() names');

  const inEnglish = await (await session(tenant.adminEmail)).get(`${sheetsUrl}?notice=created`);
  t.match(inEnglish.body, /<h1>Pages of Sales &lt;board&gt;<\/h1>/, 'a user without German reads English');
  t.match(inEnglish.body, /<p class="notice" role="status">Page added\.<\/p>/);
});

t.test("every key the BI views, page code and scripts name is a text of the module, and each page sends its scripts' texts", async (t) => {
  const dir = new URL('../../../plugins/bi/', import.meta.url);
  const read = (file: string) => readFileSync(new URL(file, dir), 'utf8');
  // menu. and page. keys are the kernel's, from the manifest's menu and the pages' titles
  const catalog: Record<string, string> = expectStatus(await admin.api('GET', '/api/translations/catalog?language=en&namespaces=bi'), 200, 'catalog').texts.bi;
  const groups = new Set(Object.keys(ENGLISH).map((key) => key.split('.')[0]));
  /** keys in quotes ('chart.type.bar', text('sheets.added')): a string of a texts group with a dot */
  const keysIn = (source: string) => [...source.matchAll(/['"`]([A-Za-z]+(?:\.[A-Za-z0-9:]+)+)['"`]/g)].map((m) => m[1]).filter((key) => groups.has(key.split('.')[0]));
  const unknown = (keys: string[]) => keys.filter((key) => !(key in ENGLISH));
  const used = new Set<string>();

  for (const view of readdirSync(new URL('views/', dir))) {
    const keys = [...read(`views/${view}`).matchAll(/\{\{t "([^"]+)"/g)].map((m) => m[1]);
    t.ok(keys.length > 0, `${view} has texts`);
    t.same(unknown(keys.filter((key) => !/^(menu|page)\./.test(key))), [], `${view}: its keys are in texts.en.json`);
    t.same(
      keys.filter((key) => /^(menu|page)\./.test(key) && !(key in catalog)),
      [],
      `${view}: its menu and page keys are the kernel's`,
    );
    for (const key of keys) used.add(key);
  }

  for (const file of [
    'sheets-page.ts',
    'dashboard-page.ts',
    'data-page.ts',
    'analytics-page.ts',
    'analytics-app.ts',
    'analytics-form.ts',
    'analytics-fields.ts',
    'page-support.ts',
    'widget-view.ts',
  ]) {
    const source = read(file);
    const called = [...source.matchAll(/\btext\(\s*'([^']+)'/g)].map((m) => m[1]);
    t.same(unknown([...called, ...keysIn(source)]), [], `${file}: its keys are in texts.en.json`);
    for (const key of keysIn(source)) used.add(key);
  }

  // each script's English fallback (for a page without its bi-texts block) says what texts.en.json says
  const scripts = readdirSync(new URL('assets/', dir)).filter((f) => f.endsWith('.js'));
  const fallback: Record<string, string> = {};
  for (const file of scripts) {
    const source = read(`assets/${file}`);
    const block = /const ENGLISH = (\{[\s\S]*?\});$/m.exec(source)?.[1];
    if (block) Object.assign(fallback, runInNewContext(`(${block})`));
    t.same(unknown(keysIn(source)), [], `${file}: its keys are in texts.en.json`);
    for (const key of keysIn(source)) used.add(key);
  }
  t.same(
    Object.entries(fallback).filter(([key, text]) => ENGLISH[key] !== text),
    [],
    "the scripts' English is texts.en.json's",
  );
  t.same(
    scripts.flatMap((file) => keysIn(read(`assets/${file}`)).filter((key) => !(key in fallback))),
    [],
    'every key a script names has its English fallback',
  );
  t.same(
    Object.keys(ENGLISH).filter((key) => !used.has(key)),
    [],
    'no text of texts.en.json is left unused',
  );

  const s = await session(tenant.adminEmail);
  for (const url of [sheetsUrl, dashboardUrl, `/bi/apps/${app.id}/data`, '/bi/analytics?table=BiSheet', `/bi/analytics?app=${app.id}&table=BiSheet`]) {
    const html = (await s.get(url)).body;
    const sent = scriptData(html, 'bi-texts');
    const loaded = [...html.matchAll(/src="\/console\/modules\/bi\/([\w-]+\.js)"/g)].map((m) => m[1]);
    t.ok(loaded.length > 0, `${url} loads scripts`);
    t.same(
      loaded.flatMap((file) => keysIn(read(`assets/${file}`)).filter((key) => !(key in sent))),
      [],
      `${url}: the texts of ${loaded.join(', ')} are in its bi-texts block`,
    );
  }
});
