// Events across processes (generous timeouts: tenant backlogs drain slowly, see SLOW_TENANT_BUG,
// and slower still while other test files load the machine): what was committed before a process went away is
// delivered after the next one starts, once; two processes working the same
// database deliver every event once; a module's subscriber reacts to another
// module's events, once per event even when its job runs twice or fails once;
// one tenant's burst does not hold up another tenant's deliveries.
//
// PostgreSQL: a "process" is a kernel and app of its own on the same database
// (its own pools, pg-boss instance and dispatcher), opened and closed here.
// PGlite is in-memory and serves one process: there the one kernel stopping its
// workers (dispatcher stopped, every queue's worker taken off) and starting
// them again is the honest equivalent of a restart, and two processes cannot
// be had at all.
import { randomBytes } from 'node:crypto';
import t from 'tap';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import type { PgBoss } from 'pg-boss';
import { build, onPglite, testConfig, type TestContext, type TestTenant } from '../../helper.ts';
import { until } from '../../support/wait.ts';
import { createWebhook } from '../../support/webhooks.ts';
import { startReceiver, type Receiver, type Received } from '../../support/receiver.ts';
import { modulesWith, SDK_URL } from '../../support/manifests.ts';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { DELIVER_JOB } from '../../../plugins/core/webhooks/deliver.ts';
import { SYSTEM } from '../../../core/access/principal.ts';
import { openKernel, type Kernel } from '../../../core/kernel.ts';
import { buildApp } from '../../../core/app.ts';
import { ManifestError } from '../../../core/manifest/errors.ts';
import { SUBSCRIBER_QUEUE } from '../../../core/events/runtime.ts';

// a name of this run's own: the helper drops the registry at teardown, and another run may be using its namesake
const REGISTRY = `events_proc_${randomBytes(4).toString('hex')}`;
const log = { error: (o: unknown, m?: string) => console.error(m, o), warn: () => {} };

// The shipped modules (linked) plus "mentions": an entity of its own and subscribers to catalog's events.
const sdk = SDK_URL;
const moduleDir = (extra: Parameters<typeof modulesWith>[1]) => modulesWith(t, extra);

const { manifestsDir, pluginsDir } = moduleDir({
  mentions: {
    manifest: {
      entities: [
        {
          name: 'Mention',
          label: 'Mention',
          scope: 'tenant',
          fields: {
            productId: { type: 'string', label: 'Product', required: true, maxLength: 64, filter: true },
            sku: { type: 'string', label: 'SKU', required: true, maxLength: 64 },
          },
          listColumns: ['sku'],
          // no events of its own: every product's webhook subscriber job would be followed by a Mention's
          events: false,
        },
      ],
    },
    plugin: `
import '${sdk}';
/** event id → tries of the flaky subscriber (one instance per process: the kernels of this file share it) */
export const tries = new Map();
export const subscribers = {
  // one Mention per product created
  mention: {
    events: ['catalog.product.created'],
    async handle(ctx, event) {
      await ctx.data('Mention').create({ productId: event.entityId, sku: event.payload.row.sku });
    },
  },
  // writes, then fails its first try of every event: the write must land once
  flaky: {
    events: ['catalog.category.updated'],
    async handle(ctx, event) {
      const n = (tries.get(event.id) ?? 0) + 1;
      tries.set(event.id, n);
      await ctx.data('Mention').create({ productId: event.entityId, sku: 'flaky' });
      if (n === 1) throw new Error('flaky: the first try fails');
    },
  },
};
`,
  },
});
const mentionsPlugin = (await import(pathToFileURL(join(pluginsDir, 'mentions', 'index.ts')).href)) as { tries: Map<string, number> };

const config = {
  // a registry of its own: its outbox and job queues are not the ones every other test file writes to
  registrySchema: REGISTRY,
  workers: true,
  manifestsDir,
  pluginsDir,
  outbound: { allowPrivate: true, timeoutMs: 2000, maxResponseBytes: 4096, lookup: async () => [{ address: '127.0.0.1', family: 4 as const }] },
  events: { enabled: true, pollMs: 20, batchSize: 500, perTenant: 100, tenantConcurrency: 5, retentionDays: 7, retryDelaySeconds: 1 },
};

