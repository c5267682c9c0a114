// Analytics over the tables of an application's data source, computed by hand
// from the fixture's orders: measures, dimensions (an enum too), time
// dimensions with date ranges, every filter operator, order, limit and offset,
// the row cap and the statement timeout; the model GET /schema?app= shows;
// injection attempts in identifiers and values; joins refused; who may query
// (members, viewers included; not outsiders, other applications, tenants);
// widgets and CSV over a source's table.
import t from 'tap';
import { biApi, expectProblem, expectStatus } from './bi-api.ts';
import { addSource, buildWithSources, externalDatabase, ORDERS, skipWithout, sourceBody } from './external-fixture.ts';

const fixture = await externalDatabase(t);
const skip = skipWithout(fixture);
const ctx = await buildWithSources(t, true);
const tenant = await ctx.tenant();
const bi = biApi(ctx, tenant);
const team = await bi.team();
const app = team.app.id;
if (fixture) await addSource(team.owner, app, sourceBody(fixture));

const post = (query: Record<string, unknown>, as = team.viewer) => as.api('POST', '/api/bi/analytics', { table: 'warehouse.orders', app, ...query });
const rows = async (query: Record<string, unknown>, as = team.viewer) => expectStatus(await post(query, as), 200, JSON.stringify(query).slice(0, 100)).rows;
const count = [{ agg: 'count' }];
/** The fixture's orders meeting `keep`, counted. */
const expected = (keep: (o: (typeof ORDERS)[number]) => boolean) => ORDERS.filter(keep).length;

t.test('the application model lists the source tables with types, labels and roles', { skip }, async (t) => {
  const schema = expectStatus(await team.viewer.api('GET', `/api/bi/schema?app=${app}`), 200, 'schema');
  const orders = schema.tables.find((x: { name: string }) => x.name === 'warehouse.orders');
  t.match(orders, { label: 'Orders', module: 'external', source: 'warehouse', description: 'Orders of the shop' });
  t.same(
    orders.fields.map((f: Record<string, unknown>) => [f.name, f.label, f.type, f.role]),
    [
      ['id', 'Id', 'integer', 'measure'],
      ['customer', 'Customer', 'string', 'dimension'],
      ['region', 'Region', 'enum', 'dimension'],
      ['amount', 'Amount', 'decimal', 'measure'],
      ['quantity', 'Quantity', 'integer', 'measure'],
      ['ordered_on', 'Ordered on', 'date', 'time'],
      ['shipped_at', 'Shipped at', 'datetime', 'time'],
      ['paid', 'Paid', 'boolean', 'dimension'],
    ],
  );
  t.same(orders.fields.find((f: { name: string }) => f.name === 'region').values, ['north', 'south', 'east']);
  t.ok(
    schema.tables.some((x: { name: string }) => x.name === 'Opportunity' || x.name === 'BiApp'),
    'the entities too',
  );
  t.notOk(
    schema.relations.some((r: { from: string }) => r.from.startsWith('warehouse.')),
    'no relation: a source table joins nothing',
  );
  const tables = expectStatus(await team.viewer.api('GET', `/api/bi/app-tables?app=${app}`), 200, 'app-tables');
  t.ok(tables.items.some((x: { name: string }) => x.name === 'warehouse.big_orders'));
  const plain = expectStatus(await team.viewer.api('GET', '/api/bi/schema'), 200, 'schema without app');
  t.notOk(
    plain.tables.some((x: { module: string }) => x.module === 'external'),
    'without an application, entities only',
  );
  expectProblem(t, await team.outsider.api('GET', `/api/bi/schema?app=${app}`), 404, 'NOT_FOUND', "an outsider asks for the application's model");
  expectProblem(t, await team.viewer.api('GET', '/api/bi/schema?app=nope'), 400, 'VALIDATION_FAILED', 'no uuid');
});

