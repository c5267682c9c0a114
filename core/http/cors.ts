// CORS for browser clients on other origins (a console or an integrator's web
// app), off unless CORS_ORIGINS names origins. A listed origin gets the CORS
// headers and its preflight (OPTIONS) a 204 before any authentication runs, as
// browsers send no Authorization header on a preflight; any other origin gets
// no CORS header at all, so the browser refuses to hand it the answer.
// Credentials stay off: the API authenticates with bearer tokens, not cookies.
import type { FastifyInstance } from 'fastify';
import cors from '@fastify/cors';

/** Request headers a cross-origin client may send. */
const CORS_ALLOWED_HEADERS = ['Authorization', 'Content-Type', 'If-Match', 'X-Company-Id', 'Accept-Language', 'Content-Language', 'X-Request-Id'];
/** Response headers a cross-origin client may read beside the CORS-safelisted ones. */
const CORS_EXPOSED_HEADERS = ['ETag', 'Location', 'Content-Language', 'Retry-After', 'X-Request-Id'];
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];
// browsers cap it (Chromium at 2 hours); 10 minutes keeps a changed list from lingering
const PREFLIGHT_MAX_AGE_SECONDS = 600;

export async function installCors(app: FastifyInstance, origins: string[]): Promise<void> {
  if (!origins.length) return;
  const any = origins.includes('*');
  const allowed = new Set(origins);
  await app.register(cors, {
    // a function, not the list: with a list the plugin still writes its other
    // headers (and answers the preflight) for origins the list does not hold
    origin: any ? '*' : (origin, done) => done(null, origin !== undefined && allowed.has(origin)),
    methods: METHODS,
    allowedHeaders: CORS_ALLOWED_HEADERS,
    exposedHeaders: CORS_EXPOSED_HEADERS,
    maxAge: PREFLIGHT_MAX_AGE_SECONDS,
    // the plugin's strict mode answers a bare OPTIONS with a text/plain 400; every error here is a problem document
    strictPreflight: false,
  });
}