// The first process: it provisions this file's tenants (and removes them at the end).
// On PostgreSQL its workers start only after the restart test (which needs nobody working meanwhile).
const ctx = await build(t, { config });
const receiver = await startReceiver();
const second = await startReceiver();
t.teardown(() => receiver.close());
t.teardown(() => second.close());

interface Proc {
  kernel: Kernel;
  app: FastifyInstance;
  as(token: string, opts: InjectOptions): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

/** Another process on the same PostgreSQL database: a kernel and app of its own. */
async function openProcess(): Promise<Proc> {
  const kernel = await openKernel(testConfig(config));
  const app = await buildApp(kernel, { logger: false });
  await app.ready();
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await app.close();
    await kernel.close();
  };
  t.teardown(close);
  return { kernel, app, as: (token, o) => app.inject({ ...o, headers: { authorization: `Bearer ${token}`, ...(o.headers ?? {}) } }), close };
}

const first: Proc = { kernel: ctx.kernel, app: ctx.app, as: ctx.as, close: async () => {} };
const bossOf = (k: Kernel): PgBoss => k.queues.boss('main');

/** PGlite's stand-in for a process going away: the dispatcher stops and no queue is worked any more. */
async function stopWorkers(k: Kernel): Promise<void> {
  await k.eventRuntime.stop();
  for (const q of [SUBSCRIBER_QUEUE, ...k.eventRuntime.jobs.keys(), 'plinth.cron', 'plinth.maintenance']) await bossOf(k).offWork(q, { wait: true });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const webhook = (c: Pick<TestContext, 'as'>, tenant: TestTenant, url: string, events = ['catalog.product.created']) => createWebhook(c, tenant, { url, events });

/** `n` products through `procs`' APIs in turn, `parallel` requests at a time; their ids. */
async function products(procs: Pick<Proc, 'as'>[], tenant: TestTenant, n: number, prefix: string, parallel = 10): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i += parallel) {
    const batch = Array.from({ length: Math.min(parallel, n - i) }, async (_, j) => {
      const k = i + j;
      const res = await procs[k % procs.length].as(tenant.adminToken, { method: 'POST', url: '/api/products', payload: { sku: `${prefix}-${k}`, name: `P ${k}`, price: '1.00' } });
      if (res.statusCode !== 201) throw new Error(`product: ${res.statusCode} ${res.body}`);
      return res.json().id as string;
    });
    ids.push(...(await Promise.all(batch)));
  }
  return ids;
}

const sql = (text: string, params: unknown[] = []) => ctx.kernel.dbs.main.em.getConnection().execute(text, params) as Promise<Record<string, any>[]>;
const outbox = (tenantId: string) => sql(`select id, type, entity_id as "entityId", dispatched_at as "dispatchedAt" from ${REGISTRY}.events where tenant_id = ? order by id`, [tenantId]);
const jobsOf = (queue: string, tenantId: string) => bossOf(ctx.kernel).findJobs<{ tenantId: string }>(queue, { data: { tenantId }, limit: 10_000 });
/** the products' creations a subscriber job carries (a job carries a tenant's events for one subscriber; a webhook's creation is an event too) */
const productEvents = (j: { data: unknown }) => (j.data as { events: { type: string }[] }).events.filter((e) => e.type === 'catalog.product.created').length;
const sumOf = (jobs: { data: unknown }[]) => jobs.reduce((n, j) => n + productEvents(j), 0);
const ofTenant = (r: Receiver, tenantId: string, type = 'catalog.product.created') => r.received.filter((x) => x.json?.tenant === tenantId && x.json?.type === type);

/** Per event id of the tenant's events of `type`: how often the receiver got it. */
function tally(r: Receiver, tenantId: string, type = 'catalog.product.created'): Map<string, number> {
  const out = new Map<string, number>();
  for (const x of ofTenant(r, tenantId, type)) out.set(x.headers['webhook-id'] as string, (out.get(x.headers['webhook-id'] as string) ?? 0) + 1);
  return out;
}

async function mentions(tenant: TestTenant, productId?: string) {
  const sys = await ctx.kernel.contextFor({ tenant: tenant.id, principal: SYSTEM, companyId: tenant.companyId });
  return sys.data('Mention').find(productId ? { productId } : {}, { limit: 10_000 });
}

