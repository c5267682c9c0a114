// POST /api/webhooks/:id/ping: one signed test delivery now, recorded in the
// delivery log and answered with its record. POST /api/webhook-deliveries/:id/replay:
// the delivery's event delivered again as a new series of tries, while the
// outbox keeps the event.
import { v7 as uuidv7 } from 'uuid';
import { handler, httpError, Type } from '../../../core/plugin-api.ts';
import { DELIVER_JOB, tryDelivery, type DeliveryJob } from './deliver.ts';

const IdParams = Type.Object({ id: Type.String({ format: 'uuid' }) }, { additionalProperties: false });

export const pingWebhook = handler(
  { params: IdParams, response: { 201: Type.Ref('CoreWebhookDelivery', { description: 'The delivery record of the ping', headers: ['Location'] }) } },
  async (ctx, request, reply) => {
    const hook = await ctx.data('Webhook').reveal(request.params.id, ['secret']);
    if (!hook) throw httpError('NOT_FOUND', `Webhook ${request.params.id} does not exist`);
    const event = {
      id: uuidv7(),
      type: 'core.webhook.ping',
      tenantId: ctx.tenantId,
      companyId: ctx.companyId,
      entity: 'Webhook',
      entityId: hook.id,
      actor: { kind: ctx.principal.kind, id: ctx.principal.id },
      occurredAt: new Date().toISOString(),
      payload: { webhookId: hook.id },
      payloadVersion: 1,
    };
    const { delivery } = await tryDelivery(ctx, hook, event, 1, true);
    reply.code(201).header('location', `/api/webhook-deliveries/${delivery.id}`);
    return ctx.data('WebhookDelivery').toDto(delivery);
  },
);

export const replayDelivery = handler(
  {
    params: IdParams,
    response: {
      202: Type.Object(
        { jobId: Type.String({ description: "the delivery job; its tries appear in the webhook's delivery log" }) },
        { additionalProperties: false, description: 'The event is queued for delivery' },
      ),
    },
  },
  async (ctx, request, reply) => {
    const delivery = await ctx.data('WebhookDelivery').read(request.params.id);
    const hook = await ctx.data('Webhook').read(delivery.webhookId);
    if (!hook.active) throw httpError('CONFLICT', 'the webhook is switched off: switch it on (active: true) first');
    if (delivery.eventType === 'core.webhook.ping') throw httpError('CONFLICT', 'a ping is not replayed: send a new one (POST /api/webhooks/{id}/ping)');
    const event = await ctx.event(delivery.eventId);
    if (!event) throw httpError('CONFLICT', `the event ${delivery.eventId} is no longer kept (EVENTS_RETENTION_DAYS)`);
    const jobId = await ctx.enqueue(DELIVER_JOB, { webhookId: hook.id, event } satisfies DeliveryJob, { attempts: hook.maxAttempts });
    return reply.code(202).send({ jobId });
  },
);
