// Events end to end: every write's event in the outbox of its transaction (a
// rollback leaves none), dispatched to the webhooks subscriber, delivered to a
// receiver on loopback with Standard Webhooks signatures an independent
// implementation verifies, retried with backoff, dead-lettered, a failing
// webhook switched off; pings and replays; SSRF refusals.
import { randomBytes } from 'node:crypto';
import t from 'tap';
import { Webhook } from 'standardwebhooks';
import { build, type TestContext, type TestTenant } from '../../helper.ts';
import { until } from '../../support/wait.ts';
import { crmApi } from '../../plugins/crm/crm-api.ts';
import { createWebhook } from '../../support/webhooks.ts';
import { startReceiver } from '../../support/receiver.ts';
import { generateSecret } from '../../../plugins/core/webhooks/signature.ts';
import { SYSTEM } from '../../../core/access/principal.ts';
import { DISABLE_AFTER } from '../../../plugins/core/webhooks/deliver.ts';

// a name of this run's own: the helper drops the registry at teardown, and another run may be using its namesake
const REGISTRY = `events_test_${randomBytes(4).toString('hex')}`;
const log = { error: (o: unknown, m?: string) => console.error(m, o), warn: () => {} };
const ctx = await build(t, {
  config: {
    // a registry of its own: its outbox and job queues are not the ones every other test file writes to
    registrySchema: REGISTRY,
    workers: true,
    outbound: { allowPrivate: true, timeoutMs: 2000, maxResponseBytes: 4096, lookup: async () => [{ address: '127.0.0.1', family: 4 }] },
    events: { enabled: true, pollMs: 20, batchSize: 500, perTenant: 100, tenantConcurrency: 5, retentionDays: 7, retryDelaySeconds: 1 },
  },
});
await ctx.kernel.startWorkers(log);
const receiver = await startReceiver();
t.teardown(() => receiver.close());

const webhook = (c: TestContext, tenant: TestTenant, body: Record<string, unknown>) => createWebhook(c, tenant, { url: receiver.url, ...body });

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

/** The outbox rows of a tenant, oldest first. */
async function outbox(tenantId: string) {
  return (await ctx.kernel.dbs.main.em
    .getConnection()
    .execute(
      `select type, entity, entity_id as "entityId", payload, actor_kind as "actorKind", actor_id as "actorId", company_id as "companyId" from ${REGISTRY}.events where tenant_id = ? order by id`,
      [tenantId],
    )) as Record<string, any>[];
}

/** The delivery log of a webhook, oldest first. */
async function deliveries(tenant: TestTenant, webhookId: string) {
  const res = await ctx.as(tenant.adminToken, { method: 'GET', url: `/api/webhooks/${webhookId}/deliveries?sort=createdAt&size=100` });
  return res.json().items as Record<string, any>[];
}

t.test('every generated write records its event in its own transaction; a rollback records none', async (t) => {
  const tenant = await ctx.tenant();
  const created = (await ctx.as(tenant.adminToken, { method: 'POST', url: '/api/products', payload: { sku: 'O-1', name: 'Outboxed', price: '1.00' } })).json();
  await ctx.as(tenant.adminToken, { method: 'PATCH', url: `/api/products/${created.id}`, payload: { price: '1.50' } });
  await ctx.as(tenant.adminToken, { method: 'PATCH', url: `/api/products/${created.id}`, payload: { price: '1.50' } }); // changes nothing: no event
  await ctx.as(tenant.adminToken, { method: 'DELETE', url: `/api/products/${created.id}` });
  const rows = (await outbox(tenant.id)).filter((r) => r.entityId === created.id);
  t.same(
    rows.map((r) => r.type),
    ['catalog.product.created', 'catalog.product.updated', 'catalog.product.deleted'],
  );
  t.same(Object.keys(rows[1].payload.changes), ['price'], 'only what changed');
  t.same(rows[1].payload.changes.price, { before: '1.00', after: '1.50' }, 'the changed fields, before and after');
  t.equal(rows[1].payload.row.price, '1.50', 'the row after the change');
  t.equal(rows[2].payload.row.sku, 'O-1', 'a delete carries the row as it was');
  t.equal(rows[0].actorKind, 'user');
  t.ok(rows[0].actorId, 'the actor');

  const system = await ctx.kernel.contextFor({ tenant: tenant.id, principal: SYSTEM, companyId: tenant.companyId });
  const count = (await outbox(tenant.id)).length;
  await t.rejects(
    system.transaction(async (tx) => {
      await tx.data('Product').create({ sku: 'O-2', name: 'Rolled back', price: '1.00' });
      await tx.emit('crm.lead.converted', { entityId: created.id, payload: { leadId: created.id, customerId: created.id, contactId: created.id, opportunityId: null } });
      throw new Error('changed my mind');
    }),
    /changed my mind/,
  );
  t.equal((await outbox(tenant.id)).length, count, 'a rolled-back write and a rolled-back domain event leave no event');

  const bad400 = await ctx.as(tenant.adminToken, { method: 'POST', url: '/api/products', payload: { sku: 'O-3', price: 'not a price' } });
  t.equal(bad400.statusCode, 400);
  t.equal((await outbox(tenant.id)).length, count, 'a refused write leaves none');
});

