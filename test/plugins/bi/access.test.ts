// What analytics may show: exactly what the caller's own routes would. A BI
// user without CRM codes gets no CRM table (absent from the model, 403 when
// named); a project member's task analytics match what /api/pm/tasks lists
// them; other companies and tenants stay out; field rules hide fields; and
// every identifier, operator and value built to inject SQL is a 400 problem.
import t from 'tap';
import { build } from '../../helper.ts';
import { pmApi } from '../pm/pm-api.ts';
import { biApi, expectProblem, expectStatus } from './bi-api.ts';

const ctx = await build(t);
const tenant = await ctx.tenant();
const bi = biApi(ctx, tenant);
const pm = pmApi(ctx, tenant);
const crm = await bi.user(['erp:bi:view', 'erp:crm:manage']);
const customer = expectStatus(await crm.api('POST', '/api/crm/customers', { name: 'Acme', currency: 'EUR' }), 201, 'customer').id;
for (const name of ['O1', 'O2']) expectStatus(await crm.api('POST', '/api/crm/opportunities', { name, customerId: customer, amount: '10.00', currency: 'EUR' }), 201, name);

const count = (table: string, extra: Record<string, unknown> = {}) => ({ table, measures: [{ agg: 'count' }], ...extra });

t.test('a BI user without CRM codes gets no CRM data', async (t) => {
  const viewer = await bi.user(['erp:bi:view']);
  const tables = expectStatus(await viewer.api('GET', '/api/bi/app-tables'), 200, 'tables').items.map((x: { name: string }) => x.name);
  t.notOk(tables.includes('Opportunity'), 'no CRM table in the model');
  t.ok(tables.includes('BiApp'), 'BI tables are');
  const relations = expectStatus(await viewer.api('GET', '/api/bi/app-relations'), 200, 'relations').items;
  t.notOk(
    relations.some((r: { from: string; to: string }) => [r.from, r.to].includes('Customer')),
    'no relation to CRM',
  );
  for (const table of ['Opportunity', 'Customer', 'Task']) {
    const res = await viewer.api('POST', '/api/bi/analytics', count(table));
    expectProblem(t, res, 403, 'FORBIDDEN', table);
    t.equal(res.json().errors[0].path, '/table');
  }
  const db = expectStatus(await viewer.api('GET', '/api/bi/database'), 200, 'database');
  t.notOk(
    db.modules.some((m: { module: string }) => m.module === 'crm'),
    'no CRM table size',
  );
  // the CRM user sees them, counted
  t.equal(expectStatus(await crm.api('POST', '/api/bi/analytics', count('Opportunity')), 200, 'crm').rows[0].count, 2);
});

t.test("a project member's task analytics match what /api/pm/tasks lists them", async (t) => {
  const team = await pm.team();
  const other = await pm.user();
  const elsewhere = await pm.project(other);
  await pm.task(team.owner, { projectId: team.project.id, estimate: '2.50' });
  await pm.task(team.member, { projectId: team.project.id, estimate: '1.25' });
  await pm.task(other, { projectId: elsewhere.id, estimate: '9.00' });
  await pm.task(other, { estimate: '4.00' }); // a personal task of someone else
  await pm.task(team.member, { estimate: '0.50' }); // the member's own personal task
  const member = await bi.user(['erp:bi:view', 'erp:pm:view']);
  await pm.member(team.owner, team.project.id, member.id, 'viewer');
  await pm.task({ id: member.id, token: member.token, api: member.api }, { estimate: '3.00' });
  const listed = expectStatus(await member.api('GET', '/api/pm/tasks?size=1000'), 200, 'tasks').items as { projectId: string | null; estimate: string | null }[];
  const res = expectStatus(
    await member.api('POST', '/api/bi/analytics', {
      table: 'Task',
      dimensions: ['projectId', 'projectId.name'],
      measures: [{ agg: 'count' }, { agg: 'sum', field: 'estimate', name: 'hours' }],
    }),
    200,
    'analytics',
  );
  const byProject = new Map<string | null, { count: number; hours: number }>();
  for (const task of listed) {
    const g = byProject.get(task.projectId) ?? { count: 0, hours: 0 };
    byProject.set(task.projectId, { count: g.count + 1, hours: g.hours + Number(task.estimate ?? 0) });
  }
  t.same(
    res.rows.map((r: { projectId: string | null; count: number; hours: string }) => [r.projectId, r.count, Number(r.hours)]).sort(),
    [...byProject].map(([p, g]) => [p, g.count, g.hours]).sort(),
    'the same groups as the list',
  );
  t.same(res.rows.map((r: Record<string, unknown>) => r['projectId.name']).sort(), [team.project.name, null].sort(), 'their project, and their personal task without one');
  t.equal(listed.length, 3, "the project's two tasks and their own personal one");
  // a non-member BI user with the same codes sees only their own
  const outsider = await bi.user(['erp:bi:view', 'erp:pm:view']);
  t.same(expectStatus(await outsider.api('POST', '/api/bi/analytics', count('Task')), 200, 'outsider').rows, [{ count: 0 }]);
});

