// The project pages of the console over app.inject: the dashboard's figures
// are the API's, a project's board shows its tasks by status with only the
// moves the flow allows and its activity in words, the relay the board's
// script uses moves a task (If-Match, CSRF, refusals), and nobody sees what
// the API would not show them: no project code, not a member, another tenant;
// and all of it in the user's language (the module's texts, plugins/pm/texts.en.json).
import { readFileSync } from 'node:fs';
import t from 'tap';
import { build, PASSWORD, type TestTenant } from '../../helper.ts';
import { ConsoleSession, menuOf } from '../../support/console-session.ts';
import { SYSTEM } from '../../../core/plugin-api.ts';
import { apiAs } from '../core/core-api.ts';
import { expectStatus } from './pm-api.ts';
import { SCRIPT_TEXTS } from '../../../plugins/pm/pages/board.ts';

const ctx = await build(t);
const tenant = await ctx.tenant();
const other = await ctx.tenant();
const admin = apiAs(ctx, tenant.adminToken);
const ok = async (res: ReturnType<typeof admin>, status = 200) => expectStatus(await res, status, 'seed');

const project = await ok(admin('POST', '/api/pm/projects', { key: 'BRD', name: 'Board test', status: 'active' }), 201);
const flow = (await ok(admin('GET', `/api/pm/status?projectId=${project.id}`))).items as { id: string; name: string }[];
const [todo, doing, done] = ['To Do', 'In Progress', 'Completed'].map((n) => flow.find((s) => s.name === n)!.id);
// a status whose name would close the page's JSON script if it were not escaped
await ok(admin('POST', '/api/pm/status', { projectId: project.id, name: 'Odd </script><b>', category: 'backlog', position: 9 }), 201);
// the flow allows To Do → In Progress → Completed only
for (const [fromStatusId, toStatusId] of [
  [todo, doing],
  [doing, done],
]) {
  await ok(admin('POST', `/api/pm/projects/${project.id}/status-moves`, { fromStatusId, toStatusId }), 201);
}
const me = await ok(admin('GET', '/api/auth/me'));
const brief = await ok(admin('POST', '/api/pm/tasks', { projectId: project.id, title: 'Write the brief', priority: 'high', assigneeId: me.id, estimate: '6.5' }), 201);
const review = await ok(admin('POST', '/api/pm/tasks', { projectId: project.id, title: 'Review <b>markup</b>' }), 201);
const thing = await ok(admin('POST', '/api/pm/tasks', { projectId: project.id, title: 'Build the thing' }), 201);
await ok(admin('PATCH', `/api/pm/tasks/${thing.id}`, { statusId: doing }));

const viewer = await ctx.user(tenant, { codes: ['erp:pm:view'] });
await ok(admin('POST', `/api/pm/projects/${project.id}/members`, { userId: viewer.id, role: 'viewer' }), 201);
const outsider = await ctx.user(tenant, { codes: ['erp:pm:view'] });
const clerk = await ctx.user(tenant, { codes: ['erp:catalog:view'] });

const theirs = await ok(apiAs(ctx, other.adminToken)('POST', '/api/pm/projects', { key: 'FOREIGN', name: 'Foreign project' }), 201);
await ok(apiAs(ctx, other.adminToken)('POST', '/api/pm/tasks', { projectId: theirs.id, title: 'Foreign secret task' }), 201);

// an activity row as the subscriber writes it (the subscriber runs with the workers, which this file does not start)
const system = await ctx.kernel.contextFor({ tenant: tenant.id, principal: SYSTEM, companyId: tenant.companyId });
await system
  .data('ProjectActivity')
  .create({ projectId: project.id, taskId: thing.id, entity: 'Task', entityId: thing.id, action: 'updated', field: 'statusId', before: todo, after: doing, actorId: me.id, at: new Date() });