let workersOf: Proc | undefined; // PostgreSQL: the process started after the restart; it keeps working

t.test('committed before a process went away, delivered after the next one started, once per event and webhook', async (t) => {
  const N = 10;
  const [pending, queued, delivering] = [await ctx.tenant(), await ctx.tenant(), await ctx.tenant()];
  for (const tenant of [pending, queued, delivering]) {
    await webhook(ctx, tenant, receiver.url);
    await webhook(ctx, tenant, second.url);
  }
  const started = Date.now();

  // 1. a process whose subscribers ran but whose deliveries did not: the delivery jobs are queued when it goes
  const p1 = onPglite ? first : await openProcess();
  await p1.kernel.startWorkers(log);
  await p1.kernel.eventRuntime.stop(); // dispatched by hand below
  await bossOf(p1.kernel).offWork(DELIVER_JOB, { wait: true });
  const deliveringIds = await products([p1], delivering, N, 'DQ');
  await p1.kernel.eventRuntime.dispatchNow();
  const subs = await until(
    () => jobsOf(SUBSCRIBER_QUEUE, delivering.id),
    (j) => sumOf(j) === 2 * N && j.every((x) => x.state === 'completed'),
    60_000,
  );
  t.equal(sumOf(subs.filter((x) => x.state === 'completed')), 2 * N, 'the webhooks and mentions subscribers ran for every event');
  if (onPglite) await stopWorkers(p1.kernel);
  else await p1.close();

  // 2. a process whose workers never ran: one tenant's events handed to subscriber jobs (dispatched, not worked), another's left in the outbox
  const p2 = onPglite ? first : await openProcess();
  const queuedIds = await products([p2], queued, N, 'SQ');
  await p2.kernel.eventRuntime.dispatchNow();
  const pendingIds = await products([p2], pending, N, 'PQ');
  if (!onPglite) await p2.close();

  t.same(
    (await outbox(pending.id)).filter((e) => e.type === 'catalog.product.created').map((e) => e.dispatchedAt),
    Array(N).fill(null),
    'the last writes are pending in the outbox',
  );
  t.same(
    (await jobsOf(SUBSCRIBER_QUEUE, queued.id)).filter((j) => productEvents(j) > 0).map((j) => [j.state, productEvents(j)]),
    [
      ['created', N],
      ['created', N],
    ],
    'the dispatched ones are subscriber jobs nobody worked',
  );
  t.same(
    (await jobsOf(DELIVER_JOB, delivering.id)).map((j) => j.state),
    Array(2 * N).fill('created'),
    'one delivery job per event and webhook, queued, not worked',
  );
  t.equal(ofTenant(receiver, delivering.id).length + ofTenant(receiver, queued.id).length + ofTenant(receiver, pending.id).length, 0, 'nothing delivered yet');

  // 3. the next process starts its workers
  const p3 = onPglite ? first : await openProcess();
  await p3.kernel.startWorkers(log);
  if (!onPglite) workersOf = p3;
  const all = [delivering, queued, pending];
  for (const r of [receiver, second]) {
    for (const tenant of all) await r.waitFor(N, 60_000, (x) => x.json?.tenant === tenant.id && x.json?.type === 'catalog.product.created');
  }
  t.comment(`${all.length * N * 2} deliveries after the restart in ${Date.now() - started} ms (from the first write)`);
  await sleep(1500); // a duplicate would come now
  for (const [tenant, ids] of [
    [delivering, deliveringIds],
    [queued, queuedIds],
    [pending, pendingIds],
  ] as const) {
    const events = (await outbox(tenant.id)).filter((e) => e.type === 'catalog.product.created');
    t.equal(events.length, N);
    for (const [name, r] of [
      ['first', receiver],
      ['second', second],
    ] as const) {
      const got = tally(r, tenant.id);
      t.equal(got.size, N, `${tenant === pending ? 'pending' : tenant === queued ? 'queued' : 'delivering'}: ${N} distinct webhook-ids at the ${name} webhook`);
      t.ok(
        events.every((e) => got.get(e.id) === 1),
        `each event exactly once at the ${name} webhook`,
      );
    }
    const m = await until(
      () => mentions(tenant),
      (x) => x.length >= N,
    );
    t.same(m.map((x) => x.productId).sort(), [...ids].sort(), 'one Mention per product (the module subscriber survived the restart too)');
  }
  if (onPglite) return;
  // on PostgreSQL the first process starts working now: the next tests run with two
  await ctx.kernel.startWorkers(log);
});

