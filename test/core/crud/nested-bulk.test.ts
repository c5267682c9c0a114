// Bulk writes on a nested route (POST /api/crm/quotes/:quoteId/lines/bulk): the
// parent comes from the path (never the body) and must be readable (else 404,
// whatever the body holds); each row recomputes the parent's sums, as a single
// line write does; a locked parent refuses every row.
import t from 'tap';
import { build } from '../../helper.ts';
import { crmApi, expectProblem, expectStatus, UNKNOWN_ID } from '../../plugins/crm/crm-api.ts';

const ctx = await build(t);
const tenant = await ctx.tenant();
const crm = crmApi(ctx, tenant.adminToken);
const { api, line } = crm;
const customer = await crm.customer();
const quote = () => crm.quote({ customerId: customer.id });
const bulk = (quoteId: string, payload: unknown, token = tenant.adminToken) => ctx.as(token, { method: 'POST', url: `/api/crm/quotes/${quoteId}/lines/bulk`, payload: payload as object });

t.test('lines in bulk add up on their quote', async (t) => {
  const q = await quote();
  const old = await line(q.id, { quantity: '1', unitPrice: '5.00' });
  const res = await bulk(q.id, {
    create: [
      { description: 'A', quantity: '2', unitPrice: '1.50' },
      { description: 'B', quantity: '1', unitPrice: '10.00' },
    ],
    update: [{ id: old.id, version: old.version, unitPrice: '6.00' }],
  });
  const body = expectStatus(res, 200, 'bulk lines');
  t.same(
    body.created.map((l: { quoteId: string; netAmount: string }) => [l.quoteId, l.netAmount]),
    [
      [q.id, '3.00'],
      [q.id, '10.00'],
    ],
  );
  t.match(expectStatus(await api('GET', `/api/crm/quotes/${q.id}`), 200, 'quote'), { subtotal: '19.00' });
});

t.test('the parent is the path: a body naming it, another quote or an unknown one fail', async (t) => {
  const q = await quote();
  const other = await quote();
  const foreign = await line(other.id);
  expectProblem(t, await bulk(q.id, { create: [{ description: 'x', quantity: '1', unitPrice: '1.00', quoteId: other.id }] }), 400, 'VALIDATION_FAILED', 'quoteId in a body');
  const res = await bulk(q.id, { update: [{ id: foreign.id, unitPrice: '2.00' }], delete: [{ id: foreign.id }] });
  expectProblem(t, res, 422, 'BULK_FAILED', "another quote's line");
  t.same(
    res.json().failures.map((f: { status: number }) => f.status),
    [404, 404],
  );
  expectProblem(t, await bulk(UNKNOWN_ID, { delete: [{ id: foreign.id }] }), 404, 'NOT_FOUND', 'unknown quote');
  expectProblem(t, await bulk(UNKNOWN_ID, { delete: [{ nope: 1 }] }), 404, 'NOT_FOUND', 'unknown quote, whatever the body');
  expectProblem(t, await bulk('nope', { delete: [{ id: foreign.id }] }), 400, 'VALIDATION_FAILED', 'no UUID in the path');
  const stranger = await ctx.tenant();
  expectProblem(t, await bulk(q.id, { create: [{ description: 'x', quantity: '1', unitPrice: '1.00' }] }, stranger.adminToken), 404, 'NOT_FOUND', 'another tenant');
  t.equal(expectStatus(await api('GET', `/api/crm/quotes/${other.id}/lines`), 200, 'lines').total, 1, 'nothing changed');
});