t.test('measures over every row, computed by hand', { skip }, async (t) => {
  const res = expectStatus(
    await post({
      measures: [
        { agg: 'count', name: 'n' },
        { agg: 'sum', field: 'amount' },
        { agg: 'avg', field: 'amount' },
        { agg: 'min', field: 'amount' },
        { agg: 'max', field: 'amount' },
        { agg: 'sum', field: 'quantity' },
        { agg: 'avg', field: 'quantity' },
        { agg: 'countDistinct', field: 'customer', name: 'customers' },
        { agg: 'max', field: 'ordered_on', name: 'last' },
        { agg: 'min', field: 'shipped_at', name: 'firstShipped' },
      ],
    }),
    200,
    'measures',
  );
  // amounts 100.00 + 250.50 + 30.25 + 1200.00 + 10.00 (one order has none) = 1590.75, over 5 = 318.15; quantities 2+1+5+3+10+1 = 22, over 6 = 3.67
  t.same(res.rows, [
    {
      n: 6,
      sum_amount: '1590.75',
      avg_amount: '318.15',
      min_amount: '10.00',
      max_amount: '1200.00',
      sum_quantity: 22,
      avg_quantity: '3.67',
      customers: 4,
      last: '2026-05-05',
      firstShipped: '2026-01-16T10:00:00.000Z',
    },
  ]);
  t.same(
    res.columns.map((c: Record<string, string>) => [c.name, c.type, c.role]),
    [
      ['n', 'integer', 'measure'],
      ['sum_amount', 'decimal', 'measure'],
      ['avg_amount', 'decimal', 'measure'],
      ['min_amount', 'decimal', 'measure'],
      ['max_amount', 'decimal', 'measure'],
      ['sum_quantity', 'integer', 'measure'],
      ['avg_quantity', 'decimal', 'measure'],
      ['customers', 'integer', 'measure'],
      ['last', 'date', 'measure'],
      ['firstShipped', 'datetime', 'measure'],
    ],
  );
  t.match(res, { table: 'warehouse.orders', rowCount: 1, truncated: false, cached: false });
  t.match(res.sql, /from "sales"\."orders" t/);
  t.notMatch(res.sql, /Acme|O'Brien/, 'no value in the statement');
});

t.test('dimensions, an enum, booleans, order, limit and offset', { skip }, async (t) => {
  t.same(await rows({ dimensions: ['customer'], measures: [...count, { agg: 'sum', field: 'amount', name: 'total' }], order: [{ by: 'total', dir: 'desc' }] }), [
    { customer: 'Initech', count: 1, total: '1200.00' },
    { customer: 'Acme', count: 2, total: '350.50' },
    { customer: 'Globex', count: 2, total: '30.25' },
    { customer: ORDERS[5].customer, count: 1, total: '10.00' },
  ]);
  t.same(await rows({ dimensions: ['region'], measures: count }), [
    { region: 'east', count: 1 },
    { region: 'north', count: 2 },
    { region: 'south', count: 2 },
    { region: null, count: 1 },
  ]);
  t.same(await rows({ dimensions: ['paid'], measures: [{ agg: 'sum', field: 'quantity', name: 'q' }] }), [
    { paid: false, q: 9 },
    { paid: true, q: 13 },
  ]);
  const page = expectStatus(await post({ dimensions: ['customer'], measures: count, order: [{ by: 'count', dir: 'desc' }], limit: 2, offset: 1 }), 200, 'page');
  t.same(page.rows, [
    { customer: 'Globex', count: 2 },
    { customer: 'Initech', count: 1 },
  ]);
  t.equal(page.truncated, true, 'more groups than the limit');
});

t.test('time dimensions by month and quarter, date ranges in the tenant zone', { skip }, async (t) => {
  t.same(await rows({ timeDimensions: [{ field: 'ordered_on', granularity: 'month' }], measures: count }), [
    { 'ordered_on.month': '2026-01-01', count: 1 },
    { 'ordered_on.month': '2026-02-01', count: 2 },
    { 'ordered_on.month': '2026-04-01', count: 2 },
    { 'ordered_on.month': '2026-05-01', count: 1 },
  ]);
  t.same(await rows({ timeDimensions: [{ field: 'ordered_on', granularity: 'quarter', name: 'q' }], measures: count }), [
    { q: '2026-01-01', count: 3 },
    { q: '2026-04-01', count: 3 },
  ]);
  // weeks start on Monday: 2026-01-15 is a Thursday
  t.same(await rows({ timeDimensions: [{ field: 'ordered_on', granularity: 'week', dateRange: ['2026-01-01', '2026-01-31'] }], measures: count }), [{ 'ordered_on.week': '2026-01-12', count: 1 }]);
  t.same(await rows({ timeDimensions: [{ field: 'ordered_on', dateRange: ['2026-02-01', '2026-04-30'] }], measures: count }), [
    { count: expected((o) => o.orderedOn >= '2026-02-01' && o.orderedOn <= '2026-04-30') },
  ]);
  // datetimes count days in the tenant's zone (UTC here): 2026-04-11 00:30 and 2026-05-01 08:00 fall in the range
  t.same(await rows({ timeDimensions: [{ field: 'shipped_at', dateRange: ['2026-04-11', '2026-05-01'] }], measures: count }), [{ count: 2 }]);
  t.same(await rows({ timeDimensions: [{ field: 'shipped_at', granularity: 'day', dateRange: ['2026-02-21', '2026-02-21'] }], measures: count }), [{ 'shipped_at.day': '2026-02-21', count: 1 }]);
});

t.test('every filter operator, values bound', { skip }, async (t) => {
  const n = async (filters: unknown[]) => (await rows({ measures: count, filters }))[0].count;
  t.equal(await n([{ field: 'amount', op: 'gte', value: '100' }]), 3);
  t.equal(await n([{ field: 'amount', op: 'lt', value: 100 }]), 2);
  t.equal(await n([{ field: 'quantity', op: 'gt', value: 2 }]), 3);
  t.equal(await n([{ field: 'quantity', op: 'lte', value: 2 }]), 3);
  t.equal(await n([{ field: 'customer', op: 'contains', value: 'ac' }]), 2, 'case-insensitive');
  t.equal(await n([{ field: 'customer', op: 'startsWith', value: "O'Brien')" }]), 1);
  t.equal(await n([{ field: 'customer', op: 'contains', value: '%' }]), 0, '% matches itself');
  t.equal(await n([{ field: 'region', op: 'in', values: ['north', 'east'] }]), 3);
  t.equal(await n([{ field: 'region', op: 'notIn', values: ['north'] }]), 4, 'rows without a value too');
  t.equal(await n([{ field: 'region', op: 'notEquals', value: 'north' }]), 4, 'rows without a value too');
  t.equal(await n([{ field: 'region', op: 'equals', value: 'south' }]), 2);
  t.equal(await n([{ field: 'paid', op: 'equals', value: true }]), 3);
  t.equal(await n([{ field: 'shipped_at', op: 'notSet' }]), 2);
  t.equal(await n([{ field: 'amount', op: 'set' }]), 5);
  t.equal(await n([{ field: 'ordered_on', op: 'gt', value: '2026-04-10' }]), 2);
  t.equal(await n([{ field: 'shipped_at', op: 'gte', value: '2026-02-21T23:30:00Z' }]), 3);
  t.equal(await n([{ field: 'shipped_at', op: 'in', values: ['2026-01-16T10:00:00Z', '2026-04-11T02:30:00+02:00'] }]), 2, 'instants in any offset');
  t.equal(
    await n([
      { field: 'customer', op: 'equals', value: 'Acme' },
      { field: 'amount', op: 'gt', value: '200' },
    ]),
    1,
    'filters combine with and',
  );
});

t.test('the row cap and the statement timeout of every analytics query', { skip }, async (t) => {
  process.env.BI_MAX_ROWS = '3';
  t.teardown(() => {
    delete process.env.BI_MAX_ROWS;
  });
  const capped = expectStatus(await post({ dimensions: ['customer'], measures: count }), 200, 'capped');
  t.equal(capped.rows.length, 3);
  t.equal(capped.truncated, true);
  const tooMany = await post({ dimensions: ['customer'], measures: count, limit: 4 });
  expectProblem(t, tooMany, 400, 'VALIDATION_FAILED', 'a limit beyond the cap');
  t.equal(tooMany.json().errors[0].path, '/limit');
  delete process.env.BI_MAX_ROWS;
  process.env.BI_QUERY_TIMEOUT_MS = '300';
  t.teardown(() => {
    delete process.env.BI_QUERY_TIMEOUT_MS;
  });
  const slow = await post({ table: 'warehouse.slow', measures: count });
  expectProblem(t, slow, 422, 'UNPROCESSABLE', 'a query longer than the timeout');
  t.match(slow.json().detail, /data source "warehouse": timeout/);
  t.equal(slow.json().errors[0].path, '/table');
  delete process.env.BI_QUERY_TIMEOUT_MS;
  t.same(await rows({ measures: count }), [{ count: 6 }], 'the next query runs');
});

t.test('injection attempts and names outside the model are refused; values are data', { skip }, async (t) => {
  for (const [query, path, status] of [
    [{ table: 'warehouse.orders; drop table sales.orders' }, '/table', 400],
    [{ table: 'warehouse."orders"' }, '/table', 400],
    [{ table: 'Warehouse.orders' }, '/table', 400],
    [{ table: 'warehouse.elsewhere' }, '/table', 400],
    [{ table: 'nowhere.orders' }, '/table', 400],
    [{ table: 'warehouse.pg_class' }, '/table', 400],
    [{ dimensions: ['customer"; drop table sales.orders; --'] }, '/dimensions/0', 400],
    [{ dimensions: ['notes'] }, '/dimensions/0', 400],
    [{ dimensions: ['Odd Name'] }, '/dimensions/0', 400],
    [{ dimensions: ['customer.name'] }, '/dimensions/0', 400],
    [{ measures: [{ agg: 'sum', field: 'customer' }] }, '/measures/0/field', 400],
    [{ measures: [{ agg: 'count', name: 'x"); drop' }] }, '/measures/0/name', 400],
    [{ measures: [{ agg: 'count' }], filters: [{ field: 'quantity', op: 'equals', value: '1 or 1=1' }] }, '/filters/0/value', 400],
    [{ measures: [{ agg: 'count' }], filters: [{ field: 'region', op: 'equals', value: "north' or 'a'='a" }] }, '/filters/0/value', 400],
    [{ measures: [{ agg: 'count' }], filters: [{ field: 'ordered_on', op: 'gt', value: "2026-01-01'::date or true --" }] }, '/filters/0/value', 400],
    [{ measures: [{ agg: 'count' }], filters: [{ field: 'customer', op: 'drop', value: 'x' }] }, '/filters/0/op', 400],
    [{ measures: [{ agg: 'count' }], filters: [{ field: 'paid', op: 'contains', value: 'x' }] }, '/filters/0/op', 400],
    [{ measures: [{ agg: 'count' }], order: [{ by: 'count; drop table x' }] }, '/order/0/by', 400],
    [{ measures: [{ agg: 'count' }], timeDimensions: [{ field: 'customer', granularity: 'month' }] }, '/timeDimensions/0/field', 400],
  ] as const) {
    const res = await post({ measures: count, ...query });
    expectProblem(t, res, status, 'VALIDATION_FAILED', JSON.stringify(query));
    t.equal(res.json().errors[0].path, path, JSON.stringify(query));
  }
  // a value that reads like SQL is compared as text
  t.same(await rows({ measures: count, filters: [{ field: 'customer', op: 'equals', value: "x'; drop table sales.orders; --" }] }), [{ count: 0 }]);
  t.same(await rows({ measures: count, filters: [{ field: 'customer', op: 'equals', value: ORDERS[5].customer }] }), [{ count: 1 }]);
  t.same(await fixture!.sql('select count(*)::int as n from sales.orders'), [{ n: 6 }], 'the table is whole');
  // a table of a source needs its application; an entity needs none
  const noApp = await team.viewer.api('POST', '/api/bi/analytics', { table: 'warehouse.orders', measures: count });
  expectProblem(t, noApp, 400, 'VALIDATION_FAILED', 'no application');
  t.equal(noApp.json().errors[0].path, '/app');
});

t.test('who may query: members (viewers too), not outsiders, other applications or callers without BI codes', { skip }, async (t) => {
  for (const member of [team.owner, team.editor, team.viewer]) t.same(await rows({ measures: count }, member), [{ count: 6 }]);
  expectProblem(t, await post({ measures: count }, team.outsider), 404, 'NOT_FOUND', 'an outsider');
  const theirs = await bi.app(team.outsider);
  const elsewhere = await team.outsider.api('POST', '/api/bi/analytics', { table: 'warehouse.orders', app: theirs.id, measures: count });
  expectProblem(t, elsewhere, 400, 'VALIDATION_FAILED', 'their own application has no such source');
  t.equal(elsewhere.json().errors[0].path, '/table');
  const noBi = await ctx.user(tenant, { codes: ['erp:crm:view'] });
  expectProblem(t, await ctx.as(noBi.token, { method: 'POST', url: '/api/bi/analytics', payload: { table: 'warehouse.orders', app, measures: count } }), 403, 'FORBIDDEN', 'no BI code');
  const admin = await bi.user(['erp:bi:admin']);
  t.same(await rows({ measures: count }, admin), [{ count: 6 }], 'a BI administrator of the company');
});

t.test('GET with ?query=, CSV, and a widget of the application over a source table', { skip }, async (t) => {
  const query = { table: 'warehouse.orders', app, dimensions: ['region'], measures: count, filters: [{ field: 'region', op: 'set' }] };
  const got = expectStatus(await team.viewer.api('GET', `/api/bi/analytics?query=${encodeURIComponent(JSON.stringify(query))}`), 200, 'GET');
  t.equal(got.rowCount, 3);
  const csv = await team.viewer.api('POST', '/api/bi/analytics/csv', query);
  t.equal(csv.statusCode, 200);
  t.equal(csv.body, 'region,count\r\neast,1\r\nnorth,2\r\nsouth,2\r\n');
  t.match(csv.headers['content-disposition'], /filename="warehouse\.orders\.csv"/);
  const sheet = await bi.sheet(team.editor, app);
  // a widget's query names no application: it reads the sources of its sheet's
  const widget = await bi.widget(team.editor, sheet.id, { kind: 'number', query: { table: 'warehouse.orders', measures: [{ agg: 'sum', field: 'amount', name: 'total' }] } });
  const saved = expectStatus(
    await team.editor.api('POST', `/api/bi/apps/${app}/queries`, {
      name: 'By month',
      query: { table: 'warehouse.orders', timeDimensions: [{ field: 'ordered_on', granularity: 'month' }], measures: count },
    }),
    201,
    'saved query',
  );
  const chart = await bi.widget(team.editor, sheet.id, { kind: 'chart', chartType: 'bar', queryId: saved.id });
  const data = expectStatus(await team.viewer.api('GET', `/api/bi/sheets/${sheet.id}/data`), 200, 'sheet data');
  const byId = new Map(data.widgets.map((w: { widgetId: string }) => [w.widgetId, w]));
  t.same((byId.get(widget.id) as { data: { rows: unknown[] } }).data.rows, [{ total: '1590.75' }]);
  t.equal((byId.get(chart.id) as { data: { rows: unknown[] } }).data.rows.length, 4);
  // a query stored with an application of its own is refused: a widget reads its sheet's
  const own = await team.editor.api('POST', `/api/bi/sheets/${sheet.id}/widgets`, { kind: 'number', query: { ...query, app } });
  expectProblem(t, own, 400, 'VALIDATION_FAILED', 'app in a stored query');
});
