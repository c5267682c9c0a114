// Amounts of money never add up across currencies: the model knows which
// fields are money and where their currency is (the manifest's "currency"), so
// a sum, average, minimum or maximum of one comes out per currency, in
// analytics, over a saved query's table and on a dashboard's number widget
// ("EUR 12,900.00 · GBP 3,400.00"), never as one figure.
import t from 'tap';
import { build, PASSWORD } from '../../helper.ts';
import { ConsoleSession } from '../../support/console-session.ts';
import { crmApi } from '../crm/crm-api.ts';
import { apiAs } from '../core/core-api.ts';
import { biApi, expectProblem, expectStatus } from './bi-api.ts';

const ctx = await build(t);
const tenant = await ctx.tenant();
const crm = crmApi(ctx, tenant.adminToken);
const bi = biApi(ctx, tenant);
const admin = { id: '', token: tenant.adminToken, api: apiAs(ctx, tenant.adminToken) };

// open: EUR 10,000 + 2,900, GBP 3,400; won: EUR 500
const acme = await crm.customer({ currency: 'EUR' });
const northwind = await crm.customer({ currency: 'GBP' });
await crm.opportunity({ customerId: acme.id, stage: 'proposal', amount: '10000.00', currency: 'EUR' });
await crm.opportunity({ customerId: acme.id, stage: 'qualification', amount: '2900.00', currency: 'EUR' });
await crm.opportunity({ customerId: northwind.id, stage: 'proposal', amount: '3400.00', currency: 'GBP' });
await crm.opportunity({ customerId: acme.id, stage: 'won', amount: '500.00', currency: 'EUR' });
const OPEN = [{ field: 'stage', op: 'notIn', values: ['won', 'lost'] }];

type Row = Record<string, string | number | null>;
type Column = { name: string; role: string; currency?: string };
const run = async (query: Record<string, unknown>) => expectStatus(await admin.api('POST', '/api/bi/analytics', query), 200, 'analytics') as { columns: Column[]; rows: Row[] };
const byCurrency = (rows: Row[], measure: string, currency = 'currency') => Object.fromEntries(rows.map((r) => [r[currency], r[measure]]));

t.test('the model says which fields are money and where their currency is', async (t) => {
  const tables = expectStatus(await admin.api('GET', '/api/bi/app-tables'), 200, 'tables').items as { name: string; fields: { name: string; currency?: string }[] }[];
  const field = (table: string, name: string) => tables.find((x) => x.name === table)!.fields.find((f) => f.name === name)!;
  t.equal(field('Opportunity', 'amount').currency, 'currency');
  t.equal(field('QuoteLine', 'lineTotal').currency, 'quoteId.currency', "a line's currency is its quote's");
  t.equal(field('Product', 'price').currency, 'currency');
  t.notOk(field('Opportunity', 'probability').currency, 'a number that is no money has none');
});

t.test('a sum or an average of money over two currencies comes out per currency', async (t) => {
  const res = await run({
    table: 'Opportunity',
    measures: [
      { agg: 'sum', field: 'amount', name: 'pipeline' },
      { agg: 'avg', field: 'amount', name: 'mean' },
      { agg: 'max', field: 'amount', name: 'largest' },
      { agg: 'count', name: 'deals' },
    ],
    filters: OPEN,
  });
  t.equal(res.rows.length, 2, 'one row per currency, not one figure');
  t.same(byCurrency(res.rows, 'pipeline'), { EUR: '12900.00', GBP: '3400.00' });
  t.same(Object.fromEntries(Object.entries(byCurrency(res.rows, 'mean')).map(([k, v]) => [k, Number(v)])), { EUR: 6450, GBP: 3400 });
  t.same(byCurrency(res.rows, 'deals'), { EUR: 2, GBP: 1 });
  const column = (name: string) => res.columns.find((c) => c.name === name)!;
  t.match(column('currency'), { role: 'dimension' }, 'the currency is a group of the answer');
  t.equal(column('pipeline').currency, 'currency', 'a money measure names its currency column');
  t.equal(column('mean').currency, 'currency');
  t.notOk(column('deals').currency, 'a count is no money');
});

t.test('with groups of its own, by currency too; a query grouping by the currency is left as it is', async (t) => {
  const byStage = await run({ table: 'Opportunity', dimensions: ['stage'], measures: [{ agg: 'sum', field: 'amount', name: 'amount' }], filters: OPEN, order: [{ by: 'stage' }] });
  t.same(byStage.rows.map((r) => [r.stage, r.currency, r.amount]).sort(), [
    ['proposal', 'EUR', '10000.00'],
    ['proposal', 'GBP', '3400.00'],
    ['qualification', 'EUR', '2900.00'],
  ]);
  const grouped = await run({ table: 'Opportunity', dimensions: ['currency'], measures: [{ agg: 'sum', field: 'amount', name: 'amount' }], filters: OPEN });
  t.same(
    grouped.columns.map((c) => c.name),
    ['currency', 'amount'],
  );
  const counted = await run({ table: 'Opportunity', measures: [{ agg: 'count', name: 'deals' }] });
  t.same(counted.rows, [{ deals: 4 }], 'no money, no split');
});