t.test("an event's row is the row as a read returns it, written in the write's own statement", async (t) => {
  const tenant = await ctx.tenant();
  const read = async (id: string) => (await ctx.as(tenant.adminToken, { method: 'GET', url: `/api/products/${id}?translations=true` })).json();
  const latest = async (id: string) => (await outbox(tenant.id)).filter((r) => r.entityId === id).at(-1)!;
  // values the database normalises: a decimal without its scale, an instant in lower case with microseconds, a JSON document
  const body = {
    sku: 'S-1',
    name: 'Chair',
    translations: { name: { de: 'Stuhl' } },
    price: '7',
    stock: 3,
    availableFrom: '2026-12-01',
    discontinuedAt: '2027-01-02t03:04:05.678912z',
    attributes: { z: 1, a: [true, null, 'x'], nested: { b: 2.5 } },
  };
  const created = await ctx.as(tenant.adminToken, { method: 'POST', url: '/api/products', payload: body });
  t.equal(created.statusCode, 201);
  const id = created.json().id;
  let event = await latest(id);
  t.equal(event.type, 'catalog.product.created');
  t.same(event.payload.row, await read(id), 'created: the payload row equals a read');
  t.strictSame(event.payload.row.translations, { name: { en: 'Chair', de: 'Stuhl' }, description: {} });

  const patched = await ctx.as(tenant.adminToken, {
    method: 'PATCH',
    url: `/api/products/${id}`,
    payload: { price: '7.5', discontinuedAt: null, translations: { name: { fr: 'Chaise' } }, attributes: { only: 'this' } },
  });
  t.equal(patched.statusCode, 200, patched.body);
  event = await latest(id);
  t.equal(event.type, 'catalog.product.updated');
  t.same(event.payload.row, await read(id), 'updated: the payload row equals a read');
  t.equal(event.payload.row.version, 2);
  t.same(event.payload.changes.price, { before: '7.00', after: '7.50' });

  const last = await read(id);
  t.equal((await ctx.as(tenant.adminToken, { method: 'DELETE', url: `/api/products/${id}` })).statusCode, 204);
  event = await latest(id);
  t.equal(event.type, 'catalog.product.deleted');
  t.same(event.payload.row, last, 'deleted: the row as it was');
  t.same(event.payload.changes.price, { before: '7.50', after: null }, 'every field goes');
});

