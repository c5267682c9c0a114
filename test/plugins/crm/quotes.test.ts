// /api/crm/quotes and their lines at /api/crm/quotes/:quoteId/lines[/:lineId]:
// totals computed server-side in exact decimals, the status flow, and the lock
// an accepted quote puts on itself and its lines.
import t from 'tap';
import { build } from '../../helper.ts';
import { crmApi, expectProblem, expectStatus, UNKNOWN_ID } from './crm-api.ts';

const ctx = await build(t);
const tenant = await ctx.tenant();
const { api, customer, quote, line } = crmApi(ctx, tenant.adminToken);
const cust = await customer();

t.test('a quote starts as an empty draft in one currency', async (t) => {
  const q = await quote({ customerId: cust.id, currency: 'USD' });
  t.match(q, { status: 'draft', currency: 'USD', subtotal: '0.00', taxTotal: '0.00', total: '0.00', version: 1 });
  expectProblem(t, await api('POST', '/api/crm/quotes', { number: 'Q-X', customerId: cust.id, total: '5.00' }), 400, 'VALIDATION_FAILED', 'totals are read-only');
  expectProblem(t, await api('POST', '/api/crm/quotes', { number: 'Q-Y', customerId: cust.id, status: 'sent' }), 422, 'INVALID_TRANSITION', 'created as draft only');
  expectProblem(t, await api('POST', '/api/crm/quotes', { number: 'Q-Z' }), 400, 'VALIDATION_FAILED', 'customer required');
  expectProblem(t, await api('POST', '/api/crm/quotes', { number: 'Q-Z', customerId: UNKNOWN_ID }), 400, 'VALIDATION_FAILED', 'unknown customer');
  expectProblem(t, await api('POST', '/api/crm/quotes', { number: q.number, customerId: cust.id }), 409, 'CONFLICT', 'numbers are unique');
});

t.test('line and quote totals: round half-up per line, sums of rounded lines', async (t) => {
  const q = await quote({ customerId: cust.id });
  const l1 = await line(q.id, { quantity: '3', unitPrice: '0.35', discount: '0.05', taxRate: '0.19' });
  // 3 × 0.35 × 0.95 = 0.9975 → 1.00; tax 0.19 → 0.19; total 1.19
  t.match(l1, { quoteId: q.id, quantity: '3.000', unitPrice: '0.35', discount: '0.0500', netAmount: '1.00', taxAmount: '0.19', lineTotal: '1.19' });
  // 0.1 + 0.2 as floats is 0.30000000000000004: exact here; 1.005 rounds half-up to 1.01 (a float gives 1.00)
  const l2 = await line(q.id, { quantity: '1', unitPrice: '1.01', discount: '0.005', taxRate: '0.07' });
  t.match(l2, { netAmount: '1.00', taxAmount: '0.07', lineTotal: '1.07' }, '1.01 × 0.995 = 1.00495 → 1.00');
  const l3 = await line(q.id, { quantity: '0.5', unitPrice: '2.01', taxRate: '0.1' });
  t.match(l3, { netAmount: '1.01', taxAmount: '0.10', lineTotal: '1.11' }, '1.005 → 1.01; tax 0.101 → 0.10');
  let read = expectStatus(await api('GET', `/api/crm/quotes/${q.id}`), 200, 'read');
  t.match(read, { subtotal: '3.01', taxTotal: '0.36', total: '3.37' });

  const big = await line(q.id, { quantity: '123456.789', unitPrice: '98765.43', discount: '0.0001', taxRate: '0' });
  t.equal(big.netAmount, '12192043525.72', 'exact: 12192043525.719069573 rounded');
  expectProblem(
    t,
    await api('POST', `/api/crm/quotes/${q.id}/lines`, { description: 'x', quantity: '999999999.999', unitPrice: '9999999999.99' }),
    400,
    'VALIDATION_FAILED',
    'a net amount beyond its column',
  );
  expectStatus(await api('DELETE', `/api/crm/quotes/${q.id}/lines/${big.id}`), 204, 'delete big');

  const patched = expectStatus(await api('PATCH', `/api/crm/quotes/${q.id}/lines/${l1.id}`, { quantity: '10' }), 200, 'patch line');
  t.match(patched, { netAmount: '3.33', taxAmount: '0.63', lineTotal: '3.96', version: 2 }, '10 × 0.35 × 0.95 = 3.325 → 3.33');
  read = expectStatus(await api('GET', `/api/crm/quotes/${q.id}`), 200, 'read');
  t.match(read, { subtotal: '5.34', taxTotal: '0.80', total: '6.14' });
  expectProblem(t, await api('PATCH', `/api/crm/quotes/${q.id}/lines/${l1.id}`, { netAmount: '1.00' }), 400, 'VALIDATION_FAILED', 'computed fields are read-only');
  expectProblem(t, await api('PATCH', `/api/crm/quotes/${q.id}/lines/${l1.id}`, { quoteId: UNKNOWN_ID }), 400, 'VALIDATION_FAILED', 'a line stays on its quote');
  expectProblem(t, await api('PATCH', `/api/crm/quotes/${q.id}/lines/${l1.id}`, { discount: '1.5' }), 400, 'VALIDATION_FAILED', 'discount at most 1');
  expectProblem(t, await api('PATCH', `/api/crm/quotes/${q.id}/lines/${l1.id}`, { quantity: 2 }), 400, 'VALIDATION_FAILED', 'quantity as a number');

  const put = expectStatus(
    await api('PUT', `/api/crm/quotes/${q.id}/lines/${l2.id}`, { position: 2, sku: null, description: 'Replaced', quantity: '2', unitPrice: '10.00', discount: '0', taxRate: '0.19' }),
    200,
    'put line',
  );
  t.match(put, { netAmount: '20.00', taxAmount: '3.80', lineTotal: '23.80' });
  expectStatus(await api('DELETE', `/api/crm/quotes/${q.id}/lines/${l3.id}`), 204, 'delete line');
  read = expectStatus(await api('GET', `/api/crm/quotes/${q.id}`), 200, 'read');
  t.match(read, { subtotal: '23.33', taxTotal: '4.43', total: '27.76' });

  const lines = expectStatus(await api('GET', `/api/crm/quotes/${q.id}/lines?sort=position`), 200, 'lines');
  t.equal(lines.total, 2);
  const sums = lines.items.reduce((a: bigint[], l: Record<string, string>) => [a[0] + BigInt(l.netAmount.replace('.', '')), a[1] + BigInt(l.lineTotal.replace('.', ''))], [0n, 0n]);
  t.same(sums, [2333n, 2776n], 'the totals equal the sum of their lines');
});

