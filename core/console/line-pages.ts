// The line editor's writes (line-editor.ts): add, change and remove one row
// living under a record's path, through that path's API routes as the user.
// Done: back to the record's page (htmx swaps its <main>, so derived totals
// show the API's new values). Refused: the record's page again, what was typed
// and the API's errors beside the row.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Problem } from './api-client.ts';
import { bodyOf, type FormData, type MetaEntity, type MetaRelated, type Row } from './fields.ts';
import { lineFields, type LineErrors } from './line-editor.ts';
import { composeOf, editedInPlace } from './record-page.ts';
import type { ConsoleRenderer, Page } from './shell.ts';
import { problemAlert, type ProblemAlert } from './problem-texts.ts';

/** The view data of a record's page, with a line's refusal beside it or a problem above it. */
export type RecordPage = (
  page: Page,
  entity: MetaEntity,
  row: Row,
  query: Record<string, string | undefined>,
  extra: { lineErrors?: LineErrors; problem?: ProblemAlert },
) => Promise<Record<string, unknown>>;

interface Lines {
  path: string;
  entityOf(page: Page, action?: 'read' | 'update'): MetaEntity;
  recordPage: RecordPage;
}

export function registerLinePages(app: FastifyInstance, ui: ConsoleRenderer, lines: Lines): void {
  const { path } = lines;

  /** The record, the related list the URL names (lines: nested ones; compose: short rows) and its entity, as this user sees them. */
  const target = async (request: FastifyRequest, reply: FastifyReply, kind: 'lines' | 'compose' = 'lines') => {
    const page = await ui.load(request, reply);
    const entity = lines.entityOf(page);
    const { id, key } = request.params as { id: string; key: string };
    const related = entity.related.find((r) => `${r.entity}.${r.field}` === key);
    const child = related ? page.entity(related.entity) : undefined;
    if (!related || !child) throw Object.assign(new Error('no such list'), { statusCode: 404 });
    if (kind === 'compose' ? !composeOf(child, related, '') : !related.nested && !editedInPlace(page, child)) throw Object.assign(new Error('no such list'), { statusCode: 404 });
    // a row under the record's path is addressed there; one edited in place through its own collection
    const base = related.nested ? related.path.replace('{id}', encodeURIComponent(id)) : child.path!;
    return { page, entity, id, key, related, child, base, url: `${path}/${encodeURIComponent(id)}` };
  };

  type Target = Awaited<ReturnType<typeof target>>;
  const answer = async (request: FastifyRequest, reply: FastifyReply, t: Target, res: { ok: boolean; status: number; body: unknown }, lineId: string | null, form: FormData, typed: string[] = []) => {
    if (res.ok && !typed.length) return reply.redirect(`${t.url}?notice=saved#related-${t.related.entity}-${t.related.field}`, 303);
    const record = await t.page.api.get<Row>(`${t.entity.path}/${encodeURIComponent(t.id)}`);
    if (!record.ok) return ui.render(reply, t.page, 'problem', { title: t.entity.label, problem: problemAlert(record.body as unknown as Problem, t.page.text), back: path }, record.status);
    const messages = typed.length ? typed : problemAlert(res.body as Problem, t.page.text, labelOf(t.child, t.related)).items;
    const fallback = typed.length ? [] : [problemAlert(res.body as Problem, t.page.text).title];
    const lineErrors: LineErrors = { key: t.key, lineId, messages: messages.length ? messages : fallback, values: form };
    return ui.render(reply, t.page, 'detail', await lines.recordPage(t.page, t.entity, record.body, request.query as Record<string, string | undefined>, { lineErrors }), res.ok ? 400 : res.status);
  };

  /** What the form itself refused (a number that is none): the page again, the messages beside the row. */
  const refuse = (request: FastifyRequest, reply: FastifyReply, t: Target, lineId: string | null, form: FormData, errors: { message: string }[]) =>
    answer(
      request,
      reply,
      t,
      { ok: true, status: 400, body: null },
      lineId,
      form,
      errors.map((e) => e.message),
    );

  app.post(`${path}/:id/compose/:key`, { preHandler: app.csrfProtection }, async (request, reply) => {
    const t = await target(request, reply, 'compose');
    const form = (request.body ?? {}) as FormData;
    const fields = t.child.fields.filter((f) => !f.readOnly && f.name !== t.related.field);
    const { body, errors } = bodyOf(fields, form, 'create', t.page.text);
    if (errors.length) return refuse(request, reply, t, COMPOSED, form, errors);
    return answer(request, reply, t, await t.page.api.call('POST', t.child.path!, { ...body, [t.related.field]: t.id }), COMPOSED, form);
  });

  app.post(`${path}/:id/lines/:key`, { preHandler: app.csrfProtection }, async (request, reply) => {
    const t = await target(request, reply);
    const form = (request.body ?? {}) as FormData;
    const { body, errors } = bodyOf(lineFields(t.child, t.related), form, 'create', t.page.text);
    if (errors.length) return refuse(request, reply, t, null, form, errors);
    // a row under the record's path takes the reference from it; one in its own collection names it
    return answer(request, reply, t, await t.page.api.call('POST', t.base, t.related.nested ? body : { ...body, [t.related.field]: t.id }), null, form);
  });

  app.post(`${path}/:id/lines/:key/:lineId`, { preHandler: app.csrfProtection }, async (request, reply) => {
    const t = await target(request, reply);
    const { lineId } = request.params as { lineId: string };
    const form = (request.body ?? {}) as FormData;
    const { body, errors } = bodyOf(lineFields(t.child, t.related), form, 'update', t.page.text);
    if (errors.length) return refuse(request, reply, t, lineId, form, errors);
    return answer(request, reply, t, await t.page.api.call('PATCH', `${t.base}/${encodeURIComponent(lineId)}`, body, ifMatch(form)), lineId, form);
  });

  app.post(`${path}/:id/lines/:key/:lineId/delete`, { preHandler: app.csrfProtection }, async (request, reply) => {
    const t = await target(request, reply);
    const { lineId } = request.params as { lineId: string };
    const form = (request.body ?? {}) as FormData;
    return answer(request, reply, t, await t.page.api.call('DELETE', `${t.base}/${encodeURIComponent(lineId)}`, undefined, ifMatch(form)), lineId, {});
  });
}

/** The line id of a refused compose form's errors (LineErrors) */
const COMPOSED = 'compose';

/** The version the row was shown at: a change made meanwhile is refused (412), not overwritten. */
const ifMatch = (form: FormData): Record<string, string> => {
  const version = String(form._version ?? '');
  return /^\d+$/.test(version) ? { 'if-match': `"${version}"` } : {};
};

const labelOf = (child: MetaEntity, related: MetaRelated) => (field: string) => lineFields(child, related).find((f) => f.name === field && !f.readOnly)?.label;
