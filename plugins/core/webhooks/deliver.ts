// Delivering events to webhooks. The `webhooks` subscriber hears every event
// once it committed and enqueues one `deliver-webhook` job per active webhook
// whose patterns match; the job tries once per run, records the try in the
// delivery log, and fails on anything but a 2xx so the job runner retries it
// with exponential backoff and jitter, up to the webhook's maxAttempts. A
// delivery whose last try failed is dead; after DISABLE_AFTER dead deliveries
// in a row the webhook is switched off, with the reason.
import { matchesPattern, type JobDefinition, type ModuleContext, type PlinthEvent, type Row, type Subscriber } from '../../../core/plugin-api.ts';
import { envelope } from './envelope.ts';
import { webhookHeaders } from './signature.ts';

export const DISABLE_AFTER = 5;
const BODY_KEPT = 4096;
export const DELIVER_JOB = 'core.deliver-webhook';

export interface DeliveryJob {
  webhookId: string;
  event: PlinthEvent;
}

export const webhookSubscriber: Subscriber = {
  events: ['*'],
  // a burst of events costs one look at the tenant's webhooks and one insert of their deliveries
  async handleMany(ctx, events) {
    // a ping goes to its own webhook only, at once (routes.ts)
    const news = events.filter((e) => e.type !== 'core.webhook.ping');
    if (!news.length) return;
    const hooks = await ctx.data('Webhook').find({ active: true }, { limit: 10_000 });
    const deliveries = [];
    for (const event of news) {
      for (const hook of hooks) {
        if ((hook.events as string[]).some((p) => matchesPattern(p, event.type))) deliveries.push({ data: { webhookId: hook.id, event } satisfies DeliveryJob, attempts: hook.maxAttempts as number });
      }
    }
    await ctx.enqueueMany(DELIVER_JOB, deliveries);
  },
};

/** One try: sign, send, record. `hook` is the webhook read with its secret (reveal). Returns the delivery record; `ok` says whether the receiver took it. */
export async function tryDelivery(ctx: ModuleContext, hook: Row, event: PlinthEvent, attempt: number, last: boolean): Promise<{ ok: boolean; delivery: Row; error?: string }> {
  const body = envelope(event);
  const headers = webhookHeaders(hook.secret as string, event.id, Math.floor(Date.now() / 1000), body);
  let status: number | null = null;
  let durationMs: number;
  let responseBody: string | null = null;
  let error: string | undefined;
  const started = performance.now();
  try {
    const res = await ctx.http.postJson(hook.url, body, headers);
    ({ status, durationMs } = res);
    responseBody = res.body.slice(0, BODY_KEPT);
    if (status < 200 || status > 299) error = `the receiver answered ${status}`;
  } catch (err) {
    durationMs = Math.round(performance.now() - started);
    error = (err as Error).message;
  }
  const ok = error === undefined;
  // the log is the system's record, whoever caused the try
  const delivery = await ctx
    .system()
    .data('WebhookDelivery')
    .create({
      webhookId: hook.id,
      eventId: event.id,
      eventType: event.type,
      attempt,
      status: ok ? 'succeeded' : last ? 'dead' : 'failed',
      responseStatus: status,
      durationMs,
      error: error?.slice(0, 1000) ?? null,
      responseBody,
    });
  return { ok, delivery, error };
}

export const deliverWebhook: JobDefinition<DeliveryJob> = {
  attempts: 8,
  retryDelaySeconds: 5,
  retryDelayMaxSeconds: 3600,
  timeoutSeconds: 60,
  async handle(ctx, { webhookId, event }, run) {
    // one read: the webhook as it is now, with its signing key
    const hook = await ctx.data('Webhook').reveal(webhookId, ['secret']);
    // deleted or switched off since: nothing more to deliver
    if (!hook?.active) return;
    const { ok, error } = await tryDelivery(ctx, hook, event, run.attempt, run.attempt >= run.attempts);
    if (!ok) throw new Error(error);
    if (hook.failureCount > 0) await ctx.data('Webhook').update(hook.id, {}, { set: { failureCount: 0 } });
  },
  async dead(ctx, { webhookId }, error) {
    await ctx.transaction(async (tx) => {
      const hooks = tx.data('Webhook');
      const [found] = await hooks.find({ id: webhookId });
      if (!found) return;
      const hook = await hooks.lock(found.id);
      const failureCount = (hook.failureCount as number) + 1;
      const off = failureCount >= DISABLE_AFTER && hook.active;
      const disabledReason = `switched off after ${failureCount} deliveries in a row failed every try; the last: ${error}`.slice(0, 500);
      await hooks.update(hook.id, off ? { active: false } : {}, { set: off ? { failureCount, disabledReason } : { failureCount } });
    });
  },
};
