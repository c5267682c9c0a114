// The generic pages of an entity, for every menu entry that names one: a list
// (columns, sort, filters, search, paging from `total`), a detail page, create
// and edit forms with a widget per field type, and delete after a confirmation.
// Nothing here knows an entity: fields, labels and columns come from GET
// /api/meta, rows from the entity's own API routes.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { bodyOf, fieldOfPointer, rowLabel, type FieldError, type FormData, type MetaEntity, type Row } from './fields.ts';
import { defaultsOf, fieldInput, foldForm, formOf, formSchemas, formValue } from './form-fields.ts';
import type { Problem } from './api-client.ts';
import { formProblem, labelsOf, problemAlert } from './problem-texts.ts';
import type { ConsoleRenderer, Page } from './shell.ts';
import { COOKIES } from './session.ts';
import { referenceLabels, referenceOptions } from './references.ts';
import { recordHub } from './record-page.ts';
import { columnsOf } from './columns.ts';
import { cellOf } from './cells.ts';
import { registerLinePages, type RecordPage } from './line-pages.ts';
import { registerUploadPages } from './upload-pages.ts';
import { registerActionPages, revealedData } from './action-pages.ts';
import type { RowPage } from './module-pages.ts';

interface Entry {
  path: string;
  entity: string;
  /**
   * a module's pages of one row (a project's board): linked from the detail
   * page; one at /delete draws the row's delete confirmation instead of the
   * generic one (what goes with the row, a confirmation the API asks for)
   */
  rowPages: RowPage[];
}

const PAGE_SIZES = [10, 25, 50, 100];
/** An entity's name for a text's placeholders: {entity} as labelled, {entityLower} in lower case ("New category") */
const named = (entity: MetaEntity) => ({ entity: entity.label, entityLower: entity.label.toLowerCase() });
/** ?notice= after a redirect: the key of its text */
const NOTICES: Record<string, string> = { created: 'notice.created', saved: 'notice.saved', deleted: 'notice.deleted' };
const problemOf = (body: unknown): Problem => body as Problem;

/** What a page says after a redirect: ?notice=saved, or ?done=<action> (any action the user may take, named by its label). */
function noticeOf(page: Page, query: Record<string, string | undefined>): string | undefined {
  if (query.notice && NOTICES[query.notice]) return page.text(NOTICES[query.notice]);
  if (!query.done) return undefined;
  const action = page.meta.entities.flatMap((e) => [...e.rowActions, ...e.listActions]).find((a) => a.name === query.done);
  return action ? page.text('notice.done', { action: action.label }) : undefined;
}

