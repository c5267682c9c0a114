// --delivery-burst N (issue "Events"): a Plinth server with workers on and a
// webhook for catalog.* pointing at a receiver in this process; N creates are
// sent as fast as the server takes them, and the receiver counts distinct
// webhook-id headers (event ids) until it has all N. Reported: how long the
// writes took, how long after the last commit (the last 201) the last delivery
// arrived (target: 30 s), deliveries per second, duplicates. Once a second the
// bench also notes where the events are (outbox rows not yet dispatched,
// subscriber and delivery jobs by state), so a slow drain shows its stage.
import type { Kernel } from '../core/kernel.ts';
import { generateSecret } from '../plugins/core/webhooks/signature.ts';
import { WRITE_SKU_PREFIX, adminToken, type BenchTenant } from './fixtures.ts';
import { runAmount } from './load.ts';
import { round, type DeliveryBurst } from './report.ts';
import { startBurstReceiver } from './receiver.ts';
import { CAPTURE, headersOf } from './scenarios.ts';
import type { Server } from './servers.ts';
import type { TokenService } from '../core/auth/tokens.ts';

export interface BurstOptions {
  kernel: Kernel;
  tokens: TokenService;
  bench: BenchTenant;
  /** a Plinth server with workers on and OUTBOUND_ALLOW_PRIVATE=true */
  start(): Promise<Server>;
  count: number;
  connections: number;
  /** s after the last 201 before the bench gives up waiting */
  timeoutSeconds: number;
  tag: string;
  log(m: string): void;
}

const BURST_TARGET_SECONDS = 30;

