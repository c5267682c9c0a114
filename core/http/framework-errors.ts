// Refusals made before any route runs, as problem details like every other
// error: what Node's HTTP parser refuses (431 headers too large, 408 too slow,
// 400 malformed), a Host-less HTTP/1.1 request, an Expect we cannot meet, and
// requests that arrive while the server is closing. Node and Fastify would
// answer these with their own bodies (or none).
import { randomUUID } from 'node:crypto';
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { ERRORS, httpError, type ErrorCode } from '../errors.ts';
import { PROBLEM_CONTENT_TYPE, problemBody } from './problem.ts';

/** A restarted instance (or another behind the balancer) answers within about this long. */
export const CLOSING_RETRY_AFTER_SECONDS = 2;

const PARSER_ERRORS: Record<string, [ErrorCode, string]> = {
  HPE_HEADER_OVERFLOW: ['HEADERS_TOO_LARGE', 'the request line and headers exceed the size the server reads'],
  HPE_CHUNK_EXTENSIONS_OVERFLOW: ['PAYLOAD_TOO_LARGE', 'the chunk extensions exceed the size the server reads'],
  ERR_HTTP_REQUEST_TIMEOUT: ['REQUEST_TIMEOUT', 'the request did not arrive in time'],
};

type ParserError = Error & { code?: string; reason?: string };

/** The whole HTTP response of a problem, for a socket that has no ServerResponse. */
function rawProblem(code: ErrorCode, detail: string): string {
  const status = ERRORS[code][0];
  const body = JSON.stringify(problemBody({ code, detail }, randomUUID()));
  return `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: ${PROBLEM_CONTENT_TYPE}; charset=utf-8\r\n` + `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
}

/**
 * Fastify's `clientErrorHandler` server option: Node's parser gave up on the
 * connection, so it is answered and closed. As Node itself does, nothing is
 * written once a response on this connection has begun: it would corrupt it.
 */
export function clientErrorHandler(this: FastifyInstance, err: ParserError, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const [code, detail] = PARSER_ERRORS[err.code ?? ''] ?? ['VALIDATION_FAILED', `malformed HTTP request: ${err.reason ?? err.code ?? 'unreadable'}`];
  this.log.debug({ err: { code: err.code, reason: err.reason } }, 'client error');
  const inFlight = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
  if (socket.writable && !inFlight?.headersSent) socket.write(rawProblem(code, detail));
  socket.destroy(err);
}

/** Node's `checkExpectation`: an Expect other than 100-continue, which Node would answer with a bare 417. */
function refuseExpectation(req: IncomingMessage, res: ServerResponse): void {
  const body = JSON.stringify(problemBody({ code: 'EXPECTATION_FAILED', detail: 'only "Expect: 100-continue" is supported' }, randomUUID(), req.url?.split('?')[0]));
  res.writeHead(417, { 'content-type': `${PROBLEM_CONTENT_TYPE}; charset=utf-8`, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/**
 * The refusals Fastify and Node would otherwise make themselves; needs the
 * server options `return503OnClosing: false` and `http: { requireHostHeader: false }`.
 * Install before any other onRequest hook: a refused request does no work.
 */
export function installRefusals(app: FastifyInstance): void {
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  app.server.on('checkExpectation', refuseExpectation);
  app.addHook('onRequest', (request, _reply, done) => {
    if (closing) {
      done(httpError('SERVICE_UNAVAILABLE', 'the server is shutting down; retry on a new connection', { headers: { 'retry-after': String(CLOSING_RETRY_AFTER_SECONDS), connection: 'close' } }));
    } else if (request.headers.host === undefined && request.raw.httpVersion === '1.1') {
      // RFC 9112 3.2: a server must answer 400 to an HTTP/1.1 request without Host
      done(httpError('VALIDATION_FAILED', 'an HTTP/1.1 request needs a Host header', { errors: [{ path: '/headers/host', message: 'is required' }], headers: { connection: 'close' } }));
    } else {
      done();
    }
  });
}