const session = async (email: string, t: TestTenant = tenant) => {
  const s = new ConsoleSession(ctx.app);
  const res = await s.login(t.id, email, PASSWORD);
  if (res.statusCode !== 303) throw new Error(`login failed: ${res.statusCode}`);
  return s;
};
const board = `/pm/projects/${project.id}/board`;
const column = (html: string, statusId: string) => new RegExp(`<section class="pm-column"[^>]*data-status-id="${statusId}">([\\s\\S]*?)</section>`).exec(html)?.[1] ?? '';
const card = (html: string, taskId: string) => new RegExp(`<li class="pm-card" data-task-id="${taskId}"[\\s\\S]*?</li>\\s*(?=<li class="pm-card" |</ul>\\s*<p class="pm-empty")`).exec(html)?.[0] ?? '';
const options = (html: string) => [...html.matchAll(/<option value="([^"]+)">/g)].map((m) => m[1]);
const cardValue = (html: string, label: string) => new RegExp(`<span class="card-value">([^<]*)</span><span class="card-label">${label}</span>`).exec(html)?.[1];

t.test('the dashboard: the API figures, charts with tables, progress and workload', async (t) => {
  const s = await session(tenant.adminEmail);
  const res = await s.get('/pm/dashboard');
  t.equal(res.statusCode, 200);
  const figures = await ok(admin('GET', '/api/pm/dashboard'));
  t.equal(cardValue(res.body, 'Tasks'), String(figures.totalTasks), 'tasks as the API counts them');
  t.equal(figures.totalTasks, 3);
  t.equal(cardValue(res.body, 'Active projects'), String(figures.projectsByStatus.active));
  t.equal(cardValue(res.body, 'My open tasks'), '1', 'the brief is assigned to the admin');
  t.match(res.body, /data-chart="pm-chart-categories" role="img" aria-label="Tasks by status category: Backlog 0, To do 2, In progress 1, Done 0, Cancelled 0\."/, 'the chart says its numbers');
  t.match(res.body, /<th scope="row"><a href="\/pm\/tasks\?category(=|&#x3D;)todo">To do<\/a><\/th><td class="numeric">2<\/td>/, 'and the table beside it');
  t.match(res.body, /<script type="application\/json" id="pm-charts">\{"pm-chart-categories":/, "the charts' options for the script");
  t.match(res.body, new RegExp(`<a href="/pm/projects/${project.id}">BRD · Board test</a>`), 'the project in the progress table');
  t.match(res.body, new RegExp(`href="${board}"`), 'with a link to its board');
  t.match(res.body, /<th scope="row">Admin<\/th><td class="numeric">1<\/td><td class="numeric">6\.5<\/td>/, "the admin's workload, named");
  t.match(res.body, /<th scope="row"><a href="\/pm\/tasks\?priority(=|&#x3D;)high">High<\/a><\/th><td class="numeric">1<\/td>/, 'tasks by priority');
  t.notMatch(res.body, /FOREIGN|Foreign/, "never another tenant's projects");
});

t.test("the workload's range is the user's; a range the API refuses is an alert, not an error page", async (t) => {
  const s = await session(tenant.adminEmail);
  const fine = await s.get('/pm/dashboard?from=2020-01-01&to=2020-01-31');
  t.equal(fine.statusCode, 200);
  t.match(fine.body, /from 2020-01-01 to 2020-01-31/);
  const backwards = await s.get('/pm/dashboard?from=2020-02-01&to=2020-01-01');
  t.equal(backwards.statusCode, 200);
  t.match(backwards.body, /<div class="alert" role="alert">[^<]*before from/);
  t.equal((await s.get('/pm/dashboard?from=yesterday&to=%3Cscript%3E')).statusCode, 200, 'what is no date is not sent');
});

t.test('the board: tasks in the columns of the flow, only the allowed moves, escaped names', async (t) => {
  const s = await session(tenant.adminEmail);
  const detail = await s.get(`/pm/projects/${project.id}`);
  t.match(detail.body, new RegExp(`<a class="button" href="${board}">Board</a>`), "linked from the project's page");
  const res = await s.get(board);
  t.equal(res.statusCode, 200);
  t.match(res.body, /<h1>Board: BRD · Board test<\/h1>/);
  t.match(column(res.body, todo), /BRD-1 Write the brief/);
  t.match(column(res.body, todo), /BRD-2 Review &lt;b&gt;markup&lt;\/b&gt;/, 'titles are text, not markup');
  t.match(column(res.body, doing), /BRD-3 Build the thing/);
  t.match(column(res.body, done), /<p class="pm-empty" data-empty>No tasks\.<\/p>/);
  t.same(options(card(res.body, brief.id)), [doing], 'To Do offers In Progress only');
  t.match(card(res.body, brief.id), new RegExp(`data-version="${brief.version}"[^>]*draggable="true"`));
  t.same(options(card(res.body, thing.id)), [done], 'In Progress offers Completed only');
  t.notMatch(res.body, /Odd <\/script>/, 'a status name cannot close the script tag');
  t.match(res.body, /"Odd \\u003c\/script>\\u003cb>"/, 'it is in the JSON, escaped');
  t.match(res.body, /<td>Changed task status from To Do to In Progress<\/td>/, 'the activity in words');
  const mine = await s.get(`${board}?assignee=me`);
  t.match(mine.body, /Write the brief/);
  t.notMatch(mine.body, /Build the thing/, 'only my tasks');
});

t.test('a viewer sees the board without moves; an outsider, a clerk and another tenant see nothing', async (t) => {
  const v = await session(viewer.email);
  const seen = await v.get(board);
  t.equal(seen.statusCode, 200);
  t.match(seen.body, /Write the brief/);
  t.notMatch(seen.body, /data-move|draggable="true"/, 'no move is offered to a viewer');

  const o = await session(outsider.email);
  const hidden = await o.get(board);
  t.equal(hidden.statusCode, 404, 'not a member: no such project');
  t.notMatch(hidden.body, /Write the brief/);
  const dash = await o.get('/pm/dashboard');
  t.equal(dash.statusCode, 200);
  t.equal(cardValue(dash.body, 'Tasks'), '0', "the dashboard counts only the outsider's own");
  t.notMatch(dash.body, /Board test/);

  const c = await session(clerk.email);
  t.notOk(menuOf((await c.get('/catalog/products')).body).includes('/pm/dashboard'), 'no menu entry without the code');
  for (const url of ['/pm/dashboard', board]) {
    const res = await c.get(url);
    t.equal(res.statusCode, 403, `${url}: the API's refusal`);
    t.notMatch(res.body, /Board test|Write the brief/);
  }

  const foreign = await session(other.adminEmail, other);
  const theirsSeen = await foreign.get(board);
  t.equal(theirsSeen.statusCode, 404, "another tenant's admin: no such project");
  t.notMatch(theirsSeen.body, /Write the brief/);
  const mineSeen = await (await session(tenant.adminEmail)).get(`/pm/projects/${theirs.id}/board`);
  t.equal(mineSeen.statusCode, 404);
  t.notMatch(mineSeen.body, /Foreign/);
});

t.test('bad path parameters are a 4xx page, never a 5xx', async (t) => {
  const s = await session(tenant.adminEmail);
  for (const id of ['not-a-uuid', '00000000-0000-4000-8000-000000000000', `${project.id}x`, '%27%3B--', 'Z'.repeat(150)]) {
    const res = await s.get(`/pm/projects/${id}/board`);
    t.equal(res.statusCode, 404, id);
    t.match(res.headers['content-type'], /text\/html/);
  }
  // beyond the router's longest parameter (200) the app refuses the path before any page
  t.equal((await s.get(`/pm/projects/${'Z'.repeat(300)}/board`)).statusCode, 400);
});

t.test("the relay the board's script moves cards through: If-Match, the flow, CSRF, roles", async (t) => {
  const s = await session(tenant.adminEmail);
  await s.get(board);
  const relay = (method: 'GET' | 'PATCH', url: string, payload?: unknown, headers: Record<string, string> = {}, as = s) =>
    ctx.app.inject({
      method,
      url,
      headers: { cookie: as.cookieHeader, 'x-csrf-token': as.csrf, ...(payload ? { 'content-type': 'application/json' } : {}), ...headers },
      ...(payload ? { payload: JSON.stringify(payload) } : {}),
    });
  const allowed = await relay('GET', `/console/api/pm/tasks/${review.id}/transitions`);
  t.equal(allowed.statusCode, 200);
  t.same(
    allowed.json().items.map((i: { id: string }) => i.id),
    [doing],
  );
  const moved = await relay('PATCH', `/console/api/pm/tasks/${review.id}`, { statusId: doing }, { 'if-match': `"${review.version}"` });
  t.equal(moved.statusCode, 200);
  t.equal(moved.json().version, review.version + 1, 'the new version for the card');
  t.equal(moved.headers.etag, `"${review.version + 1}"`);
  const stale = await relay('PATCH', `/console/api/pm/tasks/${review.id}`, { statusId: done }, { 'if-match': `"${review.version}"` });
  t.equal(stale.statusCode, 412, 'a card of an old version is refused');
  const skip = await relay('PATCH', `/console/api/pm/tasks/${brief.id}`, { statusId: done }, { 'if-match': `"${brief.version}"` });
  t.equal(skip.statusCode, 422, 'a move the flow does not allow');
  t.equal(skip.json().code, 'INVALID_TRANSITION');
  const forged = await relay('PATCH', `/console/api/pm/tasks/${brief.id}`, { statusId: doing }, { 'if-match': `"${brief.version}"`, 'x-csrf-token': 'forged' });
  t.equal(forged.statusCode, 403, 'no CSRF token, no move');
  const v = await session(viewer.email);
  await v.get(board);
  const refused = await relay('PATCH', `/console/api/pm/tasks/${brief.id}`, { statusId: doing }, { 'if-match': `"${brief.version}"` }, v);
  t.equal(refused.statusCode, 403, 'a viewer may not move tasks');
  const after = await s.get(board);
  t.match(column(after.body, doing), /BRD-2 Review/, 'the board shows the move');
  t.match(column(after.body, todo), /BRD-1 Write the brief/, 'and nothing refused moved');
  t.match(card(after.body, review.id), new RegExp(`data-version="${review.version + 1}"`));
});

t.test('the module serves the scripts and styles its pages include', async (t) => {
  for (const url of ['/console/modules/pm/board.js', '/console/assets/charts.js', '/console/modules/pm/pm.css']) {
    t.equal((await ctx.app.inject({ method: 'GET', url })).statusCode, 200, url);
  }
});

t.test("a tenant's German texts: the views, what load() builds, the board script's texts and the page title", async (t) => {
  const german = {
    'page.pm.projects.:id.board': 'Aufgabentafel',
    'board.heading': 'Tafel: {key} · {name}',
    'board.column.empty': 'Keine Aufgaben.',
    'activity.changedFromTo': '{noun}: {field} von {from} auf {to} geändert',
    'activity.noun.Task': 'Aufgabe',
    'activity.field.statusId': 'Status',
    'board.move.moved': '{ref} nach {status} verschoben.',
    'dashboard.card.tasks': 'Aufgaben',
    'category.todo': 'Zu erledigen',
  };
  for (const [key, text] of Object.entries(german)) await ok(admin('POST', '/api/translations', { language: 'de', namespace: 'pm', key, text }), 201);
  const s = await session(tenant.adminEmail);
  await s.get(board);
  t.equal((await s.post('/console/language', { value: 'de', back: board })).statusCode, 303);

  const res = await s.get(board);
  t.equal(res.statusCode, 200);
  t.match(res.body, '<title>Aufgabentafel · Plinth</title>', "the page's title, by its page. key");
  t.match(res.body, '<h1>Tafel: BRD · Board test</h1>', "a view's text, its placeholders filled in");
  t.match(column(res.body, done), /<p class="pm-empty" data-empty>Keine Aufgaben\.<\/p>/);
  t.match(res.body, '<td>Aufgabe: Status von To Do auf In Progress geändert</td>', 'a sentence load() builds of three texts');
  t.match(res.body, '"board.move.moved":"{ref} nach {status} verschoben."', "the script's texts in the page's JSON, placeholders left to the script");
  t.match(res.body, '"board.move.reload":"Reload the board"', 'English for a key without a German text');
  t.match(res.body, '<h2 id="pm-activity-title">Recent activity</h2>');
  const detail = await s.get(`/pm/projects/${project.id}`);
  t.match(detail.body, `<a class="button" href="${board}">Aufgabentafel</a>`, "the title is the link's on the project's page");

  const dash = await s.get('/pm/dashboard');
  t.equal(dash.statusCode, 200);
  t.equal(cardValue(dash.body, 'Aufgaben'), '3', 'a card label load() builds');
  t.equal(cardValue(dash.body, 'My open tasks'), '1', 'and one without a German text');
  t.match(dash.body, /aria-label="Tasks by status category: Backlog 0, Zu erledigen \d+, In progress/, "the chart's summary");
  t.match(dash.body, '"data":["Backlog","Zu erledigen","In progress","Done","Cancelled"]', "the chart's axis");

  const english = await (await session(tenant.adminEmail)).get(board);
  t.match(english.body, '<h1>Board: BRD · Board test</h1>', 'a user without German keeps the English');
  t.match(english.body, '<title>Board · Plinth</title>');
  t.match(english.body, '"board.move.moved":"{ref} moved to {status}."');
});

t.test('every text key the pages and the board script use is in texts.en.json', async (t) => {
  const read = (file: string) => readFileSync(new URL(`../../../plugins/pm/${file}`, import.meta.url), 'utf8');
  const texts: Record<string, string> = JSON.parse(read('texts.en.json'));
  const missing = (keys: string[]) => keys.filter((key) => !(key in texts));
  const inViews = ['views/board.hbs', 'views/dashboard.hbs'].flatMap((f) => [...read(f).matchAll(/\{\{t "([^"]+)"/g)].map((m) => m[1]));
  const inCode = ['pages/board.ts', 'pages/board-activity.ts', 'pages/dashboard.ts'].flatMap((f) => [...read(f).matchAll(/api\.text\('([^']+)'/g)].map((m) => m[1]));
  t.ok(inViews.length > 60 && inCode.length > 20, `${inViews.length} and ${inCode.length} keys found: the patterns still match the code`);
  t.same(missing([...inViews, ...inCode, ...SCRIPT_TEXTS]), [], 'no key without its English');

  const script = read('assets/board.js');
  const said = [...script.matchAll(/say\('([^']+)'/g)].map((m) => m[1]);
  t.same(
    said.filter((key) => !(SCRIPT_TEXTS as readonly string[]).includes(key)),
    [],
    'the page passes every text the script says',
  );
  const fallback = Object.fromEntries([...script.matchAll(/^ {4}'(board\.[^']+)': '([^']+)',$/gm)].map((m) => [m[1], m[2]]));
  t.same(fallback, Object.fromEntries(SCRIPT_TEXTS.map((key) => [key, texts[key]])), "the script's English, for a page without texts, is texts.en.json's");

  // keys made from values: each value the manifest allows has its text
  const manifest = JSON.parse(readFileSync(new URL('../../../manifests/pm.json', import.meta.url), 'utf8')) as {
    entities: { name: string; fields: Record<string, { values?: string[]; internal?: boolean }> }[];
  };
  const entity = (name: string) => manifest.entities.find((e) => e.name === name)!;
  const valueKeys = [
    ...entity('Project').fields.status.values!.map((v) => `projectStatus.${v}`),
    ...entity('Task').fields.priority.values!.map((v) => `priority.${v}`),
    ...entity('Task').fields.category.values!.map((v) => `category.${v}`),
    ...['created', 'updated', 'deleted'].map((a) => `activity.action.${a}`),
  ];
  // the entities whose changes the activity lists (activity.ts), by noun and field
  for (const name of ['Project', 'ProjectMember', 'TaskStatus', 'StatusMove', 'Task', 'Comment', 'Attachment']) {
    valueKeys.push(`activity.noun.${name}`);
    for (const [field, f] of Object.entries(entity(name).fields)) if (!f.internal) valueKeys.push(`activity.field.${field}`);
  }
  t.same(missing(valueKeys), [], 'no value without its text');
});