t.test('domain events: declared in the manifest, held to their payload schema', async (t) => {
  const tenant = await ctx.tenant();
  const system = await ctx.kernel.contextFor({ tenant: tenant.id, principal: SYSTEM, companyId: tenant.companyId });
  await t.rejects(system.emit('crm.lead.vanished', { payload: {} }), /no module declares the event "crm.lead.vanished"/);
  await t.rejects(system.emit('crm.lead.converted', { payload: { leadId: 'x' } }), /event crm.lead.converted: payload/);
  await t.rejects(
    system.emit('crm.lead.converted', { entity: 'Customer', payload: { leadId: tenant.companyId, customerId: tenant.companyId, contactId: tenant.companyId, opportunityId: null } }),
    /about Lead, not Customer/,
  );

  const lead = (await ctx.as(tenant.adminToken, { method: 'POST', url: '/api/crm/leads', payload: { title: 'Big deal', companyName: 'Acme', lastName: 'Doe', currency: 'EUR' } })).json();
  // a move along a state flow is news of its own, besides the update
  await ctx.as(tenant.adminToken, { method: 'PATCH', url: `/api/crm/leads/${lead.id}`, payload: { status: 'contacted' } });
  await ctx.as(tenant.adminToken, { method: 'PATCH', url: `/api/crm/leads/${lead.id}`, payload: { title: 'Bigger deal' } });
  t.same(
    (await outbox(tenant.id)).filter((r) => r.entityId === lead.id).map((r) => r.type),
    ['crm.lead.created', 'crm.lead.updated', 'crm.lead.contacted', 'crm.lead.updated'],
  );
  t.ok(
    ctx.kernel.events.types.some((e) => e.type === 'crm.quote.accepted' && e.kind === 'state'),
    'a quote accepted: derived from its state flow',
  );
  const res = await ctx.as(tenant.adminToken, { method: 'POST', url: `/api/crm/leads/${lead.id}/convert`, payload: {} });
  t.equal(res.statusCode, 201);
  const converted = (await outbox(tenant.id)).filter((r) => r.type === 'crm.lead.converted');
  t.equal(converted.length, 1, 'declared by the module, emitted by its code: not derived from the state flow too');
  t.match(converted[0], { entity: 'Lead', entityId: lead.id, payload: { leadId: lead.id, customerId: res.json().customer.id, opportunityId: null } });
  t.equal(converted[0].companyId, tenant.companyId, 'the company of the context');
  // module code sets read-only values (customerId, an instant as a Date): the event still shows the row a read returns
  const leadEvent = (await outbox(tenant.id)).filter((r) => r.entityId === lead.id && r.type === 'crm.lead.updated').at(-1)!;
  const leadNow = (await ctx.as(tenant.adminToken, { method: 'GET', url: `/api/crm/leads/${lead.id}` })).json();
  t.ok(leadNow.convertedAt);
  t.same(leadEvent.payload.row, leadNow, "the converted lead's event row equals a read");
});

t.test("a computed field's event shows it as stored", async (t) => {
  const tenant = await ctx.tenant();
  const crm = crmApi(ctx, tenant.adminToken);
  const quote = await crm.quote({ customerId: (await crm.customer()).id });
  const line = await crm.line(quote.id, { quantity: '3', unitPrice: '3.33', discount: '0.1', taxRate: '0.19' });
  const event = (await outbox(tenant.id)).find((r) => r.entityId === line.id)!;
  const read = (await crm.api('GET', `/api/crm/quotes/${quote.id}/lines/${line.id}`)).json();
  t.ok(Number(read.lineTotal) > 0);
  t.same(event.payload.row, read, 'formulas computed before the write equal what the database holds');
  // the line changed the quote's totals: the quote's own event says so
  const quoteEvent = (await outbox(tenant.id)).filter((r) => r.entityId === quote.id).at(-1)!;
  const quoteNow = (await crm.api('GET', `/api/crm/quotes/${quote.id}`)).json();
  t.equal(quoteEvent.type, 'crm.quote.updated');
  t.same(quoteEvent.payload.row, quoteNow, "the parent's new totals, as a read shows them");
  t.same(quoteEvent.payload.changes.total, { before: quote.total, after: quoteNow.total });
});

