// The API for a page's own scripts (a board's drag and drop, a dashboard's
// layout): /console/api/<path> answers as /api/<path> would, with the session's
// access token, which the page cannot read (httpOnly). A change must carry the
// page's CSRF token (header x-csrf-token, from <meta name="csrf-token">), so a
// cross-site page cannot use the relay; the login, refresh and logout routes
// are not relayed: the console owns the session.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ConsoleApi, LoginRequired } from './api-client.ts';

const NOT_RELAYED = /^auth\/(login|refresh|logout)(\/|$)/;
const PASSED_BACK = ['content-type', 'etag', 'location', 'content-language', 'retry-after', 'content-disposition', 'x-content-type-options'];

export function registerApiRelay(app: FastifyInstance): void {
  const relay = async (request: FastifyRequest, reply: import('fastify').FastifyReply) => {
    const rest = (request.params as { '*': string })['*'];
    if (NOT_RELAYED.test(rest)) return reply.code(404).type('application/problem+json').send({ type: 'about:blank', status: 404, code: 'NOT_FOUND', title: 'Not found' });
    const query = request.url.includes('?') ? request.url.slice(request.url.indexOf('?')) : '';
    const ifMatch = request.headers['if-match'];
    try {
      const res = await new ConsoleApi(app, request, reply).call(request.method as 'GET', `/api/${rest}${query}`, request.body ?? undefined, ifMatch ? { 'if-match': ifMatch } : {});
      for (const h of PASSED_BACK) if (res.headers[h] !== undefined) reply.header(h, res.headers[h]);
      // a file goes as its bytes; JSON as the API wrote it
      const json = /json/.test(String(res.headers['content-type'] ?? ''));
      return reply.code(res.status).send(json ? JSON.stringify(res.body) : (res.raw ?? null));
    } catch (err) {
      if (!(err instanceof LoginRequired)) throw err;
      return reply
        .code(401)
        .type('application/problem+json')
        .send({ type: 'about:blank', status: 401, code: 'UNAUTHENTICATED', title: 'Authentication required', detail: 'the console session ended; log in again' });
    }
  };
  app.get('/console/api/*', relay);
  for (const method of ['POST', 'PUT', 'PATCH', 'DELETE'] as const) app.route({ method, url: '/console/api/*', preHandler: app.csrfProtection, handler: relay });
}