t.test('field rules: a hidden field is absent from the model and refused in a query', async (t) => {
  const viewer = await bi.user(['erp:bi:view']);
  const tables = expectStatus(await viewer.api('GET', '/api/bi/app-tables'), 200, 'tables').items as { name: string; fields: { name: string }[] }[];
  const user = tables.find((x) => x.name === 'User')!;
  t.same(user.fields.map((f) => f.name).sort(), ['createdAt', 'email', 'id', 'isActive', 'name', 'updatedAt'], 'the fields their grant names, and the kernel columns');
  const hidden = await viewer.api('POST', '/api/bi/analytics', { table: 'BiAppMember', dimensions: ['userId.primaryCompanyId'], measures: [{ agg: 'count' }] });
  expectProblem(t, hidden, 403, 'FORBIDDEN', 'a hidden field along a reference');
  t.equal(hidden.json().errors[0].path, '/dimensions/0');
  const a = await bi.app(viewer);
  const res = expectStatus(
    await viewer.api('POST', '/api/bi/analytics', {
      table: 'BiAppMember',
      dimensions: ['userId.email', 'appId.name'],
      measures: [{ agg: 'count' }],
      filters: [{ field: 'appId', op: 'equals', value: a.id }],
    }),
    200,
    'a readable field along a reference',
  );
  t.same(res.rows, [{ 'userId.email': expectStatus(await viewer.api('GET', `/api/users/${viewer.id}`), 200, 'me').email, 'appId.name': a.name, count: 1 }]);
});

t.test('other companies and other tenants stay out', async (t) => {
  const second = await ctx.company(tenant, `C${Date.now() % 100000}`);
  const both = await bi.user(['erp:bi:view', 'erp:crm:manage'], [tenant.companyId, second]);
  const headers = { 'x-company-id': second };
  const c2 = expectStatus(await both.api('POST', '/api/crm/customers', { name: 'Second', currency: 'EUR' }, headers), 201, 'customer 2').id;
  expectStatus(await both.api('POST', '/api/crm/opportunities', { name: 'X', customerId: c2, amount: '5.00', currency: 'EUR' }, headers), 201, 'opportunity 2');
  t.same(expectStatus(await both.api('POST', '/api/bi/analytics', count('Opportunity'), headers), 200, 'second company').rows, [{ count: 1 }]);
  t.same(expectStatus(await both.api('POST', '/api/bi/analytics', count('Opportunity')), 200, 'first company').rows, [{ count: 2 }]);
  expectProblem(t, await crm.api('POST', '/api/bi/analytics', count('Opportunity'), headers), 403, 'COMPANY_FORBIDDEN', 'a company not theirs');
  const other = await ctx.tenant();
  t.same(expectStatus(await ctx.as(other.adminToken, { method: 'POST', url: '/api/bi/analytics', payload: count('Opportunity') }), 200, 'other tenant').rows, [{ count: 0 }]);
});