export function registerEntityPages(app: FastifyInstance, entry: Entry, ui: ConsoleRenderer): void {
  const { path } = entry;
  const ownDelete = entry.rowPages.some((p) => p.suffix === '/delete');
  const links = entry.rowPages.filter((p) => p.suffix !== '/delete');
  /** The entity as this user sees it; a page for an action they may not take is as if there were none. */
  const entityOf = (page: Page, action: MetaEntity['actions'][number] = 'read'): MetaEntity => {
    const entity = page.entity(entry.entity);
    // not readable by this user (or routed without a collection path): as if there were no page
    if (!entity?.path || entity.path.includes(':') || !entity.actions.includes(action)) throw Object.assign(new Error('no such page'), { statusCode: 404 });
    return entity;
  };
  const rowUrl = (entity: MetaEntity, id: string) => `${entity.path}/${encodeURIComponent(id)}`;
  const language = (request: FastifyRequest): Record<string, string> => {
    const chosen = request.cookies[COOKIES.language];
    return chosen ? { 'content-language': chosen } : {};
  };

  app.get(path, async (request, reply) => {
    const page = await ui.load(request, reply);
    const entity = entityOf(page);
    const query = request.query as Record<string, string | undefined>;
    const state = listState(entity, query);
    const res = await page.api.get<{ items: Row[]; total: number }>(`${entity.path}?${state.api}`);
    const problem = res.ok ? null : problemAlert(problemOf(res.body), page.text);
    const items = res.ok ? res.body.items : [];
    const total = res.ok ? res.body.total : 0;
    const columns = columnsOf(entity);
    const labels = await referenceLabels(page, columns, items);
    const link = (changes: Record<string, string | undefined>) => `${path}?${state.with(changes)}`;
    const pages = Math.max(1, Math.ceil(total / state.size));
    return ui.render(reply, page, 'list', {
      title: page.meta.menu.find((m) => m.path === path)?.label ?? entity.label,
      entity,
      path,
      problem,
      notice: noticeOf(page, query),
      canCreate: entity.actions.includes('create'),
      listActions: entity.listActions.map((a) => ({ label: a.label, summary: a.summary, url: `${path}/do/${a.name}`, direct: !a.confirm && !a.body && !a.reveals })),
      search: entity.fields.some((f) => f.search) ? { value: state.search } : null,
      filters: await filterInputs(page, entity, query),
      sizes: PAGE_SIZES.map((n) => ({ n, selected: n === state.size })),
      sort: state.sort,
      columns: columns.map((f) => {
        const direction = state.sort === f.name ? 'ascending' : state.sort === `-${f.name}` ? 'descending' : null;
        return { label: f.label, direction, sortUrl: f.sort ? link({ sort: direction === 'ascending' ? `-${f.name}` : f.name, page: undefined }) : null };
      }),
      rows: items.map((row) => ({
        url: `${path}/${encodeURIComponent(row.id)}`,
        label: rowLabel(entity, row),
        cells: columns.map((f) => cellOf(page, f, row[f.name], labels, row)),
      })),
      total,
      pageNo: state.page,
      pages,
      prevUrl: state.page > 1 ? link({ page: String(state.page - 1) }) : null,
      nextUrl: state.page < pages ? link({ page: String(state.page + 1) }) : null,
    });
  });

  app.get(`${path}/new`, async (request, reply) => {
    const page = await ui.load(request, reply);
    const entity = entityOf(page, 'create');
    // a related list's "New" names the record the row points at (?customerId=…): the form starts there
    const query = request.query as Record<string, string | undefined>;
    const given = Object.fromEntries(entity.fields.filter((f) => !f.readOnly && f.type === 'ref' && typeof query[f.name] === 'string').map((f) => [f.name, query[f.name]!.slice(0, 100)]));
    return ui.render(reply, page, 'form', await formData(page, entity, { mode: 'create', path, values: { ...defaultsOf(entity, { companyId: page.me.companyId }), ...given } }));
  });

  app.post(path, { preHandler: app.csrfProtection }, async (request, reply) => {
    const page = await ui.load(request, reply);
    const entity = entityOf(page, 'create');
    const form = (request.body ?? {}) as FormData;
    const { body, errors } = await formBody(page, entity, form, 'create');
    if (!errors.length) {
      const res = await page.api.call<Row>('POST', entity.path!, body, language(request));
      const secret = entity.createReveals ? res.body?.[entity.createReveals] : undefined;
      // a secret the answer holds this once (a new client's API key): shown now, never again
      if (res.ok && typeof secret === 'string')
        return ui.render(reply, page, 'revealed', revealedData(page, page.text('form.newTitle', named(entity)), secret, `${path}/${encodeURIComponent(res.body.id)}?notice=created`));
      if (res.ok) return reply.redirect(`${path}/${encodeURIComponent(res.body.id)}?notice=created`, 303);
      return ui.render(reply, page, 'form', await formData(page, entity, { mode: 'create', path, values: form, problem: problemOf(res.body) }), res.status);
    }
    return ui.render(reply, page, 'form', await formData(page, entity, { mode: 'create', path, values: form, errors }), 400);
  });

  app.get(`${path}/:id`, async (request, reply) => {
    // the module of the row's own pages, for their links' titles
    const page = await ui.load(request, reply, entry.rowPages[0]?.module);
    const entity = entityOf(page);
    const { id } = request.params as { id: string };
    const res = await page.api.get<Row>(rowUrl(entity, id));
    if (!res.ok) return ui.render(reply, page, 'problem', { title: entity.label, problem: problemAlert(problemOf(res.body), page.text), back: path }, res.status);
    const query = request.query as Record<string, string | undefined>;
    return ui.render(reply, page, 'detail', await detailData(page, entity, res.body, query, {}));
  });

  /** The record's page: its hub (record-page.ts), what it was asked to show (a notice), and the module's own pages of the row. */
  const detailData: RecordPage = async (page, entity, row, query, extra = {}) => {
    const url = `${path}/${encodeURIComponent(row.id)}`;
    const hub = await recordHub(page, entity, row, { path, url, query, lineErrors: extra.lineErrors });
    return {
      title: `${entity.label}: ${hub.heading}`,
      entity,
      path,
      url,
      hub,
      notice: noticeOf(page, query),
      problem: extra.problem ?? null,
      canEdit: entity.actions.includes('update'),
      canDelete: entity.actions.includes('delete'),
      links: links.map((p) => ({ title: page.moduleTexts[p.key] ?? p.title, url: `${url}${p.suffix}` })),
    };
  };

  registerLinePages(app, ui, { path, entityOf, recordPage: detailData });
  registerActionPages(app, ui, { path, entityOf });
  registerUploadPages(app, ui, { path, entityOf, recordPage: detailData });

  app.get(`${path}/:id/edit`, async (request, reply) => {
    const page = await ui.load(request, reply);
    const entity = entityOf(page, 'update');
    const { id } = request.params as { id: string };
    // every language of the translatable fields, for their inputs
    const res = await page.api.get<Row>(`${rowUrl(entity, id)}?translations=true`);
    if (!res.ok) return ui.render(reply, page, 'problem', { title: entity.label, problem: problemAlert(problemOf(res.body), page.text), back: path }, res.status);
    return ui.render(reply, page, 'form', await formData(page, entity, { mode: 'update', path, row: res.body, values: formOf(entity, res.body) }));
  });

  app.post(`${path}/:id`, { preHandler: app.csrfProtection }, async (request, reply) => {
    const page = await ui.load(request, reply);
    const entity = entityOf(page, 'update');
    const { id } = request.params as { id: string };
    const form = (request.body ?? {}) as FormData;
    const version = String(form._version ?? '');
    const { body, errors } = await formBody(page, entity, form, 'update');
    const row = { id, version: Number(version) } as Row;
    if (errors.length) return ui.render(reply, page, 'form', await formData(page, entity, { mode: 'update', path, row, values: form, errors }), 400);
    const res = await page.api.call<Row>('PATCH', rowUrl(entity, id), body, { ...language(request), ...(/^\d+$/.test(version) ? { 'if-match': `"${version}"` } : {}) });
    if (res.ok) return reply.redirect(`${path}/${encodeURIComponent(id)}?notice=saved`, 303);
    return ui.render(reply, page, 'form', await formData(page, entity, { mode: 'update', path, row, values: form, problem: problemOf(res.body) }), res.status);
  });

  if (!ownDelete)
    app.get(`${path}/:id/delete`, async (request, reply) => {
      const page = await ui.load(request, reply);
      const entity = entityOf(page, 'delete');
      const { id } = request.params as { id: string };
      const res = await page.api.get<Row>(rowUrl(entity, id));
      if (!res.ok) return ui.render(reply, page, 'problem', { title: entity.label, problem: problemAlert(problemOf(res.body), page.text), back: path }, res.status);
      const url = `${path}/${encodeURIComponent(id)}`;
      return ui.render(reply, page, 'delete', { title: page.text('delete.title', named(entity)), entity, label: rowLabel(entity, res.body), url, version: res.body.version });
    });

  app.post(`${path}/:id/delete`, { preHandler: app.csrfProtection }, async (request, reply) => {
    const page = await ui.load(request, reply);
    const entity = entityOf(page, 'delete');
    const { id } = request.params as { id: string };
    const version = String((request.body as FormData | undefined)?._version ?? '');
    const res = await page.api.call('DELETE', rowUrl(entity, id), undefined, /^\d+$/.test(version) ? { 'if-match': `"${version}"` } : {});
    if (res.ok) return reply.redirect(`${path}?notice=deleted`, 303);
    return ui.render(
      reply,
      page,
      'problem',
      { title: page.text('delete.title', named(entity)), problem: problemAlert(problemOf(res.body), page.text), back: `${path}/${encodeURIComponent(id)}` },
      res.status,
    );
  });

  // a reference field's options as the user types (htmx swaps them into the select)
  app.get(`${path}/options/:field`, async (request, reply) => {
    const page = await ui.load(request, reply);
    const entity = entityOf(page);
    const field = entity.fields.find((f) => f.name === (request.params as { field: string }).field && f.type === 'ref');
    if (!field) throw Object.assign(new Error('no such field'), { statusCode: 404 });
    const { _search: search, selected } = request.query as { _search?: string; selected?: string };
    const options = await referenceOptions(page, field, search ?? '', selected ?? '');
    return reply.view('options', { options, required: field.required });
  });
}

