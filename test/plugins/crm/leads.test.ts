// /api/crm/leads: the status flow, and POST /api/crm/leads/:id/convert, which
// makes the customer, its contact and (if asked) an opportunity in one
// transaction: twice is a 409, a failure part-way leaves nothing behind.
import t from 'tap';
import { build } from '../../helper.ts';
import { crmApi, expectProblem, expectStatus, UNKNOWN_ID } from './crm-api.ts';

const ctx = await build(t);
const tenant = await ctx.tenant();
const { api, lead, salesRep } = crmApi(ctx, tenant.adminToken);
const rep = await salesRep();
const count = async (path: string) => expectStatus(await api('GET', `${path}${path.includes('?') ? '&' : '?'}size=1000`), 200, path).total as number;

t.test('create, read, change, list and delete', async (t) => {
  const l = await lead({ email: 'ann@prospect.test', estimatedValue: '1200.5', ownerId: rep.id, source: 'web' });
  t.match(l, { status: 'new', estimatedValue: '1200.50', currency: 'EUR', ownerId: rep.id, customerId: null, convertedAt: null });
  t.equal(expectStatus(await api('GET', `/api/crm/leads/${l.id}`), 200, 'read').id, l.id);
  t.equal(expectStatus(await api('GET', `/api/crm/leads?ownerId=${rep.id}&status=new&search=ann@`), 200, 'filtered').total, 1);
  t.equal(expectStatus(await api('GET', `/api/crm/leads?ownerId=${rep.id}&estimatedValueFrom=2000`), 200, 'range').total, 0);
  expectProblem(t, await api('POST', '/api/crm/leads', { title: 'x', companyName: 'y' }), 400, 'VALIDATION_FAILED', 'last name required');
  expectProblem(t, await api('POST', '/api/crm/leads', { title: 'x', companyName: 'y', lastName: 'z', customerId: UNKNOWN_ID }), 400, 'VALIDATION_FAILED', 'customerId is read-only');
  expectProblem(t, await api('POST', '/api/crm/leads', { title: 'x', companyName: 'y', lastName: 'z', ownerId: UNKNOWN_ID }), 400, 'VALIDATION_FAILED', 'unknown owner');
  expectProblem(t, await api('PUT', `/api/crm/leads/${l.id}`, { title: 'only' }), 400, 'VALIDATION_FAILED', 'PUT needs every field');
  expectProblem(t, await api('PATCH', `/api/crm/leads/${l.id}`, { title: 'x' }, { 'if-match': '"9"' }), 412, 'PRECONDITION_FAILED');
  expectProblem(t, await api('GET', `/api/crm/leads/${UNKNOWN_ID}`), 404, 'NOT_FOUND');
  expectProblem(t, await api('GET', '/api/crm/leads/nope'), 400, 'VALIDATION_FAILED');
  expectProblem(t, await api('DELETE', '/api/crm/leads'), 405, 'METHOD_NOT_ALLOWED');
  t.equal((await api('DELETE', `/api/crm/leads/${l.id}`)).statusCode, 204);
});

t.test('status flow', async (t) => {
  const l = await lead();
  expectProblem(t, await api('POST', '/api/crm/leads', { title: 'x', companyName: 'y', lastName: 'z', status: 'qualified' }), 422, 'INVALID_TRANSITION', 'a lead starts new');
  expectStatus(await api('PATCH', `/api/crm/leads/${l.id}`, { status: 'contacted' }), 200, 'contacted');
  expectProblem(t, await api('PATCH', `/api/crm/leads/${l.id}`, { status: 'new' }), 422, 'INVALID_TRANSITION', 'no way back');
  expectProblem(t, await api('PATCH', `/api/crm/leads/${l.id}`, { status: 'converted' }), 422, 'INVALID_TRANSITION', 'converted only by conversion');
  expectStatus(await api('PATCH', `/api/crm/leads/${l.id}`, { status: 'lost' }), 200, 'lost');
  expectProblem(t, await api('POST', `/api/crm/leads/${l.id}/convert`, {}), 422, 'INVALID_TRANSITION', 'a lost lead is not converted');
  expectStatus(await api('PATCH', `/api/crm/leads/${l.id}`, { status: 'new' }), 200, 'reopened');
});

