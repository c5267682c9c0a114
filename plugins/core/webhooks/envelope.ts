// What a receiver gets: the event as JSON, the same for every try of it (a
// replay too), so webhook-id deduplicates; the Standard Webhooks headers sign it.
import type { PlinthEvent } from '../../../core/plugin-api.ts';

export function envelope(event: PlinthEvent): string {
  return JSON.stringify({
    id: event.id,
    type: event.type,
    timestamp: event.occurredAt,
    tenant: event.tenantId,
    companyId: event.companyId,
    entity: event.entity,
    entityId: event.entityId,
    actor: event.actor,
    payloadVersion: event.payloadVersion,
    data: event.payload,
  });
}