t.test('retries with backoff until the receiver takes it; the log keeps every try', async (t) => {
  const tenant = await ctx.tenant();
  const hook = await webhook(ctx, tenant, { events: ['catalog.category.created'] });
  let calls = 0;
  receiver.respond = (_n, r) => (r.json?.tenant === tenant.id && ++calls <= 2 ? 503 : 200);
  t.teardown(() => (receiver.respond = () => 200));
  const category = (await ctx.as(tenant.adminToken, { method: 'POST', url: '/api/categories', payload: { name: 'Retried R-1' } })).json();
  const got = await receiver.waitFor(3, 20_000, (r) => r.json?.entityId === category.id);
  t.equal(new Set(got.map((r) => r.headers['webhook-id'])).size, 1, 'every try carries the same webhook-id');
  t.ok(got[2].at - got[1].at >= got[1].at - got[0].at - 300, 'the wait grows between tries (backoff)');
  const log = await until(
    () => deliveries(tenant, hook.id),
    (l) => l.length >= 3,
  );
  t.same(
    log.map((d) => [d.attempt, d.status, d.responseStatus]),
    [
      [1, 'failed', 503],
      [2, 'failed', 503],
      [3, 'succeeded', 200],
    ],
  );
  t.match(log[0], { eventType: 'catalog.category.created', error: /503/ });
  t.ok(log.every((d) => typeof d.durationMs === 'number'));
});

t.test('a delivery failing every try is dead; dead deliveries in a row switch the webhook off', async (t) => {
  const tenant = await ctx.tenant();
  const hook = await webhook(ctx, tenant, { events: ['catalog.category.created'], maxAttempts: 2 });
  receiver.respond = (_n, r) => (r.json?.tenant === tenant.id ? 500 : 200);
  t.teardown(() => (receiver.respond = () => 200));
  await ctx.as(tenant.adminToken, { method: 'POST', url: '/api/categories', payload: { name: 'Dead D-0' } });
  const log = await until(
    () => deliveries(tenant, hook.id),
    (l) => l.length >= 2,
  );
  t.same(
    log.map((d) => [d.attempt, d.status]),
    [
      [1, 'failed'],
      [2, 'dead'],
    ],
  );
  const after = await until(
    async () => (await ctx.as(tenant.adminToken, { method: 'GET', url: `/api/webhooks/${hook.id}` })).json(),
    (w) => w.failureCount === 1,
  );
  t.equal(after.failureCount, 1, 'one dead delivery counted');
  t.equal(after.active, true);

  for (let i = 1; i < DISABLE_AFTER; i++) await ctx.as(tenant.adminToken, { method: 'POST', url: '/api/categories', payload: { name: `Dead ${i}` } });
  const off = await until(
    async () => (await ctx.as(tenant.adminToken, { method: 'GET', url: `/api/webhooks/${hook.id}` })).json(),
    (w) => w.active === false,
    30_000,
  );
  t.equal(off.active, false, `switched off after ${DISABLE_AFTER} dead deliveries in a row`);
  t.match(off.disabledReason, /deliveries in a row failed every try; the last: the receiver answered 500/);
  t.notOk('secret' in off, 'the secret never leaves');

  const back = await ctx.as(tenant.adminToken, { method: 'PATCH', url: `/api/webhooks/${hook.id}`, payload: { active: true } });
  t.match(back.json(), { active: true, failureCount: 0, disabledReason: null }, 'switched on again with a clean record');

  // the dead jobs, as the tenant's administrators see them, and one run again
  const jobs = await ctx.as(tenant.adminToken, { method: 'GET', url: '/api/jobs?queue=core.deliver-webhook&state=failed' });
  t.equal(jobs.statusCode, 200);
  t.equal(jobs.json().total, DISABLE_AFTER, 'every dead delivery is a failed job');
  const dead = jobs.json().items[0];
  t.match(dead, { queue: 'core.deliver-webhook', tenant: tenant.id, state: 'failed', attempt: 2, attempts: 2, error: /500/ });
  receiver.respond = () => 200;
  const retried = await ctx.as(tenant.adminToken, { method: 'POST', url: `/api/jobs/${dead.id}/retry` });
  t.equal(retried.statusCode, 202, retried.body);
  t.not(retried.json().state, 'failed');
  t.equal((await ctx.as(tenant.adminToken, { method: 'POST', url: `/api/jobs/${dead.id}/retry` })).statusCode, 409, 'only a failed job is retried');
  const done = await until(
    async () => (await ctx.as(tenant.adminToken, { method: 'GET', url: `/api/jobs?queue=core.deliver-webhook&state=completed` })).json(),
    (p) => p.total >= 1,
  );
  t.equal(done.items[0].id, dead.id, 'the retried job completed');

  const other = await ctx.tenant();
  t.equal((await ctx.as(other.adminToken, { method: 'GET', url: '/api/jobs?queue=core.deliver-webhook' })).json().total, 0, "another tenant's administrators see none of them");
  t.equal((await ctx.as(other.adminToken, { method: 'POST', url: `/api/jobs/${dead.id}/retry` })).statusCode, 404);
  const member = await ctx.user(tenant, { codes: ['core:webhook:manage'] });
  t.equal((await ctx.as(member.token, { method: 'GET', url: '/api/jobs' })).statusCode, 403, 'administrators only');
  t.equal((await ctx.as(tenant.adminToken, { method: 'GET', url: '/api/jobs?state=sleeping' })).statusCode, 400);
  t.equal((await ctx.as(tenant.adminToken, { method: 'GET', url: '/api/jobs?size=100000' })).statusCode, 400);
  const subscriberJobs = (await ctx.as(tenant.adminToken, { method: 'GET', url: '/api/jobs?queue=plinth.subscriber&state=completed' })).json().items;
  t.ok(subscriberJobs.length > 0 && subscriberJobs.every((j: { events: number }) => j.events >= 1), 'a subscriber job says how many events it carried');
});

