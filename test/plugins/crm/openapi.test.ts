// Every CRM route of the seed (section 4.7) is in the generated OpenAPI
// document, item methods on item paths, with the problems it can answer.
import t from 'tap';
import { build } from '../../helper.ts';

const ctx = await build(t);
const doc = (await ctx.app.inject({ method: 'GET', url: '/api-docs/json' })).json();

t.test("the seed's CRM routes", async (t) => {
  const want: [string, string][] = [
    ['get', '/api/crm/customers/{customerId}/contacts'],
    ['get', '/api/crm/customers/{customerId}/opportunities'],
    ['get', '/api/crm/customers/{customerId}/activities'],
    ['post', '/api/crm/leads/{id}/convert'],
    ['get', '/api/crm/activity-logs'],
    ['get', '/api/crm/quotes/{quoteId}/lines'],
    ['post', '/api/crm/quotes/{quoteId}/lines'],
  ];
  for (const p of ['quotes/{quoteId}/lines/{lineId}', 'customers/{id}', 'leads/{id}', 'quotes/{id}', 'opportunities/{id}', 'activities/{id}', 'contacts/{id}', 'salesreps/{id}']) {
    for (const m of ['get', 'put', 'patch', 'delete']) want.push([m, `/api/crm/${p}`]);
  }
  t.same(
    want.filter(([m, p]) => !doc.paths[p]?.[m]).map(([m, p]) => `${m} ${p}`),
    [],
    'every route',
  );
  t.notOk(doc.paths['/api/crm/activity-logs'].post, 'the log is read-only');
  t.equal(doc.paths['/api/crm/quotes/{quoteId}/lines/{lineId}'].patch.operationId, 'crmUpdateQuoteLine');
  // one rule for the noun, the entity's: never the URL's "lines" or "salesreps"
  t.equal(doc.paths['/api/crm/quotes/{quoteId}/lines'].get.operationId, 'crmListQuoteLines');
  t.equal(doc.paths['/api/crm/quotes/{quoteId}/lines'].post.operationId, 'crmCreateQuoteLine');
  t.equal(doc.paths['/api/crm/salesreps'].get.operationId, 'crmListSalesReps');
  t.equal(doc.paths['/api/crm/salesreps'].post.operationId, 'crmCreateSalesRep');
  const convert = doc.paths['/api/crm/leads/{id}/convert'].post;
  t.ok(
    convert.parameters.some((p: { in: string; name: string }) => p.in === 'header' && p.name === 'x-company-id'),
    'the conversion honours X-Company-Id, and says so',
  );
  t.ok(convert.responses['201'].headers.Location, 'the conversion declares the Location of the customer');
  t.notMatch(convert.responses['201'].description, /Default Response/);
  t.ok(doc.paths['/api/crm/quotes/{id}'].patch.responses['422'], 'transitions document 422');
  t.match(doc.paths['/api/crm/quotes/{id}'].patch.responses['409'].description, /STATE_LOCKED/);
  t.notOk('total' in doc.components.schemas.CrmQuotePatch.properties, 'totals are read-only');
  t.notOk('quoteId' in doc.components.schemas.CrmQuoteLineCreate.properties, 'the quote comes from the path');
  t.ok('netAmount' in doc.components.schemas.CrmQuoteLine.properties);
  const params = doc.paths['/api/crm/opportunities'].get.parameters.map((p: { name: string }) => p.name);
  for (const n of ['ownerId', 'customerId', 'stage', 'expectedCloseDateFrom', 'expectedCloseDateTo', 'search']) t.ok(params.includes(n), n);
});
