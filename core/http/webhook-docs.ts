// The OpenAPI 3.1 `webhooks` section: every event type a receiver can get,
// derived from the event catalog (generated CRUD events carry their entity's
// row and the changed fields; domain events the payload schema their manifest
// declares), each with the Standard Webhooks headers and the envelope
// plugins/core/webhooks/envelope.ts sends.
import type { Kernel } from '../kernel.ts';
import { outputSchema, schemaId } from './json-schemas.ts';

const ref = (id: string) => ({ $ref: `#/components/schemas/${id}` });

/** A schema put into the document as is (@fastify/swagger leaves webhooks alone): its references by $id (a json field's named schema) made component references. */
function componentRefs(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(componentRefs);
  if (!schema || typeof schema !== 'object') return schema;
  return Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, k === '$ref' && typeof v === 'string' && !v.startsWith('#') ? ref(v).$ref : componentRefs(v)]));
}

const HEADERS = [
  { name: 'webhook-id', description: 'the event id (UUIDv7): the same on every try and replay, so a receiver can drop duplicates', schema: { type: 'string', format: 'uuid' } },
  { name: 'webhook-timestamp', description: 'seconds since the epoch when this try was signed; refuse old ones', schema: { type: 'string', pattern: '^\\d+$' } },
  {
    name: 'webhook-signature',
    description: "`v1,` then the base64 HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<body>` under the webhook's secret (the bytes after `whsec_`, base64-decoded)",
    schema: { type: 'string', pattern: '^v1,[A-Za-z0-9+/]+=*$' },
  },
].map((h) => ({ ...h, in: 'header', required: true }));

/** A field's value before or after: any JSON value, said as the JSON types so clients get a union, not unknown. */
const VALUE = { type: ['object', 'array', 'string', 'number', 'boolean', 'null'] };

const CHANGES = {
  type: 'object',
  description: 'the fields the write changed, each with its value before and after (all fields on a create or delete)',
  additionalProperties: { type: 'object', properties: { before: VALUE, after: VALUE }, required: ['before', 'after'], additionalProperties: false },
};

function envelope(type: string, data: Record<string, unknown>) {
  return {
    type: 'object',
    required: ['id', 'type', 'timestamp', 'tenant', 'companyId', 'entity', 'entityId', 'actor', 'payloadVersion', 'data'],
    additionalProperties: false,
    properties: {
      id: { type: 'string', format: 'uuid', description: 'the event id, as in webhook-id' },
      type: { type: 'string', const: type },
      timestamp: { type: 'string', format: 'date-time', description: 'when the change committed' },
      tenant: { type: 'string' },
      companyId: { type: ['string', 'null'], format: 'uuid' },
      entity: { type: ['string', 'null'] },
      entityId: { type: ['string', 'null'] },
      actor: {
        type: 'object',
        required: ['kind', 'id'],
        additionalProperties: false,
        properties: { kind: { type: 'string', enum: ['user', 'client', 'system'] }, id: { type: ['string', 'null'] } },
      },
      payloadVersion: { type: 'integer', minimum: 1 },
      data,
    },
  };
}

/** The `webhooks` object of the OpenAPI document; `components`: the schema ids the document holds (an entity without routes has none: its row is inlined). */
export function webhookDocs(kernel: Kernel, components: Set<string>): Record<string, unknown> {
  const rowSchema = (entity: string) => {
    const model = kernel.model(entity);
    if (components.has(schemaId(model))) return ref(schemaId(model));
    const { $id: _id, ...inline } = outputSchema(model) as Record<string, unknown>;
    return componentRefs(inline) as Record<string, unknown>;
  };
  const moduleNames = new Map(kernel.modules.map((m) => [m.manifest.id, m.manifest.name]));
  const out: Record<string, unknown> = {};
  for (const e of kernel.events.types) {
    const data =
      e.kind === 'domain'
        ? { ...(e.payload as object), description: 'the payload the module declares for this event' }
        : {
            type: 'object',
            required: ['row', 'changes'],
            additionalProperties: false,
            properties: { row: { ...rowSchema(e.entity!), description: 'the row after the change (before it, for a delete), every translation included' }, changes: CHANGES },
          };
    const id = e.type.replace(/[.-]([a-z])/g, (_m, c: string) => c.toUpperCase());
    out[e.type] = {
      post: {
        operationId: `webhook${id[0].toUpperCase()}${id.slice(1)}`,
        summary: e.description,
        description: `Sent to every active webhook whose event patterns match "${e.type}" (POST /api/webhooks), once the change committed; retried with exponential backoff until the receiver answers 2xx.`,
        tags: [moduleNames.get(e.module) ?? e.module],
        security: [],
        parameters: HEADERS,
        requestBody: { required: true, content: { 'application/json': { schema: envelope(e.type, data) } } },
        responses: {
          '200': { description: 'Taken (any 2xx will do); anything else, or no answer within the timeout, is tried again later' },
          '400': { description: 'Refused (a failed try: retried like any other answer but 2xx)' },
        },
      },
    };
  }
  return out;
}