t.test('injection attempts: every identifier, operator and value is a 400', async (t) => {
  const base = { table: 'Opportunity', measures: [{ agg: 'count' }] };
  const attempts: [string, unknown][] = [
    ['table', { ...base, table: 'Opportunity; drop table x' }],
    ['table quoted', { ...base, table: 'Opportunity"--' }],
    ['table unknown', { ...base, table: 'Nope' }],
    ['table lower case', { ...base, table: 'pg_catalog.pg_user' }],
    ['dimension', { ...base, dimensions: ['name"; drop table x; --'] }],
    ['dimension path', { ...base, dimensions: ["customerId.name') or 1=1 --"] }],
    ['dimension not a ref', { ...base, dimensions: ['name.length'] }],
    ['dimension too deep', { ...base, dimensions: ['customerId.ownerId.userId.name.x'] }],
    ['dimension unknown', { ...base, dimensions: ['nope'] }],
    ['dimension internal', { table: 'User', dimensions: ['passwordHash'], measures: [{ agg: 'count' }] }],
    ['measure agg', { ...base, measures: [{ agg: 'sum(amount) from x; --' }] }],
    ['measure field', { ...base, measures: [{ agg: 'sum', field: 'amount)*0+(select 1' }] }],
    ['measure of text', { ...base, measures: [{ agg: 'sum', field: 'name' }] }],
    ['measure name', { ...base, measures: [{ agg: 'count', name: 'x" from y --' }] }],
    ['measure count with a field', { ...base, measures: [{ agg: 'count', field: 'amount' }] }],
    ['granularity', { ...base, timeDimensions: [{ field: 'expectedCloseDate', granularity: "month') --" }] }],
    ['time field not a date', { ...base, timeDimensions: [{ field: 'name', granularity: 'month' }] }],
    ['date range', { ...base, timeDimensions: [{ field: 'expectedCloseDate', dateRange: ["2026-01-01' or '1'='1", '2026-02-01'] }] }],
    ['date range impossible day', { ...base, timeDimensions: [{ field: 'expectedCloseDate', dateRange: ['2026-02-30', '2026-03-01'] }] }],
    ['date range year 0', { ...base, timeDimensions: [{ field: 'createdAt', dateRange: ['0000-01-01', '2026-03-01'] }] }],
    ['date range reversed', { ...base, timeDimensions: [{ field: 'expectedCloseDate', dateRange: ['2026-03-01', '2026-01-01'] }] }],
    ['operator', { ...base, filters: [{ field: 'name', op: '= 1 or 1=1 --', value: 'x' }] }],
    ['operator like', { ...base, filters: [{ field: 'name', op: 'like', value: '%' }] }],
    ['filter field', { ...base, filters: [{ field: 'name or 1=1', op: 'equals', value: 'x' }] }],
    ['value text for a number', { ...base, filters: [{ field: 'amount', op: 'gt', value: '1; drop table x' }] }],
    ['value text for an integer', { ...base, filters: [{ field: 'probability', op: 'equals', value: '1 or 1=1' }] }],
    ['value huge integer', { ...base, filters: [{ field: 'probability', op: 'equals', value: 1e300 }] }],
    ['value huge decimal', { ...base, filters: [{ field: 'amount', op: 'equals', value: '9'.repeat(40) }] }],
    ['value date', { ...base, filters: [{ field: 'expectedCloseDate', op: 'lt', value: "2026-01-01'::date or true --" }] }],
    ['value uuid', { ...base, filters: [{ field: 'customerId', op: 'equals', value: "x' or '1'='1" }] }],
    ['value enum', { ...base, filters: [{ field: 'stage', op: 'equals', value: "won' or '1'='1" }] }],
    ['value NUL', { ...base, filters: [{ field: 'name', op: 'equals', value: 'a\u0000b' }] }],
    ['value object', { ...base, filters: [{ field: 'name', op: 'equals', value: { $ne: null } }] }],
    ['value too long', { ...base, filters: [{ field: 'name', op: 'equals', value: 'x'.repeat(1001) }] }],
    ['values too many', { ...base, filters: [{ field: 'name', op: 'in', values: Array.from({ length: 101 }, (_, i) => `v${i}`) }] }],
    ['values empty', { ...base, filters: [{ field: 'name', op: 'in', values: [] }] }],
    ['values for one', { ...base, filters: [{ field: 'name', op: 'equals', values: ['x'] }] }],
    ['contains on a number', { ...base, filters: [{ field: 'amount', op: 'contains', value: '1' }] }],
    ['order', { ...base, order: [{ by: 'count; drop table x' }] }],
    ['order unknown column', { ...base, order: [{ by: 'amount' }] }],
    ['order dir', { ...base, order: [{ by: 'count', dir: 'desc; drop' }] }],
    ['limit', { ...base, limit: '1; drop table x' }],
    ['limit huge', { ...base, limit: 1e9 }],
    ['offset negative', { ...base, offset: -1 }],
    ['unknown property', { ...base, sql: 'select 1' }],
    ['nothing asked', { table: 'Opportunity' }],
    ['a column twice', { ...base, dimensions: ['stage'], measures: [{ agg: 'count', name: 'stage' }] }],
  ];
  for (const [what, query] of attempts) {
    for (const res of [await crm.api('POST', '/api/bi/analytics', query as object), await crm.api('GET', `/api/bi/analytics?query=${encodeURIComponent(JSON.stringify(query))}`)]) {
      t.equal(res.statusCode, 400, `${what}: 400 (${res.json().detail ?? ''})`);
      t.equal(res.json().code, 'VALIDATION_FAILED', `${what}: code`);
    }
  }
  // an entity that exists but the caller may not read is refused as its own routes refuse it
  expectProblem(t, await crm.api('POST', '/api/bi/analytics', count('Role')), 403, 'FORBIDDEN', 'an entity they may not read');
  // the table still holds its rows
  t.same(expectStatus(await crm.api('POST', '/api/bi/analytics', count('Opportunity')), 200, 'after').rows, [{ count: 2 }]);
});
