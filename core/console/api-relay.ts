// The API for a page's own scripts (a board's drag and drop, a dashboard's
// layout): /console/api/<path> answers as /api/<path> would (a problem's texts
// in the user's words, so no script shows a validator phrase), with the session's
// access token, which the page cannot read (httpOnly). A change must carry the
// page's CSRF token (header x-csrf-token, from <meta name="csrf-token">), so a
// cross-site page cannot use the relay; the login, refresh and logout routes
// are not relayed: the console owns the session.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ConsoleApi, LoginRequired, type Problem } from './api-client.ts';
import { fieldSentence, isShowable, parseFieldMessage, problemReason, problemSentence } from './problem-texts.ts';
import { sayFrom } from './texts.ts';

const NOT_RELAYED = /^auth\/(login|refresh|logout)(\/|$)/;
const PASSED_BACK = ['content-type', 'etag', 'location', 'content-language', 'retry-after', 'content-disposition', 'x-content-type-options'];

/**
 * A problem as a page's script shows it: its title, reason and field errors as
 * sentences in the user's language (problem-texts.ts), its code and status as
 * the API gave them, so no script shows a validator phrase or a route.
 */
async function inWords(api: ConsoleApi, problem: Problem): Promise<Problem> {
  const texts = await api.get<{ texts: Record<string, Record<string, string>> }>('/api/translations/catalog?namespaces=console');
  const say = sayFrom(texts.ok ? texts.body.texts.console : {});
  // a module's own words stay when they are fit to show (no route, SQL or validator phrase)
  const reason = problemReason(problem, say) ?? (isShowable(problem.detail) ? problem.detail : undefined);
  const { detail: _detail, ...rest } = problem;
  return {
    ...rest,
    title: problemSentence(problem, say),
    ...(reason ? { detail: reason } : {}),
    ...(problem.errors ? { errors: problem.errors.map((e) => ({ ...e, message: parseFieldMessage(e.message) || !isShowable(e.message) ? fieldSentence(e, say).message : e.message })) } : {}),
  };
}

export function registerApiRelay(app: FastifyInstance): void {
  const relay = async (request: FastifyRequest, reply: import('fastify').FastifyReply) => {
    const rest = (request.params as { '*': string })['*'];
    if (NOT_RELAYED.test(rest)) return reply.code(404).type('application/problem+json').send({ type: 'about:blank', status: 404, code: 'NOT_FOUND', title: 'Not found' });
    const query = request.url.includes('?') ? request.url.slice(request.url.indexOf('?')) : '';
    const ifMatch = request.headers['if-match'];
    try {
      const api = new ConsoleApi(app, request, reply);
      const res = await api.call(request.method as 'GET', `/api/${rest}${query}`, request.body ?? undefined, ifMatch ? { 'if-match': ifMatch } : {});
      for (const h of PASSED_BACK) if (res.headers[h] !== undefined) reply.header(h, res.headers[h]);
      // a file goes as its bytes; JSON as the API wrote it; a problem in the user's words
      const type = String(res.headers['content-type'] ?? '');
      const body = type.includes('problem+json') ? await inWords(api, res.body as Problem) : res.body;
      return reply.code(res.status).send(/json/.test(type) ? JSON.stringify(body) : (res.raw ?? null));
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
