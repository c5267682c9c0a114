// pino settings: one line per request with request id, tenant and user, and no
// credential ever written (authorization headers, passwords, tokens, secrets).
import type { FastifyInstance } from 'fastify';

export const REDACT = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  '*.password',
  '*.passwordHash',
  '*.refreshToken',
  '*.accessToken',
  '*.token',
  '*.secret',
  '*.jwtSecret',
  '*.secretKey',
];

/** pino options; extra ones (a stream, a level) are merged, and never drop the redaction. */
export function loggerOptions(level: string, extra?: boolean | Record<string, unknown>) {
  const more = typeof extra === 'object' ? extra : {};
  const redact = more.redact as string[] | { paths?: string[] } | undefined;
  const paths = [...REDACT, ...(Array.isArray(redact) ? redact : (redact?.paths ?? []))];
  return { level, ...more, redact: { paths, censor: '[redacted]' } };
}

export function installRequestLog(app: FastifyInstance): void {
  app.addHook('onResponse', async (request, reply) => {
    // tenant and user are null, not absent, when nobody authenticated: every line has the same keys
    request.log.info(
      {
        method: request.method,
        url: request.url.split('?')[0],
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime * 10) / 10,
        tenant: request.tenant?.id ?? request.caller?.tid ?? null,
        user: request.principal?.id ?? request.caller?.sub ?? null,
      },
      'request',
    );
  });
}