/** The list's query: what the page asked for, checked against the manifest, as the API's query string. */
function listState(entity: MetaEntity, query: Record<string, string | undefined>) {
  const page = Math.min(1_000_000, Math.max(1, Number.parseInt(query.page ?? '1', 10) || 1));
  const size = PAGE_SIZES.includes(Number(query.size)) ? Number(query.size) : 25;
  const sortable = new Set(entity.fields.filter((f) => f.sort).map((f) => f.name));
  const sort = query.sort && sortable.has(query.sort.replace(/^-/, '')) ? query.sort : '';
  const search = (query.search ?? '').slice(0, 200);
  const own: Record<string, string> = {};
  for (const f of filterable(entity)) if (query[f.name]) own[f.name] = query[f.name]!;
  const base: Record<string, string> = { ...(sort ? { sort } : {}), ...(search ? { search } : {}), ...own };
  return {
    page,
    size,
    sort,
    search,
    api: new URLSearchParams({ page: String(page), size: String(size), ...base }).toString(),
    with: (changes: Record<string, string | undefined>) => {
      const next: Record<string, string | undefined> = { ...base, size: size === 25 ? undefined : String(size), page: page === 1 ? undefined : String(page), ...changes };
      return new URLSearchParams(Object.entries(next).filter((e): e is [string, string] => e[1] !== undefined)).toString();
    },
  };
}

