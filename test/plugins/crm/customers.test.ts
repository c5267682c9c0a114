// Customers, contacts, opportunities, activities and sales representatives:
// CRUD, the customer's sub-resources, list filters, permissions, and
// isolation across tenants and companies.
import t from 'tap';
import { build } from '../../helper.ts';
import { crmApi, expectProblem, expectStatus, UNKNOWN_ID } from './crm-api.ts';

const ctx = await build(t);
const tenant = await ctx.tenant();
const crm = crmApi(ctx, tenant.adminToken);
const { api } = crm;
const ids = (page: { items: { id: string }[] }) => page.items.map((i) => i.id);

t.test('every collection: create, read, PUT, PATCH, delete, 405 on the collection', async (t) => {
  const rep = await crm.salesRep({ email: 'rep@x.test', region: 'North' });
  const cust = await crm.customer({ ownerId: rep.id, city: 'Berlin', country: 'DE' });
  const cases: [string, Record<string, unknown>, Record<string, unknown>][] = [
    ['/api/crm/salesreps', { name: 'R' }, { region: 'South' }],
    ['/api/crm/customers', { name: 'C', ownerId: rep.id }, { status: 'inactive' }],
    ['/api/crm/contacts', { lastName: 'L', customerId: cust.id }, { position: 'CEO' }],
    ['/api/crm/opportunities', { name: 'O', customerId: cust.id, amount: '10.00' }, { stage: 'proposal' }],
    ['/api/crm/activities', { type: 'meeting', subject: 'S', customerId: cust.id, dueDate: '2030-01-01' }, { status: 'done' }],
  ];
  for (const [path, body, patch] of cases) {
    const res = await api('POST', path, body);
    t.equal(res.statusCode, 201, `${path} ${res.body}`);
    const row = res.json();
    t.equal(res.headers.location, `${path}/${row.id}`);
    t.equal(row.companyId, tenant.companyId);
    t.equal(expectStatus(await api('GET', `${path}/${row.id}`), 200, `read ${path}`).id, row.id);
    t.match(expectStatus(await api('PATCH', `${path}/${row.id}`, patch, { 'if-match': '"1"' }), 200, `patch ${path}`), { ...patch, version: 2 });
    expectProblem(t, await api('PUT', `${path}/${row.id}`, body), 400, 'VALIDATION_FAILED', `${path} PUT needs every field`);
    expectProblem(t, await api('PUT', path, body), 405, 'METHOD_NOT_ALLOWED', `PUT ${path}`);
    expectProblem(t, await api('DELETE', path), 405, 'METHOD_NOT_ALLOWED', `DELETE ${path}`);
    expectProblem(t, await api('POST', path, { ...body, bogus: 1 }), 400, 'VALIDATION_FAILED', `${path} unknown field`);
    expectProblem(t, await api('GET', `${path}/${UNKNOWN_ID}`), 404, 'NOT_FOUND');
    expectProblem(t, await api('GET', `${path}?bogus=1`), 400, 'VALIDATION_FAILED');
    t.equal((await api('DELETE', `${path}/${row.id}`)).statusCode, 204, `delete ${path}`);
  }
  const put = expectStatus(await api('PUT', `/api/crm/salesreps/${rep.id}`, { name: 'Rep', email: null, phone: null, region: null, userId: null, isActive: false }), 200, 'put');
  t.match(put, { name: 'Rep', email: null, isActive: false });
  expectProblem(t, await api('DELETE', `/api/crm/salesreps/${rep.id}`), 409, 'CONFLICT', 'a rep who owns a customer');
});

t.test('bad input', async (t) => {
  const cust = await crm.customer();
  const bad: [string, Record<string, unknown>][] = [
    ['/api/crm/customers', { name: 'x', country: 'Germany' }],
    ['/api/crm/customers', { name: 'x', currency: 'eur' }],
    ['/api/crm/customers', { name: 'x', ownerId: UNKNOWN_ID }],
    ['/api/crm/contacts', { lastName: 'x' }],
    ['/api/crm/contacts', { lastName: 'x', customerId: cust.id, email: 'no-at' }],
    ['/api/crm/opportunities', { name: 'x', customerId: cust.id, amount: 10 }],
    ['/api/crm/opportunities', { name: 'x', customerId: cust.id, probability: 101 }],
    ['/api/crm/opportunities', { name: 'x', customerId: cust.id, stage: 'closed' }],
    ['/api/crm/opportunities', { name: 'x', customerId: cust.id, expectedCloseDate: '2030-02-30' }],
    ['/api/crm/activities', { type: 'fax', subject: 'x' }],
    ['/api/crm/activities', { type: 'call' }],
    ['/api/crm/activities', { type: 'call', subject: 'x', leadId: UNKNOWN_ID }],
    ['/api/crm/salesreps', { name: '' }],
  ];
  for (const [path, body] of bad) expectProblem(t, await api('POST', path, body), 400, 'VALIDATION_FAILED', `${path} ${JSON.stringify(body)}`);
  expectProblem(t, await api('POST', '/api/crm/customers', { name: 'a', code: 'SAME' }).then(() => api('POST', '/api/crm/customers', { name: 'b', code: 'SAME' })), 409, 'CONFLICT', 'unique code');
});

