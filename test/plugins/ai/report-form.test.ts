// A report made through the console's form: its parameters are a form generated
// from the chosen type's schema (GET /api/ai/report-types: a project picker, a
// number), its schedule picked from presets, and what the browser sends becomes
// the API's body and the row read back. The form is drawn with the console's own
// partials (field.hbs, schema-fields.hbs) and read as a browser submits it.
//
// The generic entity pages call these form functions once they are wired
// (entity-pages.ts: formSchemas, foldForm, defaultsOf with the company); until
// then, and until GET /api/meta passes the manifest's hints (schemaFrom, the
// cron widget), the test adds the hints itself and drives the functions as the
// pages would, with the user's own API answers.
import { readdirSync, readFileSync } from 'node:fs';
import t from 'tap';
import handlebars from 'handlebars';
import { build, PASSWORD, type TestContext } from '../../helper.ts';
import { ConsoleSession } from '../../support/console-session.ts';
import { apiAs, expectStatus, type Api } from '../core/core-api.ts';
import { defaultsOf, fieldInput, foldForm, formOf, formSchemas } from '../../../core/console/form-fields.ts';
import { bodyOf, type FieldError, type FormData, type MetaEntity, type MetaField, type Row } from '../../../core/console/fields.ts';
import { CONSOLE_TEXTS, fillIn, sayFrom } from '../../../core/console/texts.ts';
import { cronWords } from '../../../core/console/cron-words.ts';
import type { Page } from '../../../core/console/shell.ts';

const ctx: TestContext = await build(t);
const tenant = await ctx.tenant();
const user = await ctx.user(tenant, { codes: ['erp:ai:view', 'erp:pm:view', 'erp:pm:admin'] });
const api = apiAs(ctx, user.token);
const say = sayFrom();

const project = expectStatus(await api('POST', '/api/pm/projects', { key: 'RPT', name: 'Reporting' }), 201, 'project');

/** The console's handlebars: its partials and helpers, as core/console/index.ts registers them. */
const engine = handlebars.create();
const PARTIALS = new URL('../../../core/console/views/partials/', import.meta.url);
for (const f of readdirSync(PARTIALS).filter((n) => n.endsWith('.hbs'))) engine.registerPartial(f.slice(0, -4), readFileSync(new URL(f, PARTIALS), 'utf8'));
engine.registerHelper('eq', (a: unknown, b: unknown) => a === b);
engine.registerHelper('t', (key: string, options: { hash: Record<string, unknown> }) => fillIn(CONSOLE_TEXTS[key] ?? key, options.hash));
const fieldView = engine.compile('{{> field}}');

/** The user's page as the console loads it: API answers as the user, and GET /api/meta's entities. */
async function pageOf(as: Api): Promise<{ page: Page; entity: MetaEntity }> {
  const meta = expectStatus(await as('GET', '/api/meta'), 200, 'meta') as { entities: MetaEntity[] };
  const entity = meta.entities.find((e) => e.name === 'AiReport')!;
  // the manifest's hints, until GET /api/meta passes them on
  const hinted = entity.fields.map((f) =>
    f.name === 'parameters' && !('schemaFrom' in f)
      ? { ...f, schemaFrom: { path: '/api/ai/report-types', match: 'type' } }
      : f.name === 'schedule' && f.widget !== 'cron'
        ? { ...f, widget: 'cron' }
        : f,
  ) as MetaField[];
  const entities = new Map(meta.entities.map((e) => [e.name, e]));
  const get = async (url: string) => {
    const res = await as('GET', url);
    return { status: res.statusCode, ok: res.statusCode < 300, body: res.json(), headers: res.headers };
  };
  const page = { api: { get }, entity: (name: string) => entities.get(name), text: say } as unknown as Page;
  return { page, entity: { ...entity, fields: hinted } };
}

/** The form's fields drawn as the generic form draws them. */
async function drawForm(page: Page, entity: MetaEntity, mode: 'create' | 'update', values: FormData, errors: FieldError[] = []): Promise<string> {
  const schemas = await formSchemas(page, entity, values);
  return entity.fields
    .filter((f) => !f.readOnly && f.type !== 'ref')
    .map((f) => fieldView({ ...fieldInput(f, values, { mode, offered: ['en'], chosen: '', entity, say, schemas, errors }), errors: [] }))
    .join('\n');
}

