// The actions a module declares on an entity's rows or list (GET /api/meta
// rowActions / listActions: lead conversion, key rotation, "mark all as read"),
// as pages: a form generated from the route's request body schema when it takes
// one, a confirmation when the manifest asks for one, then the API's answer in
// words. A secret the answer reveals (a new API key) is shown once; an answer
// naming a new row (Location) opens that row's page.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Problem } from './api-client.ts';
import { rowLabel, type FormData, type MetaAction, type MetaEntity, type Row } from './fields.ts';
import type { ConsoleRenderer, Page } from './shell.ts';
import { offeredOn } from './record-page.ts';
import { bodyFromForm, formFromBody, referencesOf, schemaInputs, type Choice, type JsonSchema } from './schema-form.ts';
import { formProblem, problemAlert } from './problem-texts.ts';
import { referenceOptions } from './references.ts';

interface Target {
  page: Page;
  entity: MetaEntity;
  action: MetaAction;
  row: Row | null;
  /** the page the action was asked from */
  back: string;
  url: string;
}

interface Actions {
  path: string;
  entityOf(page: Page, action?: 'read'): MetaEntity;
}

/** Form names of an action's body: body.<property> */
const PREFIX = 'body';

export function registerActionPages(app: FastifyInstance, ui: ConsoleRenderer, actions: Actions): void {
  const { path } = actions;

  /** The action the URL names, on the row it names (row actions) as this user sees it; else as if there were no page. */
  const target = async (request: FastifyRequest, reply: FastifyReply): Promise<Target | { failed: FastifyReply }> => {
    const page = await ui.load(request, reply);
    const entity = actions.entityOf(page);
    const { id, action: name } = request.params as { id?: string; action: string };
    const action = (id === undefined ? entity.listActions : entity.rowActions).find((a) => a.name === name);
    if (!action) throw Object.assign(new Error('no such action'), { statusCode: 404 });
    if (id === undefined) return { page, entity, action, row: null, back: path, url: request.url.split('?')[0] };
    const res = await page.api.get<Row>(`${entity.path}/${encodeURIComponent(id)}`);
    if (!res.ok) return { failed: ui.render(reply, page, 'problem', { title: entity.label, problem: problemAlert(res.body as unknown as Problem, page.text), back: path }, res.status) };
    if (!offeredOn(action, res.body)) throw Object.assign(new Error('not offered on this row'), { statusCode: 404 });
    return { page, entity, action, row: res.body, back: `${path}/${encodeURIComponent(id)}`, url: request.url.split('?')[0] };
  };

  const formPage = async (reply: FastifyReply, t: Target, form: FormData, problem?: Problem, errors: { path: string; message: string }[] = [], status = 200) => {
    const { page, action, row, entity } = t;
    const schema = action.body as JsonSchema | null;
    const worded = formProblem(problem, page.text, () => undefined);
    const fieldErrors = [...errors, ...(problem?.errors ?? []).map((e) => ({ path: e.path, message: worded.byField.get(e.path.split('/')[1] ?? '')?.[0] ?? e.message }))];
    const inputs = schema ? schemaInputs(schema, form, page.text, { prefix: PREFIX, errors: fieldErrors, choices: await choicesOf(page, schema) }) : null;
    return ui.render(
      reply,
      page,
      'action',
      {
        title: row ? `${action.label}: ${rowLabel(entity, row)}` : action.label,
        summary: action.summary,
        confirm: action.confirm ? page.text('action.confirm') : null,
        inputs: inputs?.inputs ?? [],
        general: inputs?.errors ?? [],
        problem: problem ? { ...problemAlert(problem, page.text), items: [] } : null,
        url: t.url,
        back: t.back,
        label: action.label,
      },
      status,
    );
  };

  const show = async (request: FastifyRequest, reply: FastifyReply) => {
    const t = await target(request, reply);
    if ('failed' in t) return t.failed;
    const schema = t.action.body as JsonSchema | null;
    return formPage(reply, t, schema ? formFromBody(schema, {}, PREFIX) : {});
  };

  const run = async (request: FastifyRequest, reply: FastifyReply) => {
    const t = await target(request, reply);
    if ('failed' in t) return t.failed;
    const { page, action } = t;
    const form = (request.body ?? {}) as FormData;
    const schema = action.body as JsonSchema | null;
    const parsed = schema ? bodyFromForm(schema, form, { prefix: PREFIX, say: page.text }) : { body: undefined, errors: [] };
    if (parsed.errors.length) return formPage(reply, t, form, undefined, parsed.errors, 400);
    const res = await page.api.call<Row>(action.method, action.path.replace('{id}', encodeURIComponent(t.row?.id ?? '')), parsed.body);
    if (!res.ok) return formPage(reply, t, form, res.body as unknown as Problem, [], res.status);
    const secret = action.reveals ? res.body?.[action.reveals] : undefined;
    if (typeof secret === 'string') return ui.render(reply, page, 'revealed', revealedData(page, action.label, secret, t.back));
    // a new row the answer names (a converted lead's customer): its page
    const made = consolePathOf(page, String(res.headers.location ?? ''));
    const notice = encodeURIComponent(action.name);
    return reply.redirect(`${made ?? t.back}?done=${notice}`, 303);
  };

  app.get(`${path}/do/:action`, show);
  app.post(`${path}/do/:action`, { preHandler: app.csrfProtection }, run);
  app.get(`${path}/:id/do/:action`, show);
  app.post(`${path}/:id/do/:action`, { preHandler: app.csrfProtection }, run);
}

/** A secret shown this once, with a copy button and a warning. */
export const revealedData = (page: Page, title: string, secret: string, back: string) => ({ title, secret, warning: page.text('revealed.warning'), back });

/** The console page of an API row URL (/api/crm/customers/<id> → /crm/customers/<id>), if the user has one. */
function consolePathOf(page: Page, location: string): string | null {
  for (const e of page.meta.entities) {
    if (!e.path || e.path.includes(':') || !location.startsWith(`${e.path}/`)) continue;
    const id = location.slice(e.path.length + 1);
    const own = page.pathOf(e.name);
    if (own && /^[^/?#]+$/.test(id)) return `${own}/${id}`;
  }
  return null;
}

/** The options of properties naming rows of an entity (x-entity), read as the user. */
async function choicesOf(page: Page, schema: JsonSchema): Promise<Record<string, Choice[]>> {
  const choices: Record<string, Choice[]> = {};
  for (const { pointer, entity } of referencesOf(schema)) {
    const options = await referenceOptions(page, { name: pointer, type: 'ref', entity } as Parameters<typeof referenceOptions>[1], '', '');
    choices[pointer] = options.map((o) => ({ value: o.value, label: o.label }));
  }
  return choices;
}