t.test("a customer's contacts, opportunities and activities", async (t) => {
  const a = await crm.customer();
  const b = await crm.customer();
  const contact = await crm.contact({ customerId: a.id, lastName: 'Zed', firstName: 'Ann' });
  await crm.contact({ customerId: b.id });
  const opp = await crm.opportunity({ customerId: a.id, amount: '100.00', expectedCloseDate: '2030-05-01' });
  const act = await crm.activity({ customerId: a.id, contactId: contact.id, dueDate: '2030-04-01' });
  await crm.activity({ customerId: b.id });
  t.same(ids(expectStatus(await api('GET', `/api/crm/customers/${a.id}/contacts`), 200, 'contacts')), [contact.id]);
  t.same(ids(expectStatus(await api('GET', `/api/crm/customers/${a.id}/opportunities`), 200, 'opportunities')), [opp.id]);
  t.same(ids(expectStatus(await api('GET', `/api/crm/customers/${a.id}/activities`), 200, 'activities')), [act.id]);
  t.same(ids(expectStatus(await api('GET', `/api/crm/customers/${a.id}/contacts?search=zed`), 200, 'search')), [contact.id]);
  expectProblem(t, await api('GET', `/api/crm/customers/${UNKNOWN_ID}/contacts`), 404, 'NOT_FOUND');
  expectProblem(t, await api('GET', '/api/crm/customers/nope/activities'), 400, 'VALIDATION_FAILED');
  expectProblem(t, await api('POST', `/api/crm/customers/${a.id}/contacts`, {}), 405, 'METHOD_NOT_ALLOWED');
  expectProblem(t, await api('DELETE', `/api/crm/customers/${a.id}`), 409, 'CONFLICT', 'a customer with contacts');
  expectProblem(t, await api('POST', '/api/crm/activities', { type: 'call', subject: 'orphan' }), 400, 'VALIDATION_FAILED', 'an activity linked to nothing');
  expectProblem(t, await api('PATCH', `/api/crm/activities/${act.id}`, { customerId: null }), 400, 'VALIDATION_FAILED', 'unlinking the last link');
  const lead = await crm.lead();
  t.match(expectStatus(await api('PATCH', `/api/crm/activities/${act.id}`, { customerId: null, leadId: lead.id }), 200, 'moved to a lead'), { customerId: null, leadId: lead.id });
});

t.test('list filters a sales user expects', async (t) => {
  const rep = await crm.salesRep();
  const cust = await crm.customer({ ownerId: rep.id, name: 'Filter Works' });
  const o1 = await crm.opportunity({ customerId: cust.id, ownerId: rep.id, stage: 'proposal', amount: '500.00', expectedCloseDate: '2031-01-15' });
  const o2 = await crm.opportunity({ customerId: cust.id, ownerId: rep.id, amount: '50.00', expectedCloseDate: '2031-03-15' });
  const q = (url: string) => api('GET', url).then((r) => ids(expectStatus(r, 200, url)));
  t.same(await q(`/api/crm/opportunities?ownerId=${rep.id}&sort=expectedCloseDate`), [o1.id, o2.id]);
  t.same(await q(`/api/crm/opportunities?ownerId=${rep.id}&stage=proposal`), [o1.id]);
  t.same(await q(`/api/crm/opportunities?customerId=${cust.id}&expectedCloseDateFrom=2031-02-01`), [o2.id]);
  t.same(await q(`/api/crm/opportunities?customerId=${cust.id}&amountFrom=100&amountTo=1000`), [o1.id]);
  t.same(await q(`/api/crm/opportunities?customerId=${cust.id}&sort=-amount`), [o1.id, o2.id]);
  t.same(await q(`/api/crm/customers?ownerId=${rep.id}&search=filter%20w`), [cust.id]);
  const a1 = await crm.activity({ customerId: cust.id, ownerId: rep.id, type: 'task', dueDate: '2031-01-01' });
  await crm.activity({ opportunityId: o2.id, ownerId: rep.id, type: 'email', dueDate: '2031-06-01' });
  t.same(await q(`/api/crm/activities?ownerId=${rep.id}&type=task`), [a1.id]);
  t.same(await q(`/api/crm/activities?ownerId=${rep.id}&dueDateTo=2031-02-01`), [a1.id]);
  expectProblem(t, await api('GET', '/api/crm/opportunities?expectedCloseDateFrom=soon'), 400, 'VALIDATION_FAILED');
  expectProblem(t, await api('GET', '/api/crm/opportunities?sort=description'), 400, 'VALIDATION_FAILED');
});