t.test('ping and replay', async (t) => {
  const tenant = await ctx.tenant();
  const hook = await webhook(ctx, tenant, { events: ['catalog.category.created'] });
  const ping = await ctx.as(tenant.adminToken, { method: 'POST', url: `/api/webhooks/${hook.id}/ping` });
  t.equal(ping.statusCode, 201);
  t.match(ping.json(), { webhookId: hook.id, eventType: 'core.webhook.ping', attempt: 1, status: 'succeeded', responseStatus: 200 });
  const [pinged] = await receiver.waitFor(1, 5000, (r) => r.json?.type === 'core.webhook.ping' && r.json?.tenant === tenant.id);
  t.doesNotThrow(() => new Webhook(hook.secret).verify(pinged.body, pinged.headers as Record<string, string>));
  t.same(pinged.json.data, { webhookId: hook.id });
  t.equal((await ctx.as(tenant.adminToken, { method: 'POST', url: `/api/webhook-deliveries/${ping.json().id}/replay` })).statusCode, 409, 'a ping is not replayed');

  const unit = (await ctx.as(tenant.adminToken, { method: 'POST', url: '/api/categories', payload: { name: 'Replayed RP' } })).json();
  await receiver.waitFor(1, 15_000, (r) => r.json?.entityId === unit.id);
  const [first] = await until(
    () => deliveries(tenant, hook.id),
    (l) => l.some((d) => d.eventType === 'catalog.category.created'),
  );
  const delivered = (await deliveries(tenant, hook.id)).find((d) => d.eventType === 'catalog.category.created')!;
  t.ok(first);
  const replay = await ctx.as(tenant.adminToken, { method: 'POST', url: `/api/webhook-deliveries/${delivered.id}/replay` });
  t.equal(replay.statusCode, 202);
  const again = await receiver.waitFor(2, 15_000, (r) => r.json?.entityId === unit.id);
  t.equal(again[1].headers['webhook-id'], again[0].headers['webhook-id'], 'the same event, the same webhook-id');
});