t.test('line paths: the quote in the path scopes every line', async (t) => {
  const a = await quote({ customerId: cust.id });
  const b = await quote({ customerId: cust.id });
  const la = await line(a.id);
  const created = await api('POST', `/api/crm/quotes/${b.id}/lines`, { description: 'x', quantity: '1', unitPrice: '1.00' });
  t.equal(created.headers.location, `/api/crm/quotes/${b.id}/lines/${created.json().id}`);
  expectProblem(t, await api('GET', `/api/crm/quotes/${b.id}/lines/${la.id}`), 404, 'NOT_FOUND', 'a line of another quote');
  expectProblem(t, await api('PATCH', `/api/crm/quotes/${b.id}/lines/${la.id}`, { quantity: '2' }), 404, 'NOT_FOUND');
  expectProblem(t, await api('DELETE', `/api/crm/quotes/${b.id}/lines/${la.id}`), 404, 'NOT_FOUND');
  expectProblem(t, await api('GET', `/api/crm/quotes/${UNKNOWN_ID}/lines`), 404, 'NOT_FOUND', 'lines of no quote');
  expectProblem(t, await api('POST', `/api/crm/quotes/${UNKNOWN_ID}/lines`, { description: 'x', quantity: '1', unitPrice: '1.00' }), 404, 'NOT_FOUND', 'a line for no quote');
  expectProblem(t, await api('GET', '/api/crm/quotes/nope/lines'), 400, 'VALIDATION_FAILED');
  expectProblem(t, await api('PUT', `/api/crm/quotes/${a.id}/lines`, {}), 405, 'METHOD_NOT_ALLOWED', 'PUT on the collection');
  expectProblem(t, await api('DELETE', `/api/crm/quotes/${a.id}/lines`), 405, 'METHOD_NOT_ALLOWED', 'DELETE on the collection');
  expectProblem(t, await api('PUT', '/api/crm/quotes', {}), 405, 'METHOD_NOT_ALLOWED');
  t.match(expectStatus(await api('GET', `/api/crm/quotes/${a.id}/lines/${la.id}`), 200, 'read line'), { id: la.id, quoteId: a.id });
});

