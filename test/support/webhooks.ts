// A webhook made through the API as the tenant's administrator, with a fresh
// signing secret (returned beside the row: the API never shows it again).
import type { TestContext, TestTenant } from '../helper.ts';
import { generateSecret } from '../../plugins/core/webhooks/signature.ts';

export async function createWebhook(c: Pick<TestContext, 'as'>, tenant: TestTenant, body: { url: string } & Record<string, unknown>): Promise<Record<string, any> & { id: string; secret: string }> {
  const secret = generateSecret();
  const res = await c.as(tenant.adminToken, { method: 'POST', url: '/api/webhooks', payload: { events: ['*'], secret, ...body } });
  if (res.statusCode !== 201) throw new Error(`webhook: ${res.statusCode} ${res.body}`);
  return { ...res.json(), secret };
}
