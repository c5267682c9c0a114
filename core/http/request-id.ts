// Each request's id: the client's X-Request-Id when it is a short, plain token
// (so a caller can follow its own id through the logs), else a new UUID. Every
// answer echoes it in X-Request-Id, and every problem document carries it too,
// so a report quoting either finds the log line.
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { IncomingMessage } from 'node:http';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;
const REQUEST_ID_HEADER = 'x-request-id';

/** Fastify's genReqId option (with requestIdHeader: false, which would take the header unchecked). */
export function requestIdOf(req: IncomingMessage): string {
  const h = req.headers[REQUEST_ID_HEADER];
  return typeof h === 'string' && REQUEST_ID.test(h) ? h : randomUUID();
}

/** Install before any hook that may refuse a request: refusals echo the id too. */
export function installRequestIdHeader(app: FastifyInstance): void {
  app.addHook('onRequest', (request, reply, done) => {
    reply.header(REQUEST_ID_HEADER, request.id);
    done();
  });
}

/** Router errors (see security-headers.ts withSecurityHeaders) are answered before any hook runs. */
export function withRequestId<E>(handler: (err: E, request: FastifyRequest, reply: FastifyReply) => unknown) {
  return (err: E, request: FastifyRequest, reply: FastifyReply) => {
    reply.header(REQUEST_ID_HEADER, request.id);
    return handler(err, request, reply);
  };
}