/** What a browser sends for the form's controls as drawn (a box only when checked, a select's selected options). */
function sent(html: string): FormData {
  const form: FormData = {};
  const add = (name: string, value: string) => {
    const had = form[name];
    form[name] = had === undefined ? value : [...(Array.isArray(had) ? had : [had]), value];
  };
  const controls = /<input\b([^>]*)>|<select\b([^>]*)>([\s\S]*?)<\/select>|<textarea\b([^>]*)>([\s\S]*?)<\/textarea>/g;
  const attr = (tag: string, name: string) => new RegExp(`\\b${name}="([^"]*)"`).exec(tag)?.[1];
  for (const m of html.matchAll(controls)) {
    const tag = m[1] ?? m[2] ?? m[4];
    const name = attr(tag, 'name');
    if (!name || name === '_search') continue;
    if (m[1] !== undefined) {
      if (attr(tag, 'type') === 'checkbox' && !/\bchecked\b/.test(tag)) continue;
      add(name, attr(tag, 'value') ?? '');
    } else if (m[2] !== undefined) {
      const chosen = [...m[3].matchAll(/<option value="([^"]*)"( selected)?>/g)].filter((o) => o[2]);
      if (chosen.length) for (const o of chosen) add(name, o[1]);
      else if (!/\bmultiple\b/.test(tag)) add(name, /<option value="([^"]*)"/.exec(m[3])?.[1] ?? '');
    } else add(name, m[5]);
  }
  return form;
}

/** The user's choices over what the form sent: each name set to one value. */
const choose = (form: FormData, choices: Record<string, string | string[]>): FormData => ({ ...form, ...choices });

t.test('a new report: every type offers its parameters, with the projects to choose from', async (t) => {
  const { page, entity } = await pageOf(api);
  const html = await drawForm(page, entity, 'create', defaultsOf(entity));
  t.notMatch(html, /name="parameters"/, 'no raw JSON for the parameters');
  t.match(html, /<legend>Overdue tasks<\/legend>/, "a fieldset per type, named by the type's title");
  t.match(html, /<select id="sf-parameters-overdue-tasks-projectId" name="parameters:overdue-tasks\.projectId"/, 'a project picker');
  t.match(html, new RegExp(`<option value="${project.id}">Reporting</option>`), "the user's projects");
  t.match(html, /<input id="sf-parameters-overdue-tasks-limit" name="parameters:overdue-tasks\.limit" value=""\s+type="number" step="1" min="1" max="500"/, 'a number input within its bounds');
  t.match(html, /name="schedule:preset"/, 'the schedule is picked from presets');
  t.match(html, /<option value="none" selected>/, 'a new report runs on demand');
  t.match(html, /<input type="checkbox" id="field-enabled" name="enabled" value="true" checked>/, "the box starts as the manifest's default says");
});

t.test('the chosen parameters and schedule become the row', async (t) => {
  const { page, entity } = await pageOf(api);
  const form = choose(sent(await drawForm(page, entity, 'create', defaultsOf(entity))), {
    name: 'Overdue in Reporting',
    type: 'overdue-tasks',
    'parameters:overdue-tasks.projectId': project.id,
    'parameters:overdue-tasks.limit': '25',
    'schedule:preset': 'weekly',
    'schedule:time': '08:30',
    'schedule:weekday': '1',
  });
  const folded = await foldForm(page, entity, form, say);
  t.same(folded.errors, []);
  const { body, errors } = bodyOf(entity.fields, folded.form, 'create', say);
  t.same(errors, []);
  t.same(body.parameters, { projectId: project.id, limit: 25 }, "only the chosen type's parameters");
  t.equal(body.schedule, '30 8 * * 1');
  const created = expectStatus(await api('POST', '/api/ai/reports', body), 201, 'create') as Row;
  const row = expectStatus(await api('GET', `/api/ai/reports/${created.id}`), 200, 'read back') as Row;
  t.same(row.parameters, { projectId: project.id, limit: 25 });
  t.equal(row.schedule, '30 8 * * 1');
  t.equal(row.enabled, true);
  t.ok(row.nextRunAt, 'the schedule runs it');
  t.equal(
    cronWords(row.schedule as string, (key, values) => `${key}|${JSON.stringify(values ?? {})}`),
    'cron.weekly|{"day":"cron.day.1|{}","time":"08:30"}',
    'the schedule in words',
  );

  await t.test('its edit form shows what is stored, and only its own type', async (t) => {
    const html = await drawForm(page, entity, 'update', formOf(entity, row));
    t.notMatch(html, /Task summary/, 'the type is fixed: no other type is offered');
    t.match(html, new RegExp(`<option value="${project.id}" selected>Reporting</option>`));
    t.match(html, /name="parameters:overdue-tasks\.limit" value="25"/);
    t.match(html, /<option value="weekly" selected>/);
    t.match(html, /name="schedule:time" type="time" value="08:30"/);
    // saved unchanged, the row stays as it is
    const again = await foldForm(page, entity, sent(html), say);
    const update = bodyOf(entity.fields, again.form, 'update', say);
    t.same(update.body.parameters, { projectId: project.id, limit: 25 });
    t.equal(update.body.schedule, '30 8 * * 1');
    const saved = expectStatus(await api('PATCH', `/api/ai/reports/${row.id}`, { parameters: {}, schedule: null }), 200, 'cleared') as Row;
    const cleared = await drawForm(page, entity, 'update', formOf(entity, saved));
    t.match(cleared, /<option value="none" selected>/, 'no schedule: on demand');
    t.match(cleared, /name="parameters:overdue-tasks\.limit" value=""/);
  });
});

