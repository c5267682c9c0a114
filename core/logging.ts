// pino settings: one line per request with request id, tenant and user, and no
// credential ever written (authorization headers, passwords, tokens, secrets).
import type { FastifyInstance } from 'fastify';

export const REDACT = [
  'req.headers.authorization', 'req.headers.cookie', 'headers.authorization',
  '*.password', '*.passwordHash', '*.refreshToken', '*.accessToken', '*.token', '*.secret', '*.jwtSecret',
];

export function loggerOptions(level: string, extra?: boolean | Record<string, unknown>) {
  return { level, redact: { paths: REDACT, censor: '[redacted]' }, ...(typeof extra === 'object' ? extra : {}) };
}

export function installRequestLog(app: FastifyInstance): void {
  app.addHook('onResponse', async (request, reply) => {
    request.log.info({
      method: request.method, url: request.url.split('?')[0], status: reply.statusCode,
      ms: Math.round(reply.elapsedTime * 10) / 10, tenant: request.caller?.tid, user: request.caller?.sub,
    }, 'request');
  });
}
