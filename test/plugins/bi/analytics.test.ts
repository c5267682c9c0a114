// Analytics over a data set computed by hand: counts, sums, averages, minima,
// maxima and distinct counts, dimensions along references (customerId.name),
// time dimensions by month and quarter with a date range, every filter
// operator, order, limit and offset, the row cap and the statement timeout;
// column metadata and the SQL's shape without values.
import t from 'tap';
import { build, onPglite } from '../../helper.ts';
import { biApi, expectProblem, expectStatus } from './bi-api.ts';

const ctx = await build(t);
const tenant = await ctx.tenant();
const bi = biApi(ctx, tenant);
const analyst = await bi.user(['erp:bi:view', 'erp:crm:manage']);

const customers: Record<string, string> = {};
for (const [name, industry] of [
  ['Acme', 'Tools'],
  ['Globex', 'Energy'],
  ['Initech', null],
] as const) {
  customers[name] = expectStatus(await analyst.api('POST', '/api/crm/customers', { name, currency: 'EUR', industry }), 201, name).id;
}
for (const [name, customer, amount, stage, probability, expectedCloseDate] of [
  ['A1', 'Acme', '1000.00', 'proposal', 50, '2026-01-15'],
  ['A2', 'Acme', '2500.50', 'won', 100, '2026-02-20'],
  ['G1', 'Globex', '300.25', 'won', 100, '2026-02-03'],
  ['G2', 'Globex', null, 'lost', 0, '2026-04-10'],
  ['I1', 'Initech', '1200.00', 'proposal', 40, null],
] as const) {
  expectStatus(await analyst.api('POST', '/api/crm/opportunities', { name, customerId: customers[customer], amount, stage, probability, expectedCloseDate, currency: 'EUR' }), 201, name);
}

const post = (query: unknown, as = analyst) => as.api('POST', '/api/bi/analytics', query as object);
const rows = async (query: Record<string, unknown>, as = analyst) => expectStatus(await post({ table: 'Opportunity', ...query }, as), 200, JSON.stringify(query).slice(0, 80)).rows;

t.test('measures over every row, computed by hand', async (t) => {
  const res = expectStatus(
    await post({
      table: 'Opportunity',
      measures: [
        { agg: 'count', name: 'n' },
        { agg: 'sum', field: 'amount' },
        { agg: 'avg', field: 'amount' },
        { agg: 'min', field: 'amount' },
        { agg: 'max', field: 'amount' },
        { agg: 'countDistinct', field: 'customerId', name: 'customers' },
        { agg: 'sum', field: 'probability' },
        { agg: 'max', field: 'expectedCloseDate', name: 'last' },
      ],
    }),
    200,
    'measures',
  );
  // every amount is in EUR: money comes out per currency, here one
  t.same(res.rows, [{ currency: 'EUR', n: 5, sum_amount: '5000.75', avg_amount: '1250.19', min_amount: '300.25', max_amount: '2500.50', customers: 3, sum_probability: 290, last: '2026-04-10' }]);
  t.same(
    res.columns.map((c: Record<string, string>) => [c.name, c.type, c.role]),
    [
      ['currency', 'string', 'dimension'],
      ['n', 'integer', 'measure'],
      ['sum_amount', 'decimal', 'measure'],
      ['avg_amount', 'decimal', 'measure'],
      ['min_amount', 'decimal', 'measure'],
      ['max_amount', 'decimal', 'measure'],
      ['customers', 'integer', 'measure'],
      ['sum_probability', 'integer', 'measure'],
      ['last', 'date', 'measure'],
    ],
  );
  t.equal(res.truncated, false);
  t.equal(res.rowCount, 1);
  t.match(res.sql, /^select /);
  t.notMatch(res.sql, /tenant_/, 'no schema name');
  t.notMatch(res.sql, /EUR|Acme/, 'no value');
});

