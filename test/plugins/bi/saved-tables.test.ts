// Saved queries as tables of their application (`query:<id>`): listed in the
// application's model with their result columns, queried again (counts of
// groups, sums of sums, filters on measures, coarser periods) with results
// computed by hand; in one statement inside the caller's rights (a member
// without CRM gets 403, the result cache works and a write ends it); the
// wrong application, an outsider, unknown and injected names, a saved query
// over a saved query; a widget over one; and over a data source's table.
import t from 'tap';
import { biApi, expectProblem, expectStatus, UNKNOWN_ID } from './bi-api.ts';
import { addSource, buildWithSources, externalDatabase, skipWithout, sourceBody } from './external-fixture.ts';

const fixture = await externalDatabase(t);
const ctx = await buildWithSources(t, true);
const tenant = await ctx.tenant();
const bi = biApi(ctx, tenant);
const analyst = await bi.user(['erp:bi:view', 'erp:crm:manage']);
const app = (await bi.app(analyst)).id;
const crmless = await bi.user();
await bi.share(analyst, app, crmless.id, 'viewer');
const outsider = await bi.user(['erp:bi:view', 'erp:crm:manage']);

const customers: Record<string, string> = {};
for (const name of ['Acme', 'Globex', 'Initech']) {
  customers[name] = expectStatus(await analyst.api('POST', '/api/crm/customers', { name, currency: 'EUR' }), 201, name).id;
}
for (const [name, customer, amount, expectedCloseDate] of [
  ['A1', 'Acme', '1000.00', '2026-01-15'],
  ['A2', 'Acme', '2500.50', '2026-02-20'],
  ['G1', 'Globex', '300.25', '2026-02-03'],
  ['G2', 'Globex', null, '2026-04-10'],
  ['I1', 'Initech', '1200.00', null],
] as const) {
  expectStatus(await analyst.api('POST', '/api/crm/opportunities', { name, customerId: customers[customer], amount, stage: 'proposal', expectedCloseDate, currency: 'EUR' }), 201, name);
}

const save = async (name: string, query: Record<string, unknown>, appId = app) =>
  expectStatus(await analyst.api('POST', `/api/bi/apps/${appId}/queries`, { name, query }), 201, `save ${name}`).id as string;
const byCustomer = await save('By customer', {
  table: 'Opportunity',
  dimensions: ['customerId.name'],
  measures: [
    { agg: 'sum', field: 'amount', name: 'total' },
    { agg: 'count', name: 'deals' },
  ],
});
const byMonth = await save('By month', { table: 'Opportunity', timeDimensions: [{ field: 'expectedCloseDate', granularity: 'month' }], measures: [{ agg: 'count' }] });
const post = (query: Record<string, unknown>, as = analyst) => as.api('POST', '/api/bi/analytics', { app, ...query });
const rows = async (query: Record<string, unknown>, as = analyst) => expectStatus(await post(query, as), 200, JSON.stringify(query).slice(0, 100)).rows;

t.test("the application's model lists each saved query as a table of its result columns", async (t) => {
  const schema = expectStatus(await analyst.api('GET', `/api/bi/schema?app=${app}`), 200, 'schema');
  const table = schema.tables.find((x: { name: string }) => x.name === `query:${byCustomer}`);
  t.match(table, { label: 'By customer', module: 'queries' });
  t.same(
    table.fields.map((f: Record<string, unknown>) => [f.name, f.type, f.role]),
    [
      ['customerId.name', 'string', 'dimension'],
      ['currency', 'string', 'dimension'],
      ['total', 'decimal', 'measure'],
      ['deals', 'integer', 'measure'],
    ],
  );
  const month = schema.tables.find((x: { name: string }) => x.name === `query:${byMonth}`);
  t.same(
    month.fields.map((f: Record<string, unknown>) => [f.name, f.type, f.role]),
    [
      ['expectedCloseDate.month', 'date', 'time'],
      ['count', 'integer', 'measure'],
    ],
  );
  const plain = expectStatus(await analyst.api('GET', '/api/bi/app-tables'), 200, 'without app');
  t.notOk(
    plain.items.some((x: { module: string }) => x.module === 'queries'),
    'without an application, no saved query',
  );
  const limited = expectStatus(await crmless.api('GET', `/api/bi/app-tables?app=${app}`), 200, 'a member without CRM');
  t.notOk(
    limited.items.some((x: { name: string }) => x.name.startsWith('query:')),
    'a saved query over a table the caller may not read is no table of theirs',
  );
});