/** The list's filters: enums, booleans and references the manifest marks `filter`. */
const filterable = (entity: MetaEntity) => entity.fields.filter((f) => f.filter && (f.type === 'enum' || f.type === 'boolean' || f.type === 'ref'));

async function filterInputs(page: Page, entity: MetaEntity, query: Record<string, string | undefined>) {
  return Promise.all(
    filterable(entity).map(async (f) => ({
      name: f.name,
      label: f.label,
      options:
        f.type === 'ref'
          ? // the rows the user may read, as a reference's select offers them
            await referenceOptions(page, f, '', query[f.name] ?? '')
          : (f.type === 'boolean' ? ['true', 'false'] : (f.values ?? [])).map((v) => ({
              value: v,
              label: f.type === 'boolean' ? page.text(v === 'true' ? 'value.yes' : 'value.no') : (f.valueLabels?.[v] ?? v),
              selected: query[f.name] === v,
            })),
    })),
  );
}

/** A submitted form as the API's body: fields generated from a schema folded into their JSON first (form-fields.ts), then each converted. */
async function formBody(page: Page, entity: MetaEntity, form: FormData, mode: 'create' | 'update') {
  const folded = await foldForm(page, entity, form, page.text);
  const converted = bodyOf(entity.fields, folded.form, mode, page.text);
  return { body: converted.body, errors: [...folded.errors, ...converted.errors] };
}

interface FormState {
  mode: 'create' | 'update';
  path: string;
  row?: Row;
  values: FormData | Record<string, string>;
  errors?: FieldError[];
  problem?: Problem;
}

/**
 * The entity as its form offers it: a state field (transitions) holds only the states a
 * create may start in, or the stored one and those a write may move it to; never a
 * state only the module sets (a lead's "converted").
 */
async function withTransitions(page: Page, entity: MetaEntity, state: FormState): Promise<MetaEntity> {
  const flow = entity.transitions;
  if (!flow) return entity;
  let stored = state.row?.[flow.field];
  if (state.mode === 'update' && stored === undefined && state.row) stored = (await page.api.get<Row>(`${entity.path}/${encodeURIComponent(state.row.id)}`)).body?.[flow.field];
  const allowed = state.mode === 'create' ? flow.initial : typeof stored === 'string' ? [stored, ...(flow.moves[stored] ?? [])] : null;
  if (!allowed) return entity;
  const offered = new Set(allowed.filter((v) => v === stored || !flow.reserved.includes(v)));
  return { ...entity, fields: entity.fields.map((f) => (f.name === flow.field && f.values ? { ...f, values: f.values.filter((v) => offered.has(v)) } : f)) };
}

async function formData(page: Page, shown: MetaEntity, state: FormState): Promise<Record<string, unknown>> {
  const entity = await withTransitions(page, shown, state);
  const { alert, byField } = formProblem(state.problem, page.text, labelsOf(entity.fields));
  const general: string[] = [];
  // the console's own conversion errors are worded already (page.text)
  for (const e of state.errors ?? []) {
    const field = fieldOfPointer(e.path);
    if (field && entity.fields.some((f) => f.name === field && !f.readOnly)) byField.set(field, [...(byField.get(field) ?? []), e.message]);
    else general.push(e.message);
  }
  const conflict = state.problem?.status === 412;
  const languages = page.shell.languages as { code: string; selected: boolean }[];
  const chosen = languages.find((l) => l.selected)?.code ?? '';
  const schemas = await formSchemas(page, entity, state.values);
  const every = [...(state.errors ?? []), ...(state.problem?.errors ?? [])];
  const fields = await Promise.all(
    entity.fields
      .filter((f) => !f.readOnly)
      .map(async (f) => ({
        ...fieldInput(f, state.values, { mode: state.mode, offered: languages.map((l) => l.code), chosen, entity, say: page.text, schemas, errors: every }),
        errors: byField.get(f.name) ?? [],
        ...(f.type === 'ref' ? { options: await referenceOptions(page, f, '', formValue(state.values, f.name)), optionsUrl: `${state.path}/options/${f.name}` } : {}),
      })),
  );
  const url = state.mode === 'create' ? state.path : `${state.path}/${encodeURIComponent(state.row!.id)}`;
  return {
    title: page.text(state.mode === 'create' ? 'form.newTitle' : 'form.editTitle', named(entity)),
    entity,
    action: url,
    cancel: state.mode === 'create' ? state.path : url,
    version: state.row?.version,
    fields,
    conflict: conflict ? { reload: `${url}/edit` } : null,
    problem: conflict ? null : alert,
    general,
  };
}