t.test('permissions: erp:crm:view reads, erp:crm:manage writes', async (t) => {
  const cust = await crm.customer();
  const viewer = crmApi(ctx, (await ctx.user(tenant, { codes: ['erp:crm:view'] })).token).api;
  for (const url of [
    '/api/crm/customers',
    `/api/crm/customers/${cust.id}`,
    `/api/crm/customers/${cust.id}/contacts`,
    '/api/crm/leads',
    '/api/crm/quotes',
    '/api/crm/opportunities',
    '/api/crm/activities',
    '/api/crm/contacts',
    '/api/crm/salesreps',
    '/api/crm/activity-logs',
  ]) {
    t.equal((await viewer('GET', url)).statusCode, 200, `viewer GET ${url}`);
  }
  expectProblem(t, await viewer('POST', '/api/crm/customers', { name: 'x' }), 403, 'FORBIDDEN');
  expectProblem(t, await viewer('PATCH', `/api/crm/customers/${cust.id}`, { name: 'x' }), 403, 'FORBIDDEN');
  expectProblem(t, await viewer('DELETE', `/api/crm/customers/${cust.id}`), 403, 'FORBIDDEN');
  const stranger = crmApi(ctx, (await ctx.user(tenant, { codes: ['erp:catalog:view'] })).token).api;
  for (const url of ['/api/crm/customers', `/api/crm/customers/${cust.id}/activities`, '/api/crm/activity-logs']) expectProblem(t, await stranger('GET', url), 403, 'FORBIDDEN', url);
  expectProblem(t, await ctx.app.inject({ method: 'GET', url: '/api/crm/customers' }), 401, 'UNAUTHENTICATED');
  const manager = crmApi(ctx, (await ctx.user(tenant, { codes: ['erp:crm:manage'] })).token).api;
  t.equal((await manager('POST', '/api/crm/customers', { name: 'by a manager' })).statusCode, 201);
  expectProblem(t, await manager('POST', '/api/crm/activity-logs', { entity: 'x' }), 405, 'METHOD_NOT_ALLOWED', 'the log is read-only');
});

t.test('isolation: other tenants and other companies', async (t) => {
  const cust = await crm.customer({ name: 'Mine only' });
  const other = crmApi(ctx, (await ctx.tenant()).adminToken).api;
  expectProblem(t, await other('GET', `/api/crm/customers/${cust.id}`), 404, 'NOT_FOUND');
  expectProblem(t, await other('GET', `/api/crm/customers/${cust.id}/contacts`), 404, 'NOT_FOUND');
  expectProblem(t, await other('PATCH', `/api/crm/customers/${cust.id}`, { name: 'x' }), 404, 'NOT_FOUND');
  t.equal(expectStatus(await other('GET', '/api/crm/customers?search=mine'), 200, 'list').total, 0);
  const second = await ctx.company(tenant, 'CRM2');
  const both = await ctx.user(tenant, { codes: ['erp:crm:manage'], companies: [tenant.companyId, second] });
  const inSecond = (m: Parameters<typeof api>[0], url: string, body?: object) => crmApi(ctx, both.token).api(m, url, body, { 'x-company-id': second });
  expectProblem(t, await inSecond('GET', `/api/crm/customers/${cust.id}`), 404, 'NOT_FOUND', 'another company');
  expectProblem(t, await inSecond('POST', '/api/crm/contacts', { lastName: 'x', customerId: cust.id }), 400, 'VALIDATION_FAILED', 'a customer of another company');
  const q = await crm.quote({ customerId: cust.id });
  expectProblem(t, await inSecond('GET', `/api/crm/quotes/${q.id}/lines`), 404, 'NOT_FOUND', "lines of another company's quote");
  expectProblem(t, await inSecond('POST', `/api/crm/quotes/${q.id}/lines`, { description: 'x', quantity: '1', unitPrice: '1.00' }), 404, 'NOT_FOUND');
  const theirs = expectStatus(await inSecond('POST', '/api/crm/customers', { name: 'Mine only too' }), 201, 'create in second');
  t.equal(theirs.companyId, second);
  t.same(ids(expectStatus(await api('GET', '/api/crm/customers?search=mine%20only'), 200, 'first company')), [cust.id]);
  const outsider = await ctx.user(tenant, { codes: ['erp:crm:manage'] });
  expectProblem(t, await crmApi(ctx, outsider.token).api('GET', '/api/crm/customers', undefined, { 'x-company-id': second }), 403, 'COMPANY_FORBIDDEN');
});