// A tenant's jobs run at most `tenantConcurrency` at a time; a worker's batch is no larger, so a tenant's
// backlog is fetched in full batches, one after another, not one batch per poll (runtime.ts, start()).
t.test('two processes working one database deliver each of 300 events once', { skip: onPglite && 'PGlite (in-memory, embedded) serves one process' }, async (t) => {
  const tenant = await ctx.tenant();
  const type = 'catalog.category.created'; // categories: only the webhooks subscriber hears them
  await webhook(ctx, tenant, receiver.url, [type]);
  const started = Date.now();
  const ids: string[] = [];
  for (let i = 0; i < 300; i += 20) {
    const batch = Array.from({ length: 20 }, async (_, j) => {
      const res = await [first, workersOf!][(i + j) % 2].as(tenant.adminToken, { method: 'POST', url: '/api/categories', payload: { name: `Two ${i + j}` } });
      if (res.statusCode !== 201) throw new Error(`category: ${res.statusCode} ${res.body}`);
      return res.json().id as string;
    });
    ids.push(...(await Promise.all(batch)));
  }
  const written = Date.now() - started;
  await receiver.waitFor(300, 90_000, (x) => x.json?.tenant === tenant.id && x.json?.type === type);
  const took = Date.now() - started;
  // how fast is the bench's to say (npm run bench -- --delivery-burst): here, only that all arrive, once each
  t.comment(`300 writes over two processes in ${written} ms, delivered ${took} ms after the first`);
  await sleep(1500); // a duplicate would come now
  const got = ofTenant(receiver, tenant.id, type);
  t.equal(got.length, 300, 'exactly 300 deliveries');
  const byId = tally(receiver, tenant.id, type);
  t.equal(byId.size, 300, '300 distinct webhook-ids');
  const events = (await outbox(tenant.id)).filter((e) => e.type === type);
  t.equal(events.length, 300);
  t.ok(
    events.every((e) => byId.get(e.id) === 1),
    'each event once',
  );
  t.same(new Set(got.map((x: Received) => x.json.entityId)), new Set(ids), 'every category');
});

t.test("a module's subscriber reacts to another module's events, once per event", async (t) => {
  const tenant = await ctx.tenant();
  const res = await ctx.as(tenant.adminToken, { method: 'POST', url: '/api/products', payload: { sku: 'M-1', name: 'Mentioned', price: '1.00' } });
  t.equal(res.statusCode, 201);
  const product = res.json();
  const one = await until(
    () => mentions(tenant, product.id),
    (m) => m.length > 0,
  );
  t.match(one, [{ productId: product.id, sku: 'M-1' }], 'the product is mentioned');

  // the same subscriber job once more: the receipt of the event id makes it do nothing
  const sys = await ctx.kernel.contextFor({ tenant: tenant.id, principal: SYSTEM, companyId: tenant.companyId });
  const [row] = (await outbox(tenant.id)).filter((e) => e.entityId === product.id && e.type === 'catalog.product.created');
  const event = await sys.event(row.id);
  t.equal(event?.type, 'catalog.product.created');
  const [jobId] =
    (await bossOf(ctx.kernel).insert(SUBSCRIBER_QUEUE, [{ data: { tenantId: tenant.id, companyId: event!.companyId, subscriber: 'mentions.mention', events: [event] }, group: { id: tenant.id } }], {
      returnId: true,
    })) ?? [];
  t.ok(jobId, 'a duplicate job is queued');
  const dup = await until(
    () => bossOf(ctx.kernel).findJobs(SUBSCRIBER_QUEUE, { id: jobId }),
    (j) => j[0]?.state === 'completed',
  );
  t.equal(dup[0]?.state, 'completed', 'the duplicate ran');
  t.equal((await mentions(tenant, product.id)).length, 1, 'still one Mention');

  // a handler failing its first try is retried, and its write lands once
  const category = (await ctx.as(tenant.adminToken, { method: 'POST', url: '/api/categories', payload: { name: 'Flaky' } })).json();
  t.equal((await ctx.as(tenant.adminToken, { method: 'PATCH', url: `/api/categories/${category.id}`, payload: { name: 'Flakier' } })).statusCode, 200);
  const [catEvent] = (await outbox(tenant.id)).filter((e) => e.entityId === category.id && e.type === 'catalog.category.updated');
  const flaky = await until(
    () => mentions(tenant, category.id),
    (m) => m.length > 0,
  );
  t.equal(mentionsPlugin.tries.get(catEvent.id), 2, 'a second try, after the first failed');
  await sleep(300);
  t.match(await mentions(tenant, category.id), [{ sku: 'flaky' }], 'one Mention');
  t.equal(flaky.length, 1);
  const job = (await bossOf(ctx.kernel).findJobs(SUBSCRIBER_QUEUE, { data: { tenantId: tenant.id, subscriber: 'mentions.flaky' } }))[0];
  t.match(job, { state: 'completed', retryCount: 1 }, 'the job completed on its retry');
});

