// docs/reference/events.md: every event type, from the OpenAPI document's
// webhooks (one per type the loaded modules emit: their manifests' "events" and
// the generated <module>.<entity>.<created|updated|deleted>), each with what it
// says and the payload ("data") it carries; first the envelope every event shares.
import { banner, code, table } from './markdown.ts';
import type { OpenApiDocument, Schema } from './openapi.ts';

const bodyOf = (op: { requestBody?: { content: Record<string, { schema: Schema }> } }) => op.requestBody!.content['application/json'].schema;

/** A schema's type in a few words: a component's name, a format, a type list, an array's items, an object's fields. */
function typeOf(s: Schema): string {
  if (s.$ref) return s.$ref.split('/').pop()!;
  if ('const' in s) return JSON.stringify(s.const);
  if (s.enum) return s.enum.map((v) => JSON.stringify(v)).join(' | ');
  if (s.anyOf) return s.anyOf.map(typeOf).join(' | ');
  if (s.items) return `${typeOf(s.items)}[]`;
  if (s.properties) return `{ ${fieldsOf(s).join(', ')} }`;
  const types = Array.isArray(s.type) ? s.type : [s.type ?? 'any'];
  return types.map((t) => (t === 'string' && s.format ? s.format : t)).join(' | ');
}

/** An object's fields as `name: type`, `?` marking an optional one. */
function fieldsOf(s: Schema): string[] {
  const required = new Set(s.required ?? []);
  return Object.entries(s.properties ?? {}).map(([name, f]) => `${name}${required.has(name) ? '' : '?'}: ${typeOf(f)}`);
}

/** The payload, one code span per field. */
const payload = (s: Schema) => (s.properties ? fieldsOf(s).map(code).join(', ') : code(typeOf(s)));

export function eventsPage(doc: OpenApiDocument): string {
  const types = Object.keys(doc.webhooks).sort();
  const first = doc.webhooks[types[0]].post;
  const envelope = bodyOf(first);
  const required = new Set(envelope.required ?? []);
  const fields = Object.entries(envelope.properties ?? {}).map(([name, s]) => [
    code(name),
    typeOf(s).replace(/^"[^"]*"$/, 'string'),
    required.has(name) ? 'yes' : '',
    name === 'type' ? 'the event type' : (s.description ?? ''),
  ]);
  const headers = (first.parameters ?? []).filter((p) => p.in === 'header').map((p) => [code(p.name), p.description ?? '']);
  const answers = Object.entries(first.responses).map(([status, r]) => [status, r.description ?? '']);
  const byTag = new Map<string, string[][]>();
  for (const type of types) {
    const op = doc.webhooks[type].post;
    const tag = op.tags?.[0] ?? 'Other';
    byTag.set(tag, [...(byTag.get(tag) ?? []), [code(type), op.summary ?? '', payload(bodyOf(op).properties!.data)]]);
  }
  return [
    banner('manifests', 'core/http/webhook-docs.ts'),
    '# Events',
    `Every write of an entity emits \`<module>.<entity>.<created|updated|deleted>\` (unless the entity says \`"events": false\`), and module code emits the events its manifest declares. Subscribers receive them, and so do webhooks. ${first.description?.replace(types[0], '<type>') ?? ''} This page is made from the \`webhooks\` of the OpenAPI document the server publishes (\`GET /api-docs/json\`): ${types.length} event types of the loaded modules.`,
    '## Every event',
    'A webhook request carries these headers (the Standard Webhooks scheme):',
    table(['header', 'meaning'], headers),
    "and a JSON body, the envelope, whose `data` is the event's own payload:",
    table(['field', 'type', 'always', 'meaning'], fields),
    'The receiver answers:',
    table(['status', 'meaning'], answers),
    ...[...byTag.entries()].flatMap(([tag, rows]) => [`## ${tag}`, table(['type', 'when', '`data`'], rows)]),
  ].join('\n\n');
}
