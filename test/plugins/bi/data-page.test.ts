// An application's data page (/bi/apps/:id/data) and Analytics with an
// application over app.inject: the data sources with their test's outcome and
// tables (each opening Analytics on it), the saved queries (each opening
// Analytics with it), the editors' controls and nobody else's, the password
// never on the page; Analytics choosing an application, offering its sources'
// tables, running a query on one with `app`, offering to save it (without
// `app`) to those who may, and starting from a saved query.
import t from 'tap';
import { PASSWORD } from '../../helper.ts';
import { ConsoleSession } from '../../support/console-session.ts';
import { apiAs } from '../core/core-api.ts';
import { stateOfQuery } from '../../../plugins/bi/analytics-form.ts';
import { biApi, expectStatus } from './bi-api.ts';
import { addSource, buildWithSources, externalDatabase, ORDERS, skipWithout, sourceBody } from './external-fixture.ts';

const fixture = await externalDatabase(t);
const skip = skipWithout(fixture);
const ctx = await buildWithSources(t, true);
const tenant = await ctx.tenant();
const bi = biApi(ctx, tenant);
const admin = { id: '', token: tenant.adminToken, api: apiAs(ctx, tenant.adminToken) };
const SECRET = 'Tr0ub4dor&3-not-on-the-page';

const session = async (email: string) => {
  const s = new ConsoleSession(ctx.app);
  const res = await s.login(tenant.id, email, PASSWORD);
  if (res.statusCode !== 303) throw new Error(`login failed: ${res.statusCode}`);
  return s;
};
const emailOf = async (id: string) => expectStatus(await admin.api('GET', `/api/users/${id}`), 200, 'user').email as string;
const scriptData = (html: string, id: string) => JSON.parse(new RegExp(`<script type="application/json" id="${id}">([^<]*)</script>`).exec(html)![1]);
const rowOf = (html: string, attr: string, id: string) => new RegExp(`<tr ${attr}="${id}">([\\s\\S]*?)</tr>`).exec(html)?.[1] ?? '';
/** The links of a page's HTML, their addresses as the browser reads them. */
const hrefs = (html: string) => [...html.matchAll(/href="([^"]*)"/g)].map((m) => decodeURIComponent(m[1].replace(/&#x3D;/g, '=').replace(/&amp;/g, '&')));

