// Request helpers the CRM tests share (not a test file: tap runs *.test.ts only).
import type { TestContext } from '../../helper.ts';
import { apiAs, expectStatus } from '../core/core-api.ts';

export { expectProblem, expectStatus, UNKNOWN_ID } from '../core/core-api.ts';

export function crmApi(ctx: TestContext, token: string) {
  const api = apiAs(ctx, token);
  let seq = 0;
  const make =
    (path: string, defaults: () => Record<string, unknown>) =>
    async (body: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
      expectStatus(await api('POST', path, { ...defaults(), ...body }, headers), 201, `create ${path}`);
  return {
    api,
    next: () => ++seq,
    salesRep: make('/api/crm/salesreps', () => ({ name: `Rep ${++seq}` })),
    customer: make('/api/crm/customers', () => ({ name: `Customer ${++seq}` })),
    contact: make('/api/crm/contacts', () => ({ lastName: `Contact ${++seq}` })),
    lead: make('/api/crm/leads', () => ({ title: `Lead ${++seq}`, companyName: `Prospect ${seq}`, lastName: 'Doe' })),
    opportunity: make('/api/crm/opportunities', () => ({ name: `Deal ${++seq}` })),
    quote: make('/api/crm/quotes', () => ({ number: `Q-${++seq}` })),
    activity: make('/api/crm/activities', () => ({ type: 'call', subject: `Call ${++seq}` })),
    line: async (quoteId: string, body: Record<string, unknown> = {}) =>
      expectStatus(await api('POST', `/api/crm/quotes/${quoteId}/lines`, { description: `Item ${++seq}`, quantity: '1', unitPrice: '1.00', ...body }), 201, 'create line'),
  };
}