t.test('webhooks: validation, admins only, per tenant', async (t) => {
  const tenant = await ctx.tenant();
  const post = (payload: Record<string, unknown>, token = tenant.adminToken) => ctx.as(token, { method: 'POST', url: '/api/webhooks', payload });
  const valid = { url: receiver.url, events: ['crm.*'], secret: generateSecret() };
  for (const [what, body, path] of [
    ['no events', { ...valid, events: [] }, '/events'],
    ['events not a list', { ...valid, events: 'crm.*' }, '/events'],
    ['a pattern matching nothing', { ...valid, events: ['nosuch.*'] }, '/events/0'],
    ['a malformed pattern', { ...valid, events: ['CRM lead'] }, '/events/0'],
    ['a pattern twice', { ...valid, events: ['crm.*', 'crm.*'] }, '/events'],
    ['a secret not in whsec_ form', { ...valid, secret: 'hunter2' }, '/secret'],
    ['no secret', { url: valid.url, events: valid.events }, '/secret'],
    ['not http', { ...valid, url: 'ftp://example.com/hook' }, '/url'],
    ['a read-only field', { ...valid, failureCount: 3 }, '/failureCount'],
    ['an unknown field', { ...valid, bogus: 1 }, '/bogus'],
    ['a huge URL', { ...valid, url: `https://example.com/${'x'.repeat(3000)}` }, '/url'],
  ] as const) {
    const res = await post(body as Record<string, unknown>);
    t.equal(res.statusCode, 400, what);
    t.ok(
      res.json().errors?.some((e: { path: string }) => e.path === path),
      `${what}: ${path} named (${JSON.stringify(res.json().errors)})`,
    );
  }
  const member = await ctx.user(tenant, { codes: ['core:webhook:manage'] });
  t.equal((await post(valid, member.token)).statusCode, 403, 'admins only');
  const created = await post(valid);
  t.equal(created.statusCode, 201);
  t.notOk('secret' in created.json(), 'the secret is write-only');
  const other = await ctx.tenant();
  t.equal((await ctx.as(other.adminToken, { method: 'GET', url: `/api/webhooks/${created.json().id}` })).statusCode, 404, 'another tenant does not see it');
  t.equal((await ctx.as(other.adminToken, { method: 'POST', url: `/api/webhooks/${created.json().id}/ping` })).statusCode, 404);
});

t.test("one tenant's events never reach another tenant's webhook", async (t) => {
  const a = await ctx.tenant();
  const b = await ctx.tenant();
  await webhook(ctx, b, { events: ['catalog.*'] });
  const product = (await ctx.as(a.adminToken, { method: 'POST', url: '/api/products', payload: { sku: 'ISO-1', name: 'Isolated', price: '1.00' } })).json();
  const marker = (await ctx.as(b.adminToken, { method: 'POST', url: '/api/products', payload: { sku: 'ISO-2', name: 'Marker', price: '1.00' } })).json();
  await receiver.waitFor(1, 15_000, (r) => r.json?.entityId === marker.id);
  t.equal(receiver.received.filter((r) => r.json?.entityId === product.id).length, 0);
});

t.test('the OpenAPI document lists every event in its webhooks section', async (t) => {
  const doc = (await ctx.app.inject({ method: 'GET', url: '/api-docs/json' })).json();
  const types = ctx.kernel.events.types.map((e) => e.type);
  t.same(Object.keys(doc.webhooks).sort(), [...types].sort());
  t.ok(types.includes('catalog.product.created') && types.includes('crm.lead.converted') && types.includes('core.webhook.ping'));
  t.notOk(
    types.some((x) => x.startsWith('core.refresh-token.') || x.startsWith('core.webhook-delivery.')),
    'entities that opt out emit nothing',
  );
  const created = doc.webhooks['catalog.product.created'].post;
  t.same(
    created.parameters.map((p: { name: string }) => p.name),
    ['webhook-id', 'webhook-timestamp', 'webhook-signature'],
  );
  const body = created.requestBody.content['application/json'].schema;
  t.equal(body.properties.type.const, 'catalog.product.created');
  t.equal(body.properties.data.properties.row.$ref, '#/components/schemas/CatalogProduct');
  const converted = doc.webhooks['crm.lead.converted'].post.requestBody.content['application/json'].schema.properties.data;
  t.same(converted.required, ['leadId', 'customerId', 'contactId', 'opportunityId'], 'a domain event carries its declared payload schema');
});