t.test('the data page: sources with their tables, saved queries, and the controls of those who may change them', { skip }, async (t) => {
  const app = await bi.app(admin, { name: 'Shop <data>' });
  const source = await addSource(admin, app.id, sourceBody(fixture!, { password: SECRET }));
  const saved = expectStatus(
    await admin.api('POST', `/api/bi/apps/${app.id}/queries`, {
      name: 'Orders by region',
      description: 'for the board',
      query: { table: 'warehouse.orders', measures: [{ agg: 'count' }], dimensions: ['region'] },
    }),
    201,
    'save a query',
  );
  const viewer = await bi.user();
  await bi.share(admin, app.id, viewer.id, 'viewer');
  const outsider = await bi.user();
  const url = `/bi/apps/${app.id}/data`;

  const s = await session(tenant.adminEmail);
  const detail = await s.get(`/bi/apps/${app.id}`);
  t.match(detail.body, new RegExp(`<a class="button" href="${url}">Data</a>`), "the application's detail page links its data");
  const sheets = await s.get(`/bi/apps/${app.id}/sheets`);
  t.match(sheets.body, new RegExp(`<a href="${url}">Data</a>`), 'so does its pages page');

  const res = await s.get(url);
  t.equal(res.statusCode, 200);
  t.match(res.body, /<h1>Data of Shop &lt;data&gt;<\/h1>/, 'the name escaped');
  t.match(res.body, new RegExp(`<a href="/bi/apps/${app.id}/sheets">Pages</a>`), 'its pages linked back');
  t.notMatch(res.body, SECRET, 'no password on the page');
  const row = rowOf(res.body, 'data-source', source.id);
  t.match(row, /<th scope="row">warehouse<\/th>/);
  t.match(row, /<td>sales<\/td>/, 'the schema');
  t.match(row, /<td>OK<\/td>/, 'the status');
  t.match(row, new RegExp(`<time datetime="${source.testedAt}">`), 'when it was tested');
  t.match(row, /<summary>4 tables<\/summary>/, 'its tables, collapsed');
  t.match(row, /">Orders<\/a> <span class="bi-meta">warehouse.orders · 8 columns<\/span>/, 'each table');
  t.ok(hrefs(row).includes(`/bi/analytics?app=${app.id}&table=warehouse.orders`), 'opening Analytics on it');
  t.match(row, /aria-label="Refresh warehouse"/);
  t.match(row, /aria-label="Change warehouse"/);
  t.match(row, /aria-label="Delete warehouse"/);
  t.match(res.body, /id="source-form"/, 'an owner may add a source');
  t.match(res.body, /<input id="source-password" name="password" type="password"[^>]*autocomplete="new-password"/, 'a password input, empty');
  const query = rowOf(res.body, 'data-query', saved.id);
  t.match(query, /<th scope="row">Orders by region<\/th>\s*<td>for the board<\/td>/);
  t.match(query, /warehouse › Orders|Orders <span class="bi-meta">warehouse\.orders<\/span>/, 'the table it reads');
  t.match(query, /" aria-label="Open in Analytics: Orders by region">Open in Analytics<\/a>/);
  t.ok(hrefs(query).includes(`/bi/analytics?app=${app.id}&saved=${saved.id}`), 'opening Analytics with the query');
  t.ok(hrefs(query).includes(`/bi/analytics?app=${app.id}&table=query:${saved.id}`), 'its result queried as a table of the application');
  const data = scriptData(res.body, 'bi-data');
  t.same(
    data.sources,
    [{ id: source.id, name: 'warehouse', url: fixture!.url, schemaName: 'sales', sslMode: 'disable', version: source.version }],
    "the script's sources, with their versions for If-Match",
  );
  t.same(data.queries, [{ id: saved.id, name: 'Orders by region', version: saved.version }]);
  t.match(res.body, /src="\/console\/modules\/bi\/data\.js"/);

  t.match((await s.get(`${url}?notice=added&source=${source.id}`)).body, /<p class="notice" role="status">Data source warehouse added: /, 'a notice naming the source');
  t.match((await s.get(`${url}?notice=queryDeleted`)).body, /<p class="notice" role="status">Saved query deleted\.<\/p>/);
  t.notMatch((await s.get(`${url}?notice=%3Cb%3E`)).body, /class="notice"/, 'no notice the page does not know');

  const asViewer = await (await session(await emailOf(viewer.id))).get(url);
  t.equal(asViewer.statusCode, 200, 'a viewer reads the data page');
  t.match(asViewer.body, /<summary>4 tables<\/summary>/);
  t.match(asViewer.body, /Open in Analytics/);
  t.notMatch(asViewer.body, /source-form|data-refresh|data-change|data-delete|data\.js/, 'without any control to change it');

  t.equal((await (await session(await emailOf(outsider.id))).get(url)).statusCode, 404, 'not a member: 404');
  t.equal((await s.get('/bi/apps/00000000-0000-4000-8000-000000000000/data')).statusCode, 404);
  t.ok((await s.get('/bi/apps/nope/data')).statusCode < 500, 'a bad id is no 5xx');

  // a refresh that fails is recorded: the page says why
  await fixture!.sql('alter schema sales rename to sales_away');
  try {
    const failed = await admin.api('POST', `/api/bi/apps/${app.id}/data-sources/${source.id}/refresh`);
    t.equal(failed.statusCode, 422);
  } finally {
    await fixture!.sql('alter schema sales_away rename to sales');
  }
  const after = await s.get(`${url}?notice=refreshFailed&source=${source.id}`);
  t.match(after.body, /<div class="alert" role="alert"><p>warehouse failed its test: no such schema/, 'the failure in an alert');
  t.match(rowOf(after.body, 'data-source', source.id), /<td class="bi-problem">Failed<\/td>/, 'the status failed');
  t.match(rowOf(after.body, 'data-source', source.id), /<summary>4 tables<\/summary>/, 'the tables of the last good test stay');
});

t.test("Analytics with an application: its sources' tables, a run with app, Save the query, and a saved query to start from", { skip }, async (t) => {
  const app = await bi.app(admin, { name: 'Warehouse app' });
  await addSource(admin, app.id, sourceBody(fixture!));
  const s = await session(tenant.adminEmail);

  const picker = await s.get(`/bi/analytics?app=${app.id}`);
  t.equal(picker.statusCode, 200);
  t.match(picker.body, new RegExp(`<option value="${app.id}" selected>Warehouse app</option>`), 'the application chosen');
  t.match(picker.body, /<optgroup label="Data sources of Warehouse app">[^]*?<option value="warehouse.orders">warehouse › Orders<\/option>/, "its sources' tables offered");
  t.match(picker.body, new RegExp(`<input type="hidden" name="app" value="${app.id}">`), 'the table picker keeps the application');
  t.notMatch((await s.get('/bi/analytics')).body, /Data sources of/, 'no application, no source tables');

  const run = await s.get(`/bi/analytics?app=${app.id}&table=warehouse.orders&m=count&d=region&run=1`);
  t.equal(run.statusCode, 200);
  t.match(run.body, /<div id="bi-errors" role="alert">\s*<\/div>/, 'no error');
  t.match(run.body, /<tr><td>north<\/td><td class="numeric">2<\/td><\/tr>/, 'the result, from the external database');
  const json = scriptData(run.body, 'bi-analytics');
  t.equal(json.app, app.id, "the builder's script runs with the application");
  t.same(json.query, { table: 'warehouse.orders', measures: [{ agg: 'count' }], dimensions: ['region'] }, 'a saved query or widget keeps it without app');
  t.same(json.save, { appId: app.id, appName: 'Warehouse app', dataUrl: `/bi/apps/${app.id}/data` });
  t.match(run.body, /id="bi-save-form"/, 'the owner may save it');
  t.match(run.body, /src="\/console\/modules\/bi\/analytics-save\.js"/);
  t.match(run.body, /<p id="bi-add-none" class="hint">You cannot add this result to a dashboard: it reads a table of Warehouse app/, 'a widget of it only on a page of its application');
  const csv = hrefs(run.body).find((h) => h.startsWith('/console/api/bi/analytics/csv?query='))!;
  t.match(JSON.parse(csv.slice(csv.indexOf('=') + 1)), { app: app.id }, 'the CSV runs with the application');

  const sheet = await bi.sheet(admin, app.id, { name: 'Board' });
  const other = await bi.app(admin, { name: 'Other app' });
  await bi.sheet(admin, other.id, { name: 'Elsewhere' });
  const withSheet = await s.get(`/bi/analytics?app=${app.id}&table=warehouse.orders&m=count&run=1`);
  t.match(withSheet.body, new RegExp(`<optgroup label="Warehouse app"><option value="${sheet.id}"`), "the application's pages offered");
  t.notMatch(withSheet.body, /Elsewhere/, "another application's not");
  t.match((await s.get(`/bi/analytics?app=${app.id}&table=BiSheet&run=1`)).body, /Elsewhere/, "an entity's query goes on any page");

  const viewer = await bi.user();
  await bi.share(admin, app.id, viewer.id, 'viewer');
  const asViewer = await (await session(await emailOf(viewer.id))).get(`/bi/analytics?app=${app.id}&table=warehouse.orders&m=count&run=1`);
  t.match(asViewer.body, /<tbody>\s*<tr><td class="numeric">6<\/td>/, 'a viewer runs it');
  t.notMatch(asViewer.body, /bi-save-form|analytics-save\.js/, 'but may not save it');

  const unknown = await s.get('/bi/analytics?app=00000000-0000-4000-8000-000000000000&table=warehouse.orders');
  t.match(unknown.body, /There is no such application among those you may read/, 'an application they do not read');
  t.match(unknown.body, /There is no such table among those you may read/, 'and its tables are none of theirs');

  // a saved query fills the builder, and runs
  const saved = expectStatus(
    await admin.api('POST', `/api/bi/apps/${app.id}/queries`, {
      name: 'Big orders',
      query: {
        table: 'warehouse.orders',
        measures: [{ agg: 'sum', field: 'amount', name: 'total' }],
        dimensions: ['customer'],
        filters: [{ field: 'region', op: 'in', values: ['north', 'east'] }],
        order: [{ by: 'total', dir: 'desc' }],
        limit: 5,
      },
    }),
    201,
    'save',
  );
  const loaded = await s.get(`/bi/analytics?app=${app.id}&saved=${saved.id}`);
  t.equal(loaded.statusCode, 200);
  t.match(loaded.body, /<p class="notice" role="status">The saved query Big orders, in the builder\.<\/p>/);
  t.match(loaded.body, /<option value="sum:amount" selected>/, 'its measure');
  t.match(loaded.body, /<option value="customer" selected>/, 'its grouping');
  t.match(loaded.body, /<input id="bi-fv-0" name="fv" value="north, east"/, 'its filter');
  t.match(loaded.body, /<option value="sum_amount" selected>/, 'its order, by the column the builder names');
  t.match(loaded.body, /The builder has no control for some parts of this saved query; they are left out: \/measures\/0\/name\./);
  const first = ORDERS.filter((o) => o.region === 'east' || o.region === 'north').sort((a, b) => Number(b.amount) - Number(a.amount))[0];
  t.match(loaded.body, new RegExp(`<tbody>\\s*<tr><td>${first.customer}</td><td class="numeric">1,200\\.00</td>`), 'run at once');

  // a saved query is a table of its application: its groups counted
  const picked = await s.get(`/bi/analytics?app=${app.id}`);
  t.match(picked.body, new RegExp(`<optgroup label="Saved queries of Warehouse app"><option value="query:${saved.id}">Big orders</option>`), 'the saved queries offered as tables');
  const groups = await s.get(`/bi/analytics?app=${app.id}&table=query:${saved.id}&m=count&run=1`);
  t.match(groups.body, /<div id="bi-errors" role="alert">\s*<\/div>/, 'no error');
  t.match(groups.body, /<tbody>\s*<tr><td class="numeric">3<\/td><\/tr>/, 'three customers bought in the north or east');
  t.match(groups.body, new RegExp(`<optgroup label="Warehouse app"><option value="${sheet.id}"`), 'a widget of it on a page of its application');
  t.notMatch(groups.body, /Elsewhere/, "not on another application's");
  t.match((await s.get(`/bi/analytics?app=${app.id}&saved=00000000-0000-4000-8000-000000000000`)).body, /There is no such saved query in this application\./);
  t.match((await s.get(`/bi/analytics?app=${other.id}&saved=${saved.id}`)).body, /There is no such saved query in this application\./, "another application's");
});

t.test("a saved query's parts the builder cannot show are named", async (t) => {
  const { state, left } = stateOfQuery(
    {
      table: 'Deal',
      measures: [
        { agg: 'count', name: 'deals' },
        { agg: 'max', field: 'closed' },
      ],
      timeDimensions: [
        { field: 'closed', granularity: 'month', dateRange: ['2026-01-01', '2026-03-31'], name: 'm' },
        { field: 'opened', granularity: 'year' },
      ],
      filters: [
        { field: 'seats', op: 'gte', value: 3 },
        { field: 'won', op: 'equals', value: true },
        { field: 'stage', op: 'notSet' },
      ],
      order: [{ by: 'm' }, { by: 'deals', dir: 'desc' }],
      offset: 10,
    },
    'app-id',
  );
  t.same(state, {
    app: 'app-id',
    table: 'Deal',
    measures: ['count', 'max:closed'],
    dimensions: [],
    time: { field: 'closed', granularity: 'month', from: '2026-01-01', to: '2026-03-31' },
    filters: [
      { field: 'seats', op: 'gte', value: '3' },
      { field: 'won', op: 'equals', value: 'true' },
      { field: 'stage', op: 'notSet', value: '' },
    ],
    sort: 'closed.month',
    dir: 'asc',
    limit: '',
    chart: 'bar',
    run: true,
  });
  t.same(left, ['/measures/0/name', '/timeDimensions/0/name', '/timeDimensions/1', '/order/1', '/offset']);
});
