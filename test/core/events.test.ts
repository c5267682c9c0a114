// Events end to end: every write's event in the outbox of its transaction (a
// rollback leaves none), dispatched to the webhooks subscriber, delivered to a
// receiver on loopback with Standard Webhooks signatures an independent
// implementation verifies, retried with backoff, dead-lettered, a failing
// webhook switched off; pings and replays; SSRF refusals.
import t from 'tap';
import { Webhook } from 'standardwebhooks';
import { build, type TestContext, type TestTenant } from '../helper.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { generateSecret } from '../../plugins/core/webhooks/signature.ts';
import { SYSTEM } from '../../core/access/principal.ts';

const log = { error: (o: unknown, m?: string) => console.error(m, o), warn: () => {} };
const ctx = await build(t, {
  config: {
    workers: true,
    outbound: { allowPrivate: true, timeoutMs: 2000, maxResponseBytes: 4096 },
    events: { pollMs: 20, batchSize: 500, perTenant: 100, tenantConcurrency: 5, retentionDays: 7, retryDelaySeconds: 1 },
  },
});
await ctx.kernel.startWorkers(log);
const receiver = await startReceiver();
t.teardown(() => receiver.close());

async function webhook(c: TestContext, tenant: TestTenant, body: Record<string, unknown>) {
  const secret = generateSecret();
  const res = await c.as(tenant.adminToken, { method: 'POST', url: '/api/webhooks', payload: { url: receiver.url, events: ['*'], secret, ...body } });
  if (res.statusCode !== 201) throw new Error(`webhook: ${res.statusCode} ${res.body}`);
  return { ...res.json(), secret };
}

t.test('a write reaches the webhook, signed and verifiable', async (t) => {
  const tenant = await ctx.tenant();
  const hook = await webhook(ctx, tenant, { events: ['catalog.*'] });
  const before = receiver.received.length;
  const res = await ctx.as(tenant.adminToken, { method: 'POST', url: '/api/products', payload: { sku: 'E-1', name: 'Evented', price: '2.50' } });
  t.equal(res.statusCode, 201);
  const product = res.json();
  const [got] = await receiver.waitFor(1, 15_000, (r) => r.json?.entityId === product.id);
  t.equal(got.json.type, 'catalog.product.created');
  t.equal(got.json.tenant, tenant.id);
  t.equal(got.json.data.row.sku, 'E-1');
  t.same(got.json.data.changes.sku, { before: null, after: 'E-1' });
  t.equal(got.headers['webhook-id'], got.json.id, 'webhook-id is the event id');
  t.doesNotThrow(() => new Webhook(hook.secret).verify(got.body, got.headers as Record<string, string>), 'standardwebhooks verifies the signature');
  t.throws(() => new Webhook(generateSecret()).verify(got.body, got.headers as Record<string, string>), 'another secret does not');
  t.ok(receiver.received.length > before);
});