t.test("a currency along a reference: a quote line's is its quote's", async (t) => {
  const eur = await crm.quote({ customerId: acme.id, currency: 'EUR' });
  const gbp = await crm.quote({ customerId: northwind.id, currency: 'GBP' });
  await crm.line(eur.id, { quantity: '2', unitPrice: '100.00' });
  await crm.line(gbp.id, { quantity: '1', unitPrice: '50.00' });
  const res = await run({ table: 'QuoteLine', measures: [{ agg: 'sum', field: 'netAmount', name: 'net' }] });
  t.same(byCurrency(res.rows, 'net', 'quoteId.currency'), { EUR: '200.00', GBP: '50.00' });
  t.equal(res.columns.find((c) => c.name === 'net')!.currency, 'quoteId.currency');
  const viaRef = await run({ table: 'QuoteLine', measures: [{ agg: 'sum', field: 'quoteId.total', name: 'quoted' }] });
  t.equal(viaRef.columns.find((c) => c.name === 'quoted')!.currency, 'quoteId.currency', "a money field along a ref: that row's currency");
});

t.test('a measure may not take the name of the currency column it is grouped by', async (t) => {
  const res = await admin.api('POST', '/api/bi/analytics', { table: 'Opportunity', measures: [{ agg: 'sum', field: 'amount', name: 'currency' }] });
  expectProblem(t, res, 400, 'VALIDATION_FAILED');
  t.equal(res.json().errors[0].path, '/measures/0');
});

t.test("a saved query's money stays per currency when another query sums it again", async (t) => {
  const app = await bi.app(admin);
  const saved = expectStatus(
    await admin.api('POST', `/api/bi/apps/${app.id}/queries`, {
      name: 'By stage',
      query: { table: 'Opportunity', dimensions: ['stage'], measures: [{ agg: 'sum', field: 'amount', name: 'amount' }], filters: OPEN },
    }),
    201,
    'saved query',
  );
  const tables = expectStatus(await admin.api('GET', `/api/bi/app-tables?app=${app.id}`), 200, 'tables').items as { name: string; fields: { name: string; currency?: string }[] }[];
  t.equal(tables.find((x) => x.name === `query:${saved.id}`)!.fields.find((f) => f.name === 'amount')!.currency, 'currency');
  const res = await run({ table: `query:${saved.id}`, app: app.id, measures: [{ agg: 'sum', field: 'amount', name: 'total' }] });
  t.same(byCurrency(res.rows, 'total'), { EUR: '12900.00', GBP: '3400.00' });
});

t.test('a number widget of money shows one figure per currency', async (t) => {
  const app = await bi.app(admin);
  const sheet = await bi.sheet(admin, app.id);
  const widget = await bi.widget(admin, sheet.id, {
    kind: 'number',
    title: 'Open pipeline',
    w: 3,
    h: 2,
    query: { table: 'Opportunity', measures: [{ agg: 'sum', field: 'amount', name: 'pipeline' }], filters: OPEN },
    chart: { format: 'currency' },
  });
  const data = expectStatus(await admin.api('GET', `/api/bi/sheets/${sheet.id}/data`), 200, 'sheet data');
  t.equal(data.widgets.find((w: { widgetId: string }) => w.widgetId === widget.id).data.rows.length, 2);
  const session = new ConsoleSession(ctx.app);
  t.equal((await session.login(tenant.id, tenant.adminEmail, PASSWORD)).statusCode, 303);
  const page = await session.get(`/bi/apps/${app.id}/sheets/${sheet.id}`);
  t.equal(page.statusCode, 200);
  t.match(page.body, /<span class="bi-number-value">EUR 12,900\.00 · GBP 3,400\.00<\/span>/);
});

t.test('the same statement under other names answers with its own names (the result cache keys them too)', async (t) => {
  const query = (name: string) => ({ table: 'Opportunity', dimensions: ['currency'], measures: [{ agg: 'sum', field: 'amount', name }] });
  const first = await run(query('first'));
  const second = expectStatus(await admin.api('POST', '/api/bi/analytics', query('second')), 200, 'analytics');
  t.same(
    second.columns.map((c: Column) => c.name),
    ['currency', 'second'],
  );
  t.same(byCurrency(second.rows, 'second'), byCurrency(first.rows, 'first'));
});
