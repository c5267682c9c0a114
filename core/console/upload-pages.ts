// A file added to a record's related list (a task's attachments): the
// browser's multipart form streamed on to the API route the module declares
// for it (GET /api/meta related[].upload), as the user, never held whole in
// memory. Done: back to the record's page; refused (too large, a type the
// module does not take): the page with the API's reason in words.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Problem } from './api-client.ts';
import type { MetaEntity, Row } from './fields.ts';
import type { ConsoleRenderer, Page } from './shell.ts';
import { problemAlert } from './problem-texts.ts';
import type { RecordPage } from './line-pages.ts';

interface Uploads {
  path: string;
  entityOf(page: Page): MetaEntity;
  recordPage: RecordPage;
}

/** A plain form's token is in its action's query (its body is the file, read by the API only). */
const tokenFromQuery = async (request: FastifyRequest) => {
  const token = (request.query as { _csrf?: unknown })._csrf;
  if (typeof token === 'string' && request.headers['x-csrf-token'] === undefined) request.headers['x-csrf-token'] = token;
};

export function registerUploadPages(app: FastifyInstance, ui: ConsoleRenderer, uploads: Uploads): void {
  const { path } = uploads;
  app.post(
    `${path}/:id/upload/:key`,
    // the API reads the multipart body; the CSRF token comes as a header (script) or in the query (a plain form)
    { config: { multipart: true }, preHandler: [tokenFromQuery, app.csrfProtection] },
    async (request, reply) => {
      const page = await ui.load(request, reply);
      const entity = uploads.entityOf(page);
      const { id, key } = request.params as { id: string; key: string };
      const related = entity.related.find((r) => r.upload && `${r.entity}.${r.field}` === key);
      if (!related?.upload || !request.headers['content-type']?.startsWith('multipart/form-data')) throw Object.assign(new Error('no such upload'), { statusCode: 404 });
      const res = await page.api.upload(related.upload.replace('{id}', encodeURIComponent(id)), request.raw, {
        'content-type': request.headers['content-type'],
        ...(request.headers['content-length'] ? { 'content-length': request.headers['content-length'] } : {}),
      });
      const url = `${path}/${encodeURIComponent(id)}`;
      const anchor = `#related-${related.entity}-${related.field}`;
      // a script's upload (XMLHttpRequest, for its progress) reads the answer; a plain form follows the redirect
      if (request.headers['x-requested-with'] === 'upload')
        return reply
          .code(res.status)
          .type('application/json')
          .send({ ok: res.ok, message: res.ok ? null : problemAlert(res.body as Problem, page.text).title });
      if (res.ok) return reply.redirect(`${url}?notice=saved${anchor}`, 303);
      const record = await page.api.get<Row>(`${entity.path}/${encodeURIComponent(id)}`);
      if (!record.ok) return ui.render(reply, page, 'problem', { title: entity.label, problem: problemAlert(record.body as unknown as Problem, page.text), back: path }, record.status);
      const data = await uploads.recordPage(page, entity, record.body, {}, { problem: problemAlert(res.body as Problem, page.text) });
      return ui.render(reply, page, 'detail', data, res.status);
    },
  );
}