export async function deliveryBurst(o: BurstOptions): Promise<DeliveryBurst> {
  const { kernel, bench } = o;
  const conn = kernel.dbs.main.em.getConnection();
  const webhooks = `"${bench.schema}"."${kernel.model('Webhook').table}"`;
  const deliveries = `"${bench.schema}"."${kernel.model('WebhookDelivery').table}"`;
  const jobs = `"${kernel.config.registrySchema}_jobs".job`;
  const removeWebhooks = async () => {
    await conn.execute(`delete from ${deliveries}`);
    await conn.execute(`delete from ${webhooks}`);
  };
  // a webhook left by an interrupted run would deliver to a receiver long gone
  await removeWebhooks();
  const secret = generateSecret();
  const receiver = await startBurstReceiver(secret);
  const server = await o.start();
  const samples: DeliveryBurst['timeline'] = [];
  let sampling: NodeJS.Timeout | undefined;
  try {
    const admin = { authorization: `Bearer ${await adminToken(kernel, o.tokens, bench)}`, 'x-company-id': bench.companyId, 'content-type': 'application/json' };
    const res = await fetch(`${server.url}/api/webhooks`, {
      method: 'POST',
      headers: admin,
      body: JSON.stringify({ url: receiver.url, events: ['catalog.*'], secret, description: 'bench delivery burst' }),
    });
    if (res.status !== 201) throw new Error(`delivery burst: creating the webhook answered ${res.status} ${await res.text()}`);
    const product = (n: number | string) => ({ sku: `${WRITE_SKU_PREFIX}${o.tag}-burst-${n}`, name: CAPTURE.name, price: CAPTURE.price, stock: 1, categoryId: bench.categoryIds[0] });
    // one create end to end first: a broken pipeline fails here, in seconds, not after the whole timeout
    const warm = await fetch(`${server.url}/api/products`, { method: 'POST', headers: { ...headersOf(bench), 'content-type': 'application/json' }, body: JSON.stringify(product('warm')) });
    if (warm.status !== 201) throw new Error(`delivery burst: the warm-up create answered ${warm.status} ${await warm.text()}`);
    if (!(await receiver.waitFor(1, 30_000))) throw new Error(`delivery burst: the warm-up create's event did not reach the receiver within 30 s (server log: ${server.logFile})`);
    receiver.reset();

    const hrUs = () => Number(process.hrtime.bigint() / 1000n);
    const windows = { writes: { fromUs: hrUs(), toUs: 0 }, drain: { fromUs: 0, toUs: 0 } };
    o.log(`delivery burst: ${o.count} creates over ${o.connections} connections, webhook for catalog.* at ${receiver.url}`);
    const t0 = performance.now();
    const sample = async () => {
      const at = round((performance.now() - t0) / 1000, 1);
      const delivered = receiver.ids.size;
      const [{ pending }] = (await conn.execute(`select count(*)::int as pending from ${kernel.outbox.table} where tenant_id = ? and dispatched_at is null`, [bench.id])) as { pending: number }[];
      const byState = (await conn.execute(`select name, state, count(*)::int as n from ${jobs} where group_id = ? and state in ('created', 'retry', 'active') group by 1, 2`, [bench.id])) as {
        name: string;
        state: string;
        n: number;
      }[];
      const of = (queue: string) =>
        byState
          .filter((r) => r.name === queue)
          .map((r) => `${r.state}:${r.n}`)
          .join(' ') || '-';
      samples.push({ at, delivered, outboxPending: pending, subscriberJobs: of('plinth.subscriber'), deliveryJobs: of('core.deliver-webhook') });
    };
    let busy = false;
    sampling = setInterval(() => {
      if (busy) return;
      busy = true;
      sample()
        .catch(() => {})
        .finally(() => (busy = false));
    }, 1000);

    let n = 0;
    const w = await runAmount({
      url: server.url,
      connections: o.connections,
      amount: o.count,
      okStatus: 201,
      setup: (req) => {
        req.method = 'POST';
        req.path = '/api/products';
        req.headers = { ...headersOf(bench), 'content-type': 'application/json' };
        req.body = JSON.stringify(product(++n));
        return req;
      },
    });
    windows.writes.toUs = windows.drain.fromUs = hrUs();
    const deliveredByLastCommit = receiver.ids.size;
    o.log(
      `delivery burst: ${w.ok} creates committed in ${round((w.lastOkAt - w.startedAt) / 1000, 1)} s (${w.rps} req/s, non-2xx ${w.non2xx}, errors ${w.errors}); ${deliveredByLastCommit} delivered by the last commit`,
    );
    const complete = await receiver.waitFor(w.ok, o.timeoutSeconds * 1000);
    const waitedUntil = performance.now();
    windows.drain.toUs = hrUs();
    clearInterval(sampling);
    await sample();
    const drain = complete ? Math.max(0, receiver.lastAt - w.lastOkAt) / 1000 : null;
    const span = (receiver.lastAt - receiver.firstAt) / 1000;
    // the delivery log: tries that failed would show as retries (attempt > 1)
    const tries = (await conn.execute(`select status, count(*)::int as n, count(*) filter (where attempt > 1)::int as retries from ${deliveries} group by status`)) as {
      status: string;
      n: number;
      retries: number;
    }[];
    // per queue, the burst's jobs: how long they waited for a worker and how fast workers finished them
    const queues = (await conn.execute(
      `select name, count(*)::int as n, count(*) filter (where state = 'completed')::int as completed,
         extract(epoch from max(completed_on) - min(started_on))::float as "spanSeconds",
         (extract(epoch from avg(started_on - created_on)) * 1000)::int as "waitMs",
         (extract(epoch from avg(completed_on - started_on)) * 1000)::int as "fetchToDoneMs"
       from ${jobs} where group_id = ? and created_on >= now() - make_interval(secs => ?) group by name order by name`,
      [bench.id, Math.ceil((performance.now() - t0) / 1000) + 5],
    )) as { name: string; n: number; completed: number; spanSeconds: number | null; waitMs: number | null; fetchToDoneMs: number | null }[];
    const result: DeliveryBurst = {
      creates: o.count,
      committed: w.ok,
      connections: o.connections,
      writeSeconds: round((w.lastOkAt - w.startedAt) / 1000, 2),
      writeRps: round(w.ok / ((w.lastOkAt - w.startedAt) / 1000), 0),
      writeP99Ms: w.p99,
      writeNon2xx: w.non2xx + w.errors,
      deliveredByLastCommit,
      delivered: receiver.ids.size,
      complete,
      drainSeconds: drain === null ? null : round(drain, 2),
      waitedSeconds: round((waitedUntil - w.lastOkAt) / 1000, 1),
      endToEndSeconds: round(((complete ? receiver.lastAt : waitedUntil) - w.startedAt) / 1000, 2),
      deliveriesPerSecond: span > 0 ? round(receiver.ids.size / span, 0) : null,
      duplicates: receiver.duplicates,
      invalidSignatures: receiver.invalid,
      deliveryLog: Object.fromEntries(tries.map((t) => [t.status, t.n])),
      retries: tries.reduce((s, t) => s + t.retries, 0),
      targetSeconds: BURST_TARGET_SECONDS,
      timeoutSeconds: o.timeoutSeconds,
      jobs: Object.fromEntries(
        queues.map((q) => [q.name, { jobs: q.n, completed: q.completed, perSecond: q.spanSeconds ? round(q.completed / q.spanSeconds, 0) : null, waitMs: q.waitMs, fetchToDoneMs: q.fetchToDoneMs }]),
      ),
      timeline: samples,
      windows,
    };
    if (server.exitInfo()) throw new Error(`delivery burst: the server ended during the burst (${server.exitInfo()})`);
    return result;
  } finally {
    clearInterval(sampling);
    await server.stop();
    await receiver.close();
    await removeWebhooks();
  }
}
