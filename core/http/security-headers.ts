// Security headers. Every response: nosniff, frame and referrer policies, HSTS,
// and the Content-Security-Policy a JSON API wants (nothing may load, nobody may
// frame it; OWASP REST Security). HTML pages (Swagger UI at /api-docs, the
// console) get helmet's full set instead: cross-origin isolation and a CSP under
// which a page loads only same-origin scripts and styles and a data: logo.
//
// helmet decides the page headers once, at start: @fastify/helmet would build
// helmet's middleware and parse the CSP again on every request (~3 % of a read's
// time), and its dozen headers on every JSON answer cost ~10 % more of a read.
// The API set is written in the first onRequest hook, so refusals carry it too.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import helmet from 'helmet';

const OPTIONS = {
  contentSecurityPolicy: {
    directives: {
      // helmet's defaults, except: Swagger UI's validator badge (an image, as
      // @fastify/swagger-ui's own static CSP allows), and no
      // upgrade-insecure-requests, which breaks plain-HTTP local starts in some browsers
      'img-src': ["'self'", 'data:', 'validator.swagger.io'],
      'upgrade-insecure-requests': null,
    },
  },
};

/** The headers helmet sets for OPTIONS, captured by running its middleware once. */
function helmetHeaders(): Record<string, string> {
  const headers: Record<string, string> = {};
  const res = {
    setHeader(name: string, value: unknown) {
      headers[name.toLowerCase()] = String(value);
    },
    removeHeader(name: string) {
      delete headers[name.toLowerCase()];
    },
  };
  let failure: unknown;
  helmet(OPTIONS)({} as never, res as never, (err?: unknown) => {
    failure = err;
  });
  if (failure) throw failure;
  return headers;
}

/** For HTML pages. */
const PAGE_HEADERS: Readonly<Record<string, string>> = Object.freeze(helmetHeaders());

/** For every response; what a page needs beyond it is added when the answer is HTML. */
const API_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-security-policy': "default-src 'none';frame-ancestors 'self'",
  'referrer-policy': PAGE_HEADERS['referrer-policy'],
  'strict-transport-security': PAGE_HEADERS['strict-transport-security'],
  'x-content-type-options': PAGE_HEADERS['x-content-type-options'],
  'x-frame-options': PAGE_HEADERS['x-frame-options'],
});

export function installSecurityHeaders(app: FastifyInstance): void {
  app.addHook('onRequest', (_request, reply, done) => {
    reply.headers(API_HEADERS);
    done();
  });
  app.addHook('onSend', (_request, reply, payload, done) => {
    const type = reply.getHeader('content-type');
    if (typeof type === 'string' && type.startsWith('text/html')) reply.headers(PAGE_HEADERS);
    done(null, payload);
  });
}

/**
 * Router errors (a malformed URL, an over-long parameter) are answered through
 * Fastify's frameworkErrors option before any hook runs: the same headers there.
 */
export function withSecurityHeaders<E>(handler: (err: E, request: FastifyRequest, reply: FastifyReply) => unknown) {
  return (err: E, request: FastifyRequest, reply: FastifyReply) => {
    reply.headers(API_HEADERS);
    return handler(err, request, reply);
  };
}