t.test('dimensions, along references too, with order, limit and offset', async (t) => {
  t.same(await rows({ dimensions: ['stage'], measures: [{ agg: 'count' }, { agg: 'sum', field: 'amount' }, { agg: 'avg', field: 'amount' }] }), [
    { stage: 'lost', currency: 'EUR', count: 1, sum_amount: '0.00', avg_amount: null },
    { stage: 'proposal', currency: 'EUR', count: 2, sum_amount: '2200.00', avg_amount: '1100.00' },
    { stage: 'won', currency: 'EUR', count: 2, sum_amount: '2800.75', avg_amount: '1400.38' },
  ]);
  const byCustomer = expectStatus(
    await post({ table: 'Opportunity', dimensions: ['customerId.name', 'customerId.industry'], measures: [{ agg: 'sum', field: 'amount', name: 'total' }], order: [{ by: 'total', dir: 'desc' }] }),
    200,
    'by customer',
  );
  t.same(byCustomer.rows, [
    { 'customerId.name': 'Acme', 'customerId.industry': 'Tools', currency: 'EUR', total: '3500.50' },
    { 'customerId.name': 'Initech', 'customerId.industry': null, currency: 'EUR', total: '1200.00' },
    { 'customerId.name': 'Globex', 'customerId.industry': 'Energy', currency: 'EUR', total: '300.25' },
  ]);
  t.same(byCustomer.columns[0], { name: 'customerId.name', type: 'string', label: 'Customer › Name', role: 'dimension' });
  t.match(byCustomer.sql, /left join \(select t\."id" as "id", .* from "crm_customers" t where/);
  const page = await rows({ dimensions: ['customerId.name'], measures: [{ agg: 'sum', field: 'amount', name: 'total' }], order: [{ by: 'total', dir: 'desc' }], limit: 1, offset: 1 });
  t.same(page, [{ 'customerId.name': 'Initech', currency: 'EUR', total: '1200.00' }]);
  const truncated = expectStatus(await post({ table: 'Opportunity', dimensions: ['stage'], measures: [{ agg: 'count' }], limit: 2 }), 200, 'limit 2');
  t.same([truncated.rowCount, truncated.truncated], [2, true]);
});

t.test('time dimensions: granularities and date ranges', async (t) => {
  t.same(await rows({ timeDimensions: [{ field: 'expectedCloseDate', granularity: 'month', dateRange: ['2026-01-01', '2026-03-31'] }], measures: [{ agg: 'count' }] }), [
    { 'expectedCloseDate.month': '2026-01-01', count: 1 },
    { 'expectedCloseDate.month': '2026-02-01', count: 2 },
  ]);
  t.same(await rows({ timeDimensions: [{ field: 'expectedCloseDate', granularity: 'quarter', name: 'q' }], measures: [{ agg: 'count' }] }), [
    { q: '2026-01-01', count: 3 },
    { q: '2026-04-01', count: 1 },
    { q: null, count: 1 },
  ]);
  t.same(await rows({ timeDimensions: [{ field: 'expectedCloseDate', dateRange: ['2026-02-03', '2026-02-20'] }], measures: [{ agg: 'count' }] }), [{ count: 2 }], 'both ends included');
  const today = new Date().toISOString().slice(0, 10);
  t.same(await rows({ timeDimensions: [{ field: 'createdAt', granularity: 'year', dateRange: ['2000-01-01', '2999-12-31'] }], measures: [{ agg: 'count' }] }), [
    { 'createdAt.year': `${today.slice(0, 4)}-01-01`, count: 5 },
  ]);
  t.same(await rows({ timeDimensions: [{ field: 'createdAt', dateRange: ['2000-01-01', '2000-12-31'] }], measures: [{ agg: 'count' }] }), [{ count: 0 }]);
  for (const by of ['day', 'week', 'year']) t.equal((await rows({ timeDimensions: [{ field: 'expectedCloseDate', granularity: by }], measures: [{ agg: 'count' }] })).length > 0, true, by);
});

t.test('every filter operator', async (t) => {
  const count = async (...filters: unknown[]) => (await rows({ measures: [{ agg: 'count' }], filters }))[0].count;
  t.equal(await count({ field: 'stage', op: 'equals', value: 'won' }), 2);
  t.equal(await count({ field: 'stage', op: 'notEquals', value: 'won' }), 3);
  t.equal(await count({ field: 'stage', op: 'in', values: ['won', 'lost'] }), 3);
  t.equal(await count({ field: 'stage', op: 'notIn', values: ['won', 'lost'] }), 2);
  t.equal(await count({ field: 'amount', op: 'gt', value: '1000' }), 2);
  t.equal(await count({ field: 'amount', op: 'gte', value: 1000 }), 3);
  t.equal(await count({ field: 'amount', op: 'lt', value: '1000.00' }), 1);
  t.equal(await count({ field: 'probability', op: 'lte', value: 40 }), 2);
  t.equal(await count({ field: 'customerId.name', op: 'contains', value: 'ME' }), 2, 'case-insensitive, along a reference');
  t.equal(await count({ field: 'name', op: 'startsWith', value: 'G' }), 2);
  t.equal(await count({ field: 'name', op: 'contains', value: '%' }), 0, '% matches itself');
  t.equal(await count({ field: 'amount', op: 'notSet' }), 1);
  t.equal(await count({ field: 'expectedCloseDate', op: 'set' }), 4);
  t.equal(await count({ field: 'customerId', op: 'equals', value: customers.Acme }), 2);
  t.equal(await count({ field: 'customerId.industry', op: 'notSet' }), 1);
  t.equal(await count({ field: 'expectedCloseDate', op: 'lt', value: '2026-02-04' }, { field: 'amount', op: 'set' }), 2, 'filters combine with and');
  t.equal(await count({ field: 'name', op: 'equals', value: "' or 1=1 --" }), 0, 'a value is data');
  t.equal(await count({ field: 'name', op: 'in', values: ['A1', "A2'); drop table x; --"] }), 1, 'values are data');
});

t.test('GET takes the same query as JSON', async (t) => {
  const q = { table: 'Opportunity', dimensions: ['stage'], measures: [{ agg: 'count' }], order: [{ by: 'count', dir: 'desc' }] };
  const res = expectStatus(await analyst.api('GET', `/api/bi/analytics?query=${encodeURIComponent(JSON.stringify(q))}`), 200, 'GET');
  t.same(
    res.rows.map((r: { stage: string; count: number }) => [r.stage, r.count]),
    [
      ['proposal', 2],
      ['won', 2],
      ['lost', 1],
    ],
    'by count, then by the group key',
  );
  expectProblem(t, await analyst.api('GET', '/api/bi/analytics?query=%7Bnot%20json'), 400, 'VALIDATION_FAILED', 'no JSON');
  expectProblem(t, await analyst.api('GET', '/api/bi/analytics'), 400, 'VALIDATION_FAILED', 'no query');
  expectProblem(t, await analyst.api('GET', `/api/bi/analytics?query=${'x'.repeat(17000)}`), 400, 'VALIDATION_FAILED', 'too long');
  expectProblem(t, await analyst.api('GET', `/api/bi/analytics?query=${encodeURIComponent(JSON.stringify(q))}&extra=1`), 400, 'VALIDATION_FAILED', 'unknown parameter');
  expectProblem(t, await analyst.api('GET', '/api/bi/analytics?query=%5B%5D'), 400, 'VALIDATION_FAILED', 'a list');
  expectProblem(t, await analyst.api('GET', '/api/bi/analytics?query=null'), 400, 'VALIDATION_FAILED', 'null');
});

t.test('the row cap', async (t) => {
  process.env.BI_MAX_ROWS = '2';
  t.teardown(() => delete process.env.BI_MAX_ROWS);
  const capped = expectStatus(await post({ table: 'Opportunity', dimensions: ['name'], measures: [{ agg: 'count' }] }), 200, 'capped');
  t.same([capped.rowCount, capped.truncated], [2, true]);
  const res = await post({ table: 'Opportunity', dimensions: ['name'], measures: [{ agg: 'count' }], limit: 3 });
  expectProblem(t, res, 400, 'VALIDATION_FAILED', 'a limit beyond the cap');
  t.equal(res.json().errors[0].path, '/limit');
});

t.test('the statement timeout', { skip: onPglite && 'PGlite runs statements in-process: statement_timeout does not interrupt them' }, async (t) => {
  // enough rows that one grouped pass takes far longer than a millisecond
  const model = ctx.kernel.model('Opportunity');
  const em = ctx.kernel.dbs.get(ctx.kernel.tenants.cached(tenant.id)!.connectionKey).em.fork();
  await em
    .getConnection()
    .execute(
      `insert into "${tenant.schema}"."${model.table}" (id, company_id, created_at, updated_at, version, name, customer_id, currency, amount) select gen_random_uuid(), '${tenant.companyId}', now(), now(), 1, 'bulk ' || g, '${customers.Acme}', 'EUR', g from generate_series(1, 200000) g`,
    );
  process.env.BI_QUERY_TIMEOUT_MS = '1';
  t.teardown(() => delete process.env.BI_QUERY_TIMEOUT_MS);
  const res = await post({ table: 'Opportunity', dimensions: ['name'], measures: [{ agg: 'countDistinct', field: 'amount' }], limit: 1 });
  expectProblem(t, res, 422, 'UNPROCESSABLE', 'timed out');
  delete process.env.BI_QUERY_TIMEOUT_MS;
  t.equal(expectStatus(await post({ table: 'Opportunity', measures: [{ agg: 'count' }] }), 200, 'the next query runs').rows[0].count, 200005);
  await em.getConnection().execute(`delete from "${tenant.schema}"."${model.table}" where name like 'bulk %'`);
});