t.test('queries over a saved query, computed by hand', async (t) => {
  const table = `query:${byCustomer}`;
  // Acme 3500.50 (2 deals), Globex 300.25 (2), Initech 1200.00 (1)
  t.same(
    await rows({
      table,
      measures: [
        { agg: 'count', name: 'customers' },
        { agg: 'sum', field: 'total' },
        { agg: 'max', field: 'deals' },
        { agg: 'avg', field: 'total' },
      ],
    }),
    // amounts are money: per currency, here EUR alone
    [{ currency: 'EUR', customers: 3, sum_total: '5000.75', max_deals: 2, avg_total: '1666.92' }],
  );
  t.same(await rows({ table, dimensions: ['customerId.name'], measures: [{ agg: 'sum', field: 'total' }], filters: [{ field: 'total', op: 'gte', value: '1000' }] }), [
    { 'customerId.name': 'Acme', currency: 'EUR', sum_total: '3500.50' },
    { 'customerId.name': 'Initech', currency: 'EUR', sum_total: '1200.00' },
  ]);
  t.same(await rows({ table, dimensions: ['deals'], measures: [{ agg: 'count', name: 'customers' }], order: [{ by: 'deals', dir: 'desc' }] }), [
    { deals: 2, customers: 2 },
    { deals: 1, customers: 1 },
  ]);
  t.same(await rows({ table, dimensions: ['customerId.name'], measures: [{ agg: 'count' }], filters: [{ field: 'customerId.name', op: 'startsWith', value: 'g' }] }), [
    { 'customerId.name': 'Globex', count: 1 },
  ]);
  // months 2026-01 (1), 2026-02 (2), 2026-04 (1) and no date (1): by quarter
  t.same(
    await rows({
      table: `query:${byMonth}`,
      timeDimensions: [{ field: 'expectedCloseDate.month', granularity: 'quarter', name: 'quarter' }],
      measures: [{ agg: 'sum', field: 'count', name: 'deals' }],
    }),
    [
      { quarter: '2026-01-01', deals: 3 },
      { quarter: '2026-04-01', deals: 1 },
      { quarter: null, deals: 1 },
    ],
  );
  t.same(await rows({ table: `query:${byMonth}`, timeDimensions: [{ field: 'expectedCloseDate.month', dateRange: ['2026-02-01', '2026-12-31'] }], measures: [{ agg: 'sum', field: 'count' }] }), [
    { sum_count: 3 },
  ]);
  const res = expectStatus(await post({ table, measures: [{ agg: 'count' }], limit: 1 }), 200, 'answer');
  t.match(res, { table, rowCount: 1, truncated: false });
  t.same(
    res.columns.map((c: Record<string, string>) => [c.name, c.type, c.role]),
    [['count', 'integer', 'measure']],
  );
  t.notMatch(res.sql, /Acme|1000|"tenant_/, 'no value and no schema name in the statement');
  t.match(res.sql, /from \(select .* from \(select /, 'one statement: the saved query inside');
});

t.test('a saved query with a limit is a table of its first groups', async (t) => {
  const top = await save('Top customer', {
    table: 'Opportunity',
    dimensions: ['customerId.name'],
    measures: [{ agg: 'sum', field: 'amount', name: 'total' }],
    order: [{ by: 'total', dir: 'desc' }],
    limit: 1,
  });
  t.same(await rows({ table: `query:${top}`, dimensions: ['customerId.name'], measures: [{ agg: 'sum', field: 'total' }] }), [{ 'customerId.name': 'Acme', currency: 'EUR', sum_total: '3500.50' }]);
});

t.test('rights: the caller runs the saved query as themselves', async (t) => {
  const res = await post({ table: `query:${byCustomer}`, measures: [{ agg: 'count' }] }, crmless);
  expectProblem(t, res, 403, 'FORBIDDEN', 'a member who may not read Opportunity');
  t.equal(res.json().errors[0].path, '/table');
  t.match(res.json().errors[0].message, /By customer/);
  expectProblem(t, await post({ table: `query:${byCustomer}`, measures: [{ agg: 'count' }] }, outsider), 404, 'NOT_FOUND', 'an outsider of the application');
  const other = (await bi.app(outsider)).id;
  const res2 = await outsider.api('POST', '/api/bi/analytics', { table: `query:${byCustomer}`, app: other, measures: [{ agg: 'count' }] });
  expectProblem(t, res2, 400, 'VALIDATION_FAILED', "another application's saved query");
  t.equal(res2.json().errors[0].path, '/table');
  const foreignTenant = await ctx.tenant();
  const stranger = await biApi(ctx, foreignTenant).user(['erp:bi:view', 'erp:crm:manage']);
  expectProblem(t, await post({ table: `query:${byCustomer}`, measures: [{ agg: 'count' }] }, stranger), 404, 'NOT_FOUND', 'another tenant');
});

t.test('wrong and hostile names are 400s naming their place', async (t) => {
  const table = `query:${byCustomer}`;
  const bad = async (query: Record<string, unknown>, path: string, what: string) => {
    const res = await post({ table, ...query });
    expectProblem(t, res, 400, 'VALIDATION_FAILED', what);
    t.equal(res.json().errors[0].path, path, `${what}: ${path}`);
  };
  await bad({ measures: [{ agg: 'sum', field: 'amount' }] }, '/measures/0/field', 'a field of the entity, not of the saved query');
  await bad({ dimensions: ['total.name'], measures: [{ agg: 'count' }] }, '/dimensions/0', 'a path along a measure');
  await bad({ measures: [{ agg: 'sum', field: 'customerId.name' }] }, '/measures/0/field', 'a text summed');
  await bad({ measures: [{ agg: 'count' }], filters: [{ field: 'total', op: 'gt', value: '1; drop table x' }] }, '/filters/0/value', 'a value that is no decimal');
  await bad({ measures: [{ agg: 'count' }], filters: [{ field: 'deals"; drop', op: 'set' }] }, '/filters/0/field', 'an injected name');
  await bad({ table: `query:${UNKNOWN_ID}`, measures: [{ agg: 'count' }] }, '/table', 'no such saved query');
  await bad({ table: 'query:nope', measures: [{ agg: 'count' }] }, '/table', 'no id');
  const res = await analyst.api('POST', '/api/bi/analytics', { table, measures: [{ agg: 'count' }] });
  expectProblem(t, res, 400, 'VALIDATION_FAILED', 'without the application');
  t.equal(res.json().errors[0].path, '/app');
  const nested = await save('Nested', { table, measures: [{ agg: 'count' }] });
  await bad({ table: `query:${nested}`, measures: [{ agg: 'count' }] }, '/table', 'a saved query over a saved query');
  const schema = expectStatus(await analyst.api('GET', `/api/bi/app-tables?app=${app}`), 200, 'tables');
  t.notOk(
    schema.items.some((x: { name: string }) => x.name === `query:${nested}`),
    'and it is no table',
  );
});

t.test('results are cached as any query, and a write to the table read ends them', async (t) => {
  const query = { table: `query:${byCustomer}`, measures: [{ agg: 'sum', field: 'deals', name: 'deals' }] };
  t.same(expectStatus(await post(query), 200, 'first').rows, [{ deals: 5 }]);
  t.match(expectStatus(await post(query), 200, 'again'), { cached: true, rows: [{ deals: 5 }] });
  expectStatus(await analyst.api('POST', '/api/crm/opportunities', { name: 'A3', customerId: customers.Acme, amount: '1.00', stage: 'proposal', currency: 'EUR' }), 201, 'one more');
  t.match(expectStatus(await post(query), 200, 'after the write'), { cached: false, rows: [{ deals: 6 }] });
});

t.test('a widget reads a saved query of its application as a table', async (t) => {
  const sheet = await bi.sheet(analyst, app);
  const w = await bi.widget(analyst, sheet.id, { kind: 'number', title: 'Customers', w: 3, h: 2, query: { table: `query:${byCustomer}`, measures: [{ agg: 'count', name: 'customers' }] } });
  const data = expectStatus(await analyst.api('GET', `/api/bi/sheets/${sheet.id}/data`), 200, 'render');
  const mine = data.widgets.find((x: { widgetId: string }) => x.widgetId === w.id);
  t.same(mine.data.rows, [{ customers: 3 }]);
  const theirs = expectStatus(await crmless.api('GET', `/api/bi/sheets/${sheet.id}/data`), 200, 'render for a member without CRM');
  t.equal(theirs.widgets.find((x: { widgetId: string }) => x.widgetId === w.id).problem.status, 403, 'fails alone for them');
});

t.test("a saved query over a data source's table", { skip: skipWithout(fixture) }, async (t) => {
  await addSource(analyst, app, sourceBody(fixture!));
  const byRegion = await save('Orders by region', {
    table: 'warehouse.orders',
    dimensions: ['region'],
    measures: [
      { agg: 'sum', field: 'quantity', name: 'units' },
      { agg: 'sum', field: 'amount', name: 'total' },
    ],
  });
  const schema = expectStatus(await analyst.api('GET', `/api/bi/schema?app=${app}`), 200, 'schema');
  t.same(
    schema.tables.find((x: { name: string }) => x.name === `query:${byRegion}`).fields.map((f: Record<string, unknown>) => [f.name, f.type, f.role]),
    [
      ['region', 'enum', 'dimension'],
      ['units', 'integer', 'measure'],
      ['total', 'decimal', 'measure'],
    ],
  );
  // north 2+5 / 130.25, south 1+1 / 260.50, east 10 / 1200.00, none 3 / 0.00
  t.same(
    await rows({
      table: `query:${byRegion}`,
      measures: [
        { agg: 'count', name: 'regions' },
        { agg: 'max', field: 'units' },
        { agg: 'sum', field: 'total' },
      ],
    }),
    [{ regions: 4, max_units: 10, sum_total: '1590.75' }],
  );
  t.same(await rows({ table: `query:${byRegion}`, dimensions: ['region'], measures: [{ agg: 'sum', field: 'units' }], filters: [{ field: 'region', op: 'in', values: ['north', 'south'] }] }), [
    { region: 'north', sum_units: 7 },
    { region: 'south', sum_units: 2 },
  ]);
  const res = expectStatus(await post({ table: `query:${byRegion}`, measures: [{ agg: 'count' }] }), 200, 'answer');
  t.match(res, { cached: false });
  t.match(res.sql, /from \(select .* from "sales"\."orders" t/);
  expectProblem(
    t,
    await post({ table: `query:${byRegion}`, measures: [{ agg: 'count' }], filters: [{ field: 'region', op: 'equals', value: 'west' }] }),
    400,
    'VALIDATION_FAILED',
    'no such enum value',
  );
});
