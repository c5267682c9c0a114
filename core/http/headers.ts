// The headers the API reads and writes, declared once so every route documents
// them the same way: a generated client learns of ETag, Location,
// Content-Language and Retry-After from the document, not from the README.
import { Type, type TSchema } from 'typebox';

/** Request: the company context; every authenticated route honours it (http/request-context.ts). */
export const COMPANY_HEADER = Type.Optional(Type.String({ format: 'uuid', description: "company context, one of the caller's companies; default: the caller's primary company" }));
export const IF_MATCH_HEADER = Type.Optional(Type.String({ description: 'ETag of the version this write is based on; 412 if stale' }));

/** Response headers, as OpenAPI response header schemas. */
export const RESPONSE_HEADERS = {
  ETag: { type: 'string', description: 'the version of the row, quoted ("3"); send it back as If-Match' },
  Location: { type: 'string', format: 'uri-reference', description: 'the path of the resource the request created' },
  'Content-Language': { type: 'string', description: 'languages of the translatable fields in the body (comma list)' },
  'Retry-After': { type: 'string', pattern: '^\\d+$', description: 'seconds to wait before trying again' },
  'Cache-Control': { type: 'string', description: 'no-store: keep tokens out of every cache' },
  'Content-Disposition': { type: 'string', description: 'attachment; filename="…"; filename*=UTF-8\'\'…: save the body as a file of this name' },
  'X-Content-Type-Options': { type: 'string', enum: ['nosniff'], description: 'nosniff: take Content-Type as sent' },
} as const;

export type ResponseHeader = keyof typeof RESPONSE_HEADERS;

/**
 * A success response in the form @fastify/swagger documents in full: its
 * description in words and the headers it carries (Fastify serialises the
 * `content` schema, as for the problem responses).
 */
export function success(schema: TSchema | Record<string, unknown>, description: string, headers: ResponseHeader[] = [], mediaType = 'application/json') {
  const documented = headers.length ? { headers: Object.fromEntries(headers.map((h) => [h, RESPONSE_HEADERS[h]])) } : {};
  if ((schema as { type?: unknown }).type === 'null') return { ...schema, description, ...documented };
  return { description, ...documented, content: { [mediaType]: { schema } } };
}