t.test('conversion: customer, contact, opportunity in one go', async (t) => {
  const l = await lead({ companyName: 'Acme Ltd', firstName: 'Ann', lastName: 'Lee', email: 'ann@acme.test', phone: '+1 555', estimatedValue: '5000.00', currency: 'USD', ownerId: rep.id });
  expectStatus(await api('PATCH', `/api/crm/leads/${l.id}`, { status: 'qualified' }), 200, 'qualified');
  const res = await api('POST', `/api/crm/leads/${l.id}/convert`, { opportunity: { expectedCloseDate: '2030-06-30', probability: 40 } });
  t.equal(res.statusCode, 201, res.body);
  const out = res.json();
  t.equal(res.headers.location, `/api/crm/customers/${out.customer.id}`);
  t.match(out.customer, { name: 'Acme Ltd', currency: 'USD', email: 'ann@acme.test', ownerId: rep.id, status: 'active' });
  t.match(out.contact, { customerId: out.customer.id, firstName: 'Ann', lastName: 'Lee', isPrimary: true });
  t.match(out.opportunity, { customerId: out.customer.id, name: l.title, amount: '5000.00', currency: 'USD', probability: 40, expectedCloseDate: '2030-06-30', ownerId: rep.id });
  t.match(out.lead, { status: 'converted', customerId: out.customer.id, contactId: out.contact.id, opportunityId: out.opportunity.id });
  t.match(out.lead.convertedAt, /^\d{4}-/);
  t.match(expectStatus(await api('GET', `/api/crm/leads/${l.id}`), 200, 'read'), { status: 'converted', customerId: out.customer.id });
  t.equal(expectStatus(await api('GET', `/api/crm/customers/${out.customer.id}/contacts`), 200, 'contacts').total, 1);
  t.equal(expectStatus(await api('GET', `/api/crm/customers/${out.customer.id}/opportunities`), 200, 'opportunities').total, 1);

  expectProblem(t, await api('POST', `/api/crm/leads/${l.id}/convert`, {}), 409, 'CONFLICT', 'converting twice');
  expectProblem(t, await api('PATCH', `/api/crm/leads/${l.id}`, { title: 'changed' }), 409, 'STATE_LOCKED', 'a converted lead is final');
  expectProblem(t, await api('DELETE', `/api/crm/leads/${l.id}`), 409, 'STATE_LOCKED');

  const plain = await lead({ companyName: 'Solo' });
  const solo = expectStatus(await api('POST', `/api/crm/leads/${plain.id}/convert`, { customer: { name: 'Solo GmbH', code: 'SOLO' } }), 201, 'without opportunity');
  t.match(solo, { customer: { name: 'Solo GmbH', code: 'SOLO' }, opportunity: null, lead: { opportunityId: null } });
});

t.test('conversion is atomic: a failure after the customer insert leaves nothing', async (t) => {
  const l = await lead({ companyName: 'Atomic Inc' });
  const before = { customers: await count('/api/crm/customers'), contacts: await count('/api/crm/contacts'), logs: await count('/api/crm/activity-logs') };
  // the opportunity's owner exists nowhere: found only after customer and contact were written
  const res = await api('POST', `/api/crm/leads/${l.id}/convert`, { opportunity: { name: 'Deal', ownerId: UNKNOWN_ID } });
  expectProblem(t, res, 400, 'VALIDATION_FAILED', 'the opportunity fails');
  t.same({ customers: await count('/api/crm/customers'), contacts: await count('/api/crm/contacts'), logs: await count('/api/crm/activity-logs') }, before, 'no customer, contact or log entry left');
  t.equal(expectStatus(await api('GET', `/api/crm/customers?search=Atomic`), 200, 'search').total, 0);
  t.match(expectStatus(await api('GET', `/api/crm/leads/${l.id}`), 200, 'lead'), { status: 'new', customerId: null, version: 1 });
  // a duplicate customer code fails at the database, after the insert was sent
  const first = await lead({ companyName: 'Dup one' });
  expectStatus(await api('POST', `/api/crm/leads/${first.id}/convert`, { customer: { code: 'DUP' } }), 201, 'first');
  const second = await lead({ companyName: 'Dup two' });
  expectProblem(t, await api('POST', `/api/crm/leads/${second.id}/convert`, { customer: { code: 'DUP' } }), 409, 'CONFLICT', 'unique customer code');
  t.equal(expectStatus(await api('GET', `/api/crm/customers?search=Dup two`), 200, 'search').total, 0);
  t.equal(expectStatus(await api('GET', `/api/crm/leads/${second.id}`), 200, 'lead').status, 'new');
  // now it works: the good path was never blocked by the failed attempts
  t.equal((await api('POST', `/api/crm/leads/${l.id}/convert`, {})).statusCode, 201);
});

t.test('conversion: bad input, access, other tenants and companies', async (t) => {
  const l = await lead();
  expectProblem(t, await api('POST', `/api/crm/leads/${UNKNOWN_ID}/convert`, {}), 404, 'NOT_FOUND');
  expectProblem(t, await api('POST', '/api/crm/leads/nope/convert', {}), 400, 'VALIDATION_FAILED');
  expectProblem(t, await api('POST', `/api/crm/leads/${l.id}/convert`, { bogus: 1 }), 400, 'VALIDATION_FAILED');
  expectProblem(t, await api('POST', `/api/crm/leads/${l.id}/convert`, { opportunity: { amount: 12.5 } }), 400, 'VALIDATION_FAILED');
  const viewer = crmApi(ctx, (await ctx.user(tenant, { codes: ['erp:crm:view'] })).token).api;
  expectProblem(t, await viewer('POST', `/api/crm/leads/${l.id}/convert`, {}), 403, 'FORBIDDEN', 'view only');
  expectProblem(t, await ctx.app.inject({ method: 'POST', url: `/api/crm/leads/${l.id}/convert`, payload: {} }), 401, 'UNAUTHENTICATED');
  const other = crmApi(ctx, (await ctx.tenant()).adminToken).api;
  expectProblem(t, await other('POST', `/api/crm/leads/${l.id}/convert`, {}), 404, 'NOT_FOUND', 'another tenant');
  const second = await ctx.company(tenant, 'C2');
  const both = await ctx.user(tenant, { codes: ['erp:crm:manage'], companies: [tenant.companyId, second] });
  expectProblem(t, await crmApi(ctx, both.token).api('POST', `/api/crm/leads/${l.id}/convert`, {}, { 'x-company-id': second }), 404, 'NOT_FOUND', 'another company');
  t.equal(expectStatus(await api('GET', `/api/crm/leads/${l.id}`), 200, 'lead').status, 'new');
});
