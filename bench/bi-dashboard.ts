// npm run bench -- --bi-dashboard [100000]: a BI dashboard of 8 widgets over
// N opportunities (default 100,000) of one tenant, rendered through
// GET /api/bi/sheets/:id/data on the kernel's app in this process (inject, no
// socket): cold (the first render: 8 aggregations in PostgreSQL, at most
// BI_RENDER_CONCURRENCY at once), warm (the same render again: the result
// cache) and after a write (one new opportunity ends every cached result over
// that table). Target (issue 15): under 300 ms warm.
//
// The tenant "bench-bi" is kept between runs; its rows are made once with
// one INSERT … SELECT generate_series (a fixture, not what is measured).
import { provisionTenant } from '../core/tenancy/provision.ts';
import { buildApp } from '../core/app.ts';
import type { Kernel } from '../core/kernel.ts';
import { median, round } from './report.ts';

const BI_TENANT = 'bench-bi';
const PASSWORD = 'bench-bi-password-0123456789';
const RENDERS = 10;

export interface BiDashboardResult {
  rows: number;
  widgets: number;
  coldMs: number;
  warmMs: { median: number; max: number };
  afterWriteMs: number;
  targetWarmMs: number;
}

const WIDGETS = [
  { kind: 'number', title: 'Opportunities', query: { table: 'Opportunity', measures: [{ agg: 'count' }] } },
  { kind: 'number', title: 'Pipeline', query: { table: 'Opportunity', measures: [{ agg: 'sum', field: 'amount' }] } },
  { kind: 'chart', chartType: 'bar', title: 'By stage', query: { table: 'Opportunity', dimensions: ['stage'], measures: [{ agg: 'count' }, { agg: 'sum', field: 'amount' }] } },
  {
    kind: 'chart',
    chartType: 'line',
    title: 'By month',
    query: { table: 'Opportunity', timeDimensions: [{ field: 'expectedCloseDate', granularity: 'month' }], measures: [{ agg: 'sum', field: 'amount' }] },
  },
  { kind: 'chart', chartType: 'pie', title: 'By industry', query: { table: 'Opportunity', dimensions: ['customerId.industry'], measures: [{ agg: 'count' }] } },
  {
    kind: 'table',
    title: 'Top customers',
    query: { table: 'Opportunity', dimensions: ['customerId.name'], measures: [{ agg: 'sum', field: 'amount', name: 'total' }], order: [{ by: 'total', dir: 'desc' }], limit: 10 },
  },
  {
    kind: 'chart',
    chartType: 'stackedBar',
    title: 'Stage by quarter',
    query: { table: 'Opportunity', dimensions: ['stage'], timeDimensions: [{ field: 'expectedCloseDate', granularity: 'quarter' }], measures: [{ agg: 'count' }] },
  },
  {
    kind: 'chart',
    chartType: 'scatter',
    title: 'Probability',
    query: {
      table: 'Opportunity',
      dimensions: ['stage'],
      measures: [
        { agg: 'avg', field: 'probability' },
        { agg: 'countDistinct', field: 'customerId' },
      ],
    },
  },
];