t.test('a subscriber listening to a pattern that matches no event type stops the kernel from opening', async (t) => {
  const deaf = moduleDir({
    deaf: { manifest: {}, plugin: `export const subscribers = { nobody: { events: ['nosuch.*'], async handle() {} } };\n` },
  });
  const err = await openKernel(testConfig({ ...config, ...deaf })).then(
    async (k) => (await k.close(), null),
    (e: unknown) => e,
  );
  t.ok(err instanceof ManifestError, 'a ManifestError');
  t.match((err as Error).message, /subscriber "nobody" listens to "nosuch\.\*", which matches no event type/);
});

// pg-boss fetches the `batchSize` oldest jobs a tenant cap does not exclude, then drops those over
// the cap: a fetch made while A has fewer than 5 active returns only A's (oldest) jobs, and B's job,
// queued behind A's backlog, is reached only by a fetch made while A is at its cap. On PostgreSQL
// (NOTIFY, two processes, eight fetching workers) that happens at once; on PGlite B's subscriber jobs
// were observed waiting ~10 s while ~350 of A's went first.

t.test("one tenant's burst does not hold up another tenant's delivery", async (t) => {
  const [a, b] = [await ctx.tenant(), await ctx.tenant()];
  await webhook(ctx, a, receiver.url);
  await webhook(ctx, b, receiver.url);
  receiver.delay = (_n, r) => (r.json?.tenant === a.id ? 20 : 0);
  t.teardown(() => (receiver.delay = () => 0));
  const sys = await ctx.kernel.contextFor({ tenant: a.id, principal: SYSTEM, companyId: a.companyId });
  // 300 products in one transaction: their events commit at once, a burst
  await sys.transaction(async (tx) => {
    for (let i = 0; i < 300; i++) await tx.data('Product').create({ sku: `BURST-${i}`, name: `Burst ${i}`, price: '1.00' });
  });
  const burstAt = Date.now();
  const res = await ctx.as(b.adminToken, { method: 'POST', url: '/api/products', payload: { sku: 'B-1', name: 'Small', price: '1.00' } });
  t.equal(res.statusCode, 201);
  const [bGot] = await receiver.waitFor(1, onPglite ? 40_000 : 10_000, (x) => x.json?.tenant === b.id);
  const aBefore = ofTenant(receiver, a.id).filter((x) => x.at <= bGot.at).length;
  t.comment(`B's delivery ${bGot.at - burstAt} ms after A's burst committed, when ${aBefore} of A's 300 had arrived`);
  // fewer than 300 of A's before B's: A's last comes after B's
  t.ok(aBefore < 300, "B's delivery arrived before A's last");
  t.ok(bGot.at - burstAt < 3000, "B's delivery within 3 s of A's burst (one dispatch, a subscriber job and a delivery job, each fetched past A's backlog)");
  // A's slow receiver keeps its backlog for a while; this file does not wait for it
  t.teardown(async () => {
    for (const q of [SUBSCRIBER_QUEUE, DELIVER_JOB]) await bossOf(ctx.kernel).deleteQueuedJobs(q);
  });
});
