// GET /api/crm/activity-logs: the kernel records every create, update and
// delete of an audited entity (and a lead's conversion) in the write's own
// transaction: who, when, what, and the changed fields before and after.
import t from 'tap';
import { build } from '../../helper.ts';
import { crmApi, expectProblem, expectStatus, UNKNOWN_ID } from './crm-api.ts';

const ctx = await build(t);
const tenant = await ctx.tenant();
const crm = crmApi(ctx, tenant.adminToken);
const { api } = crm;
const logOf = async (entityId: string) => expectStatus(await api('GET', `/api/crm/activity-logs?entityId=${entityId}&sort=at&size=1000`), 200, 'log').items;

t.test('create, update and delete are recorded with their changes', async (t) => {
  const manager = await ctx.user(tenant, { codes: ['erp:crm:manage'] });
  const as = crmApi(ctx, manager.token).api;
  const c = expectStatus(await as('POST', '/api/crm/customers', { name: 'Logged', city: 'Oslo' }), 201, 'create');
  expectStatus(await as('PATCH', `/api/crm/customers/${c.id}`, { city: 'Bergen', phone: '+47' }), 200, 'update');
  expectStatus(await as('PATCH', `/api/crm/customers/${c.id}`, { city: 'Bergen' }), 200, 'no change');
  expectStatus(await as('DELETE', `/api/crm/customers/${c.id}`), 204, 'delete');
  const log = await logOf(c.id);
  t.same(
    log.map((e: { action: string }) => e.action),
    ['create', 'update', 'delete'],
    'a write that changed nothing is not recorded',
  );
  for (const e of log) t.match(e, { entity: 'Customer', entityId: c.id, userId: manager.id, companyId: tenant.companyId });
  t.match(log[0].changes, { name: { before: null, after: 'Logged' }, city: { before: null, after: 'Oslo' }, status: { before: null, after: 'active' } });
  t.same(log[1].changes, { city: { before: 'Oslo', after: 'Bergen' }, phone: { before: null, after: '+47' } });
  t.match(log[2].changes, { name: { before: 'Logged', after: null } });
  t.match(log[0].at, /^\d{4}-\d\d-\d\dT/);
});

t.test('quote lines record their computed amounts; a failed write records nothing', async (t) => {
  const cust = await crm.customer();
  const q = await crm.quote({ customerId: cust.id });
  const l = await crm.line(q.id, { quantity: '2', unitPrice: '3.00' });
  expectStatus(await api('PATCH', `/api/crm/quotes/${q.id}/lines/${l.id}`, { quantity: '3' }), 200, 'patch');
  const [, update] = await logOf(l.id);
  t.same(update.changes.quantity, { before: '2.000', after: '3.000' });
  t.same(update.changes.netAmount, { before: '6.00', after: '9.00' });
  expectProblem(t, await api('PATCH', `/api/crm/quotes/${q.id}`, { status: 'accepted' }), 422, 'INVALID_TRANSITION');
  t.equal((await logOf(q.id)).length, 1, 'only the create of the quote');
});

t.test('conversion is recorded as such', async (t) => {
  const lead = await crm.lead();
  const out = expectStatus(await api('POST', `/api/crm/leads/${lead.id}/convert`, {}), 201, 'convert');
  const log = await logOf(lead.id);
  t.same(
    log.map((e: { action: string }) => e.action),
    ['create', 'convert'],
  );
  t.match(log[1].changes, { status: { before: 'new', after: 'converted' }, customerId: { before: null, after: out.customer.id } });
  t.equal((await logOf(out.customer.id))[0].action, 'create');
  t.equal((await logOf(out.contact.id))[0].action, 'create');
});

t.test('filters, read-only, access and isolation', async (t) => {
  const rep = await crm.salesRep();
  const all = expectStatus(await api('GET', '/api/crm/activity-logs?entity=SalesRep&action=create&size=1000'), 200, 'by entity');
  t.ok(all.items.some((e: { entityId: string }) => e.entityId === rep.id));
  t.ok(all.items.every((e: { entity: string }) => e.entity === 'SalesRep'));
  const admin = (await ctx.app.inject({ method: 'GET', url: '/api/auth/me', headers: { authorization: `Bearer ${tenant.adminToken}` } })).json();
  const mine = expectStatus(await api('GET', `/api/crm/activity-logs?userId=${admin.user?.id ?? admin.id}&entityId=${rep.id}`), 200, 'by user');
  t.equal(mine.total, 1);
  const first = (await logOf(rep.id))[0];
  t.equal(expectStatus(await api('GET', `/api/crm/activity-logs/${first.id}`), 200, 'read').id, first.id);
  t.equal(expectStatus(await api('GET', `/api/crm/activity-logs?entityId=${rep.id}&atFrom=2000-01-01T00:00:00Z&atTo=2999-01-01T00:00:00Z`), 200, 'range').total, 1);
  t.equal(expectStatus(await api('GET', `/api/crm/activity-logs?entityId=${rep.id}&atTo=2000-01-01T00:00:00Z`), 200, 'range').total, 0);
  expectProblem(t, await api('GET', '/api/crm/activity-logs?atFrom=yesterday'), 400, 'VALIDATION_FAILED');
  expectProblem(t, await api('POST', '/api/crm/activity-logs', { entity: 'x' }), 405, 'METHOD_NOT_ALLOWED');
  expectProblem(t, await api('PATCH', `/api/crm/activity-logs/${first.id}`, { entity: 'x' }), 405, 'METHOD_NOT_ALLOWED');
  expectProblem(t, await api('DELETE', `/api/crm/activity-logs/${first.id}`), 405, 'METHOD_NOT_ALLOWED');
  expectProblem(t, await api('GET', `/api/crm/activity-logs/${UNKNOWN_ID}`), 404, 'NOT_FOUND');
  const other = crmApi(ctx, (await ctx.tenant()).adminToken).api;
  expectProblem(t, await other('GET', `/api/crm/activity-logs/${first.id}`), 404, 'NOT_FOUND', 'another tenant');
  const second = await ctx.company(tenant, 'LOG2');
  const both = await ctx.user(tenant, { codes: ['erp:crm:view'], companies: [tenant.companyId, second] });
  t.equal(expectStatus(await crmApi(ctx, both.token).api('GET', `/api/crm/activity-logs?entityId=${rep.id}`, undefined, { 'x-company-id': second }), 200, 'other company').total, 0);
});