export async function biDashboard(kernel: Kernel, n: number, log: (m: string) => void): Promise<BiDashboardResult> {
  const app = await buildApp(kernel, { logger: false });
  await app.ready();
  try {
    let tenant = await kernel.tenants.find(BI_TENANT);
    if (!tenant) {
      await provisionTenant(kernel, { id: BI_TENANT, name: 'BI bench', company: { code: 'HQ', name: 'Headquarters' }, admin: { email: 'admin@bench-bi.test', name: 'Admin', password: PASSWORD } });
      tenant = (await kernel.tenants.find(BI_TENANT))!;
    }
    const login = await app.inject({ method: 'POST', url: '/api/auth/login', payload: { tenant: BI_TENANT, email: 'admin@bench-bi.test', password: PASSWORD } });
    if (login.statusCode !== 200) throw new Error(`bench-bi login: ${login.body}`);
    const token = login.json().accessToken as string;
    const api = async (method: 'GET' | 'POST', url: string, payload?: object) => {
      const res = await app.inject({ method, url, headers: { authorization: `Bearer ${token}` }, ...(payload ? { payload } : {}) });
      if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`);
      return res.json();
    };

    const conn = kernel.dbs.get(tenant.connectionKey).em.getConnection();
    const table = (name: string) => `"${tenant.schema}"."${name}"`;
    await conn.execute(`delete from ${table('crm_opportunities')} where name in ('Cold start', 'After write')`);
    const [{ count }] = await conn.execute(`select count(*)::int as count from ${table('crm_opportunities')}`);
    if (count !== n) {
      log(`bi dashboard: making ${n} opportunities in tenant ${BI_TENANT}`);
      await conn.execute(`delete from ${table('crm_opportunities')}`);
      if (!(await api('GET', '/api/crm/customers?size=1')).total) {
        for (let i = 0; i < 200; i++) await api('POST', '/api/crm/customers', { name: `Customer ${i}`, currency: 'EUR', industry: ['Tools', 'Energy', 'Retail', 'Health', null][i % 5] });
      }
      await conn.execute(
        `insert into ${table('crm_opportunities')} (id, company_id, name, customer_id, stage, amount, currency, probability, expected_close_date, created_at, updated_at, version)
         select gen_random_uuid(), c.company_id, 'Opportunity ' || g, c.id,
                (array['prospecting','qualification','proposal','negotiation','won','lost'])[1 + g % 6],
                round((g % 997) * 13.37, 2), 'EUR', (g * 7) % 101, date '2024-01-01' + (g % 1095), now(), now(), 1
         from generate_series(1, ?) g
         join lateral (select id, company_id from ${table('crm_customers')} order by id offset (g % 200) limit 1) c on true`,
        [n],
      );
      await conn.execute(`analyze ${table('crm_opportunities')}`);
    }

    // a fresh application each run, so the cache starts empty for it
    const biApp = await api('POST', '/api/bi/apps', { name: `Bench ${new Date().toISOString()}` });
    const sheet = await api('POST', `/api/bi/apps/${biApp.id}/sheets`, { name: 'Sales' });
    for (const w of WIDGETS) await api('POST', `/api/bi/sheets/${sheet.id}/widgets`, { ...w, w: 6, h: 3 });
    const render = async () => {
      const started = performance.now();
      const res = await api('GET', `/api/bi/sheets/${sheet.id}/data`);
      const ms = performance.now() - started;
      const failed = res.widgets.filter((w: { problem?: unknown }) => w.problem);
      if (failed.length) throw new Error(`bench-bi: widgets failed: ${JSON.stringify(failed)}`);
      return ms;
    };
    // cold: no result of these statements is cached (a write first ends any from an earlier run)
    await api('POST', '/api/crm/opportunities', { name: 'Cold start', customerId: (await api('GET', '/api/crm/customers?size=1')).items[0].id, currency: 'EUR' });
    const coldMs = await render();
    const warm: number[] = [];
    for (let i = 0; i < RENDERS; i++) warm.push(await render());
    await api('POST', '/api/crm/opportunities', { name: 'After write', customerId: (await api('GET', '/api/crm/customers?size=1')).items[0].id, currency: 'EUR' });
    const afterWriteMs = await render();
    // what this run added goes again: the next run finds the same N rows
    await conn.execute(`delete from ${table('crm_opportunities')} where name in ('Cold start', 'After write')`);
    await app.inject({ method: 'DELETE', url: `/api/bi/apps/${biApp.id}`, headers: { authorization: `Bearer ${token}`, 'if-match': `"${biApp.version}"` } });
    const result = {
      rows: n,
      widgets: WIDGETS.length,
      coldMs: round(coldMs),
      warmMs: { median: round(median(warm)), max: round(Math.max(...warm)) },
      afterWriteMs: round(afterWriteMs),
      targetWarmMs: 300,
    };
    log(
      `bi dashboard: ${WIDGETS.length} widgets over ${n} rows: cold ${result.coldMs} ms, warm ${result.warmMs.median} ms (max ${result.warmMs.max}), after a write ${result.afterWriteMs} ms (target warm < 300 ms)`,
    );
    return result;
  } finally {
    await app.close();
  }
}