t.test("bad input: the form's own checks and the API's, each beside its input", async (t) => {
  const { page, entity } = await pageOf(api);
  const form = choose(sent(await drawForm(page, entity, 'create', defaultsOf(entity))), {
    name: 'Too many',
    type: 'overdue-tasks',
    'parameters:overdue-tasks.limit': '501',
    'schedule:preset': 'daily',
    'schedule:time': '25:00',
  });
  const folded = await foldForm(page, entity, form, say);
  t.same(
    folded.errors.map((e) => e.path),
    ['/schedule', '/parameters/limit'],
  );
  const html = await drawForm(page, entity, 'create', form, folded.errors);
  t.match(html, /name="parameters:overdue-tasks\.limit" value="501"[^>]*aria-describedby="[^"]*sf-parameters-overdue-tasks-limit-error" aria-invalid="true"/, 'the input is marked');
  t.match(html, /<p class="error" id="sf-parameters-overdue-tasks-limit-error">/, 'its error beside it');
  t.notMatch(html, /Task summary/, 'with the type chosen, only its parameters');

  const early = await foldForm(page, entity, { ...form, 'schedule:preset': 'none', 'parameters:overdue-tasks.limit': '', 'parameters:overdue-tasks.projectId': 'nope' }, say);
  t.same(
    early.errors.map((e) => e.path),
    ['/parameters/projectId'],
    'a uuid is checked before the API',
  );
  // what the API answers is shown the same way
  const res = await api('POST', '/api/ai/reports', { name: 'x', type: 'overdue-tasks', parameters: { limit: 'ten' } });
  t.equal(res.statusCode, 400);
  const apiErrors = (res.json() as { errors: FieldError[] }).errors;
  t.ok(apiErrors.some((e) => e.path === '/parameters/limit'));
  const shown = await drawForm(page, entity, 'create', { ...form, 'parameters:overdue-tasks.limit': 'ten' }, apiErrors);
  t.match(shown, /<p class="error" id="sf-parameters-overdue-tasks-limit-error">/, "the API's error on /parameters/limit beside its input");
});

t.test("another tenant's projects are never offered", async (t) => {
  const other = await ctx.tenant();
  const stranger = await ctx.user(other, { codes: ['erp:ai:view', 'erp:pm:view'] });
  const { page, entity } = await pageOf(apiAs(ctx, stranger.token));
  const html = await drawForm(page, entity, 'create', defaultsOf(entity));
  t.notMatch(html, /Reporting/);
  t.match(html, /name="parameters:overdue-tasks\.projectId"/, 'the picker is there, empty');
});

// The same through the console's own pages, as a browser posts the form.
t.test('through the console pages', async (t) => {
  const s = new ConsoleSession(ctx.app);
  t.equal((await s.login(tenant.id, user.email, PASSWORD)).statusCode, 303);
  const page = await s.get('/ai/reports/new?type=overdue-tasks');
  t.equal(page.statusCode, 200);
  const drawn = /<form method="post" action="\/ai\/reports"[\s\S]*?<\/form>/.exec(page.body)?.[0] ?? '';
  const form = choose(sent(drawn), {
    name: 'Through the pages',
    type: 'overdue-tasks',
    'parameters:overdue-tasks.projectId': project.id,
    'parameters:overdue-tasks.limit': '7',
    'schedule:preset': 'daily',
    'schedule:time': '06:00',
  });
  const { _csrf: _, ...fields } = form;
  const created = await s.post('/ai/reports', fields as Record<string, string | string[]>);
  t.equal(created.statusCode, 303, created.statusCode === 303 ? 'created' : (created.body.match(/<(div class="alert"|p class="error")[\s\S]{0,400}/g) ?? []).join(' | '));
  const id = /\/ai\/reports\/([^/?]+)/.exec(String(created.headers.location))?.[1];
  const row = expectStatus(await api('GET', `/api/ai/reports/${id}`), 200, 'read back') as Row;
  t.same(row.parameters, { projectId: project.id, limit: 7 });
  t.equal(row.schedule, '0 6 * * *');

  const edit = await s.get(`/ai/reports/${id}/edit`);
  const editForm = /<form method="post" action="\/ai\/reports\/[^"]+"[\s\S]*?<\/form>/.exec(edit.body)?.[0] ?? '';
  t.match(editForm, /<option value="daily" selected>/, 'the edit form shows the stored schedule');
  t.match(editForm, /name="parameters:overdue-tasks\.limit" value="7"/, '…and parameters');
  const { _csrf: __, ...kept } = choose(sent(editForm), { 'parameters:overdue-tasks.limit': '9' });
  t.equal((await s.post(`/ai/reports/${id}`, kept as Record<string, string | string[]>)).statusCode, 303);
  const saved = expectStatus(await api('GET', `/api/ai/reports/${id}`), 200, 'read back') as Row;
  t.same(saved.parameters, { projectId: project.id, limit: 9 }, 'one parameter changed, the others kept');
  t.equal(saved.schedule, '0 6 * * *');
});
