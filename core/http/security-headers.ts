// Security headers on every response (@fastify/helmet): nosniff, frame and
// referrer policies, cross-origin isolation, HSTS, and a Content-Security-Policy
// fit for a JSON API and a server-rendered console on one origin. Swagger UI
// (/api-docs) runs under it: its page loads only same-origin scripts and styles
// and a data: logo. Registered before every other hook, so refusals carry them too.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fastifyHelmet from '@fastify/helmet';
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

export async function installSecurityHeaders(app: FastifyInstance): Promise<void> {
  await app.register(fastifyHelmet, OPTIONS);
}

const setHeaders = helmet(OPTIONS);

/**
 * Router errors (a malformed URL, an over-long parameter) are answered through
 * Fastify's frameworkErrors option before any hook runs: the same headers there.
 */
export function withSecurityHeaders<E>(handler: (err: E, request: FastifyRequest, reply: FastifyReply) => unknown) {
  return (err: E, request: FastifyRequest, reply: FastifyReply) => {
    setHeaders(request.raw, reply.raw, () => undefined);
    return handler(err, request, reply);
  };
}