t.test('status flow: draft → sent → accepted | rejected | expired; accepted is locked', async (t) => {
  const q = await quote({ customerId: cust.id });
  const l = await line(q.id);
  expectProblem(t, await api('PATCH', `/api/crm/quotes/${q.id}`, { status: 'accepted' }), 422, 'INVALID_TRANSITION', 'draft → accepted');
  expectStatus(await api('PATCH', `/api/crm/quotes/${q.id}`, { status: 'sent' }), 200, 'send');
  expectProblem(t, await api('PATCH', `/api/crm/quotes/${q.id}`, { status: 'draft' }), 422, 'INVALID_TRANSITION', 'sent → draft');
  const accepted = expectStatus(await api('PATCH', `/api/crm/quotes/${q.id}`, { status: 'accepted', notes: 'signed' }), 200, 'accept');
  expectProblem(t, await api('PATCH', `/api/crm/quotes/${q.id}`, { notes: 'changed' }), 409, 'STATE_LOCKED', 'an accepted quote is not edited');
  expectProblem(t, await api('PATCH', `/api/crm/quotes/${q.id}`, { status: 'rejected' }), 422, 'INVALID_TRANSITION', 'accepted is final');
  expectProblem(t, await api('DELETE', `/api/crm/quotes/${q.id}`), 409, 'STATE_LOCKED', 'nor deleted');
  expectProblem(t, await api('POST', `/api/crm/quotes/${q.id}/lines`, { description: 'x', quantity: '1', unitPrice: '1.00' }), 409, 'STATE_LOCKED', 'no new line');
  expectProblem(t, await api('PATCH', `/api/crm/quotes/${q.id}/lines/${l.id}`, { quantity: '5' }), 409, 'STATE_LOCKED', 'no line change');
  expectProblem(t, await api('DELETE', `/api/crm/quotes/${q.id}/lines/${l.id}`), 409, 'STATE_LOCKED', 'no line removed');
  t.equal(expectStatus(await api('PATCH', `/api/crm/quotes/${q.id}`, { notes: 'signed' }), 200, 'an unchanged write').version, accepted.version, 'writing what is there changes nothing');

  const r = await quote({ customerId: cust.id });
  expectStatus(await api('PATCH', `/api/crm/quotes/${r.id}`, { status: 'sent' }), 200, 'send');
  expectStatus(await api('PATCH', `/api/crm/quotes/${r.id}`, { status: 'expired' }), 200, 'expire');
  expectProblem(t, await api('PATCH', `/api/crm/quotes/${r.id}`, { status: 'sent' }), 422, 'INVALID_TRANSITION', 'expired is final');
  expectProblem(t, await api('PATCH', `/api/crm/quotes/${r.id}`, { status: 'bogus' }), 400, 'VALIDATION_FAILED');
  const d = await quote({ customerId: cust.id });
  await line(d.id);
  t.equal((await api('DELETE', `/api/crm/quotes/${d.id}`)).statusCode, 204, 'a draft goes with its lines');
});

t.test('lists: status, customer, date range, totals, search', async (t) => {
  const other = await customer();
  const q1 = await quote({ customerId: other.id, validUntil: '2030-01-10', title: 'Winter offer' });
  const q2 = await quote({ customerId: other.id, validUntil: '2030-03-10' });
  await line(q2.id, { quantity: '2', unitPrice: '50.00' });
  const ids = (page: { items: { id: string }[] }) => page.items.map((i) => i.id);
  t.same(ids(expectStatus(await api('GET', `/api/crm/quotes?customerId=${other.id}&sort=validUntil`), 200, 'by customer')), [q1.id, q2.id]);
  t.same(ids(expectStatus(await api('GET', `/api/crm/quotes?customerId=${other.id}&validUntilFrom=2030-02-01&validUntilTo=2030-12-31`), 200, 'range')), [q2.id]);
  t.same(ids(expectStatus(await api('GET', `/api/crm/quotes?customerId=${other.id}&totalFrom=50`), 200, 'total')), [q2.id]);
  t.same(ids(expectStatus(await api('GET', '/api/crm/quotes?search=winter'), 200, 'search')), [q1.id]);
  t.ok(expectStatus(await api('GET', '/api/crm/quotes?status=draft&size=1000'), 200, 'status').total >= 2);
  expectProblem(t, await api('GET', '/api/crm/quotes?status=nope'), 400, 'VALIDATION_FAILED');
  expectProblem(t, await api('GET', '/api/crm/quotes?bogus=1'), 400, 'VALIDATION_FAILED');
});
