// The assistant's routes beyond the parser table: confirm creating a PM task
// under PM's rules, suggestions, help by page, and unhappy paths (bad input,
// huge text, missing permission, another tenant).
import t from 'tap';
import { build } from '../../helper.ts';
import { apiAs } from '../core/core-api.ts';
import { assistantTenant, expectProblem, expectStatus, UNKNOWN_ID } from './assistant-fixture.ts';

const ctx = await build(t);
const tenant = await ctx.tenant();
const { caller, people, projects, stranger, person } = await assistantTenant(ctx, tenant);
const NOW = '2026-03-10T09:00:00Z';
const parse = (body: object, as = caller.api) => as('POST', '/api/ai/assistant/parse', body);
const confirm = (body: object, as = caller.api) => as('POST', '/api/ai/assistant/confirm', body);

t.test('parse → confirm: a task of the project, the time kept in the description', async (t) => {
  const parsed = expectStatus(await parse({ text: 'call Acme tomorrow at 3pm about the renewal, urgent, @maria #WEB', now: NOW, timeZone: 'Europe/Berlin' }), 200, 'parse');
  t.same(
    parsed.spans.map((s: { kind: string; text: string }) => [s.kind, s.text]),
    [
      ['date', 'tomorrow at 3pm'],
      ['priority', 'urgent'],
      ['assignee', '@maria'],
      ['project', '#WEB'],
    ],
  );
  t.match(parsed.spans[2].value, { id: people['Maria Rossi'].id, name: 'Maria Rossi' });
  t.match(parsed.spans[3].value, { id: projects.WEB.id, key: 'WEB' });
  // PM lets only someone who may read the task be its assignee
  expectStatus(await caller.api('POST', `/api/pm/projects/${projects.WEB.id}/members`, { userId: people['Maria Rossi'].id, role: 'member' }), 201, 'Maria joins WEB');
  // the proposal exactly as parse answered it
  const res = await confirm(parsed.proposal);
  const created = expectStatus(res, 201, 'confirm');
  t.equal(res.headers.location, `/api/pm/tasks/${created.task.id}`);
  t.equal(created.dueTimeKept, 'description');
  t.match(created.task, {
    title: 'Call Acme about the renewal',
    projectId: projects.WEB.id,
    assigneeId: people['Maria Rossi'].id,
    reporterId: caller.id,
    priority: 'high',
    dueDate: '2026-03-11',
    description: 'Due at 15:00 (Europe/Berlin)',
    category: 'todo',
  });
  const read = expectStatus(await caller.api('GET', `/api/pm/tasks/${created.task.id}`), 200, 'read back through PM');
  t.equal(read.number, 1, 'numbered in its project by PM');
});

t.test('confirm takes every field parse answers; dueAt alone gives the date and the time', async (t) => {
  const docs = expectStatus(await ctx.app.inject({ method: 'GET', url: '/api-docs/json' }), 200, 'OpenAPI');
  const answered = docs.paths['/api/ai/assistant/parse'].post.responses['200'].content['application/json'].schema.properties.proposal;
  const taken = docs.paths['/api/ai/assistant/confirm'].post.requestBody.content['application/json'].schema;
  const missing = Object.keys(answered.properties).filter((k) => !(k in taken.properties));
  t.same(missing, [], 'no field of the proposal is unknown to confirm');
  const types = (s: { type?: string; anyOf?: { type: string }[] } | undefined) => s?.type ?? s?.anyOf?.map((x) => x.type);
  for (const k of Object.keys(answered.properties)) t.same(types(taken.properties[k]), types(answered.properties[k]), `${k} typed alike`);

  const parsed = expectStatus(await parse({ text: 'Book flights Friday at 9am', now: NOW, timeZone: 'America/New_York' }), 200, 'parse');
  t.match(parsed.proposal, { dueDate: '2026-03-13', dueTime: '09:00', dueAt: '2026-03-13T13:00:00.000Z', timeZone: 'America/New_York' });
  const { dueDate: _d, dueTime: _t, ...instantOnly } = parsed.proposal;
  const created = expectStatus(await confirm(instantOnly), 201, 'dueAt without dueDate');
  t.match(created.task, { title: 'Book flights', dueDate: '2026-03-13', description: 'Due at 09:00 (America/New_York)' });
  t.equal(created.dueTimeKept, 'description');
  // an edited proposal: dueDate and dueTime decide, a stale dueAt does not
  const edited = expectStatus(await confirm({ ...parsed.proposal, dueDate: '2026-03-20', dueTime: null }), 201, 'edited');
  t.match(edited.task, { dueDate: '2026-03-20', description: null });
  expectProblem(t, await confirm({ title: 'x', dueAt: 'Friday' }), 400, 'VALIDATION_FAILED', 'dueAt in words');
});

t.test('confirm without a project: the personal task of the caller; description kept before the time', async (t) => {
  const created = expectStatus(await confirm({ title: '  Water the plants ', description: 'the big ones', dueDate: '2026-03-12', dueTime: '08:30' }), 201, 'personal');
  t.match(created.task, { title: 'Water the plants', projectId: null, reporterId: caller.id, priority: 'normal', description: `the big ones\n\nDue at 08:30 (UTC)` });
  const plain = expectStatus(await confirm({ title: 'No time', dueDate: '2026-03-12' }), 201, 'no time');
  t.equal(plain.dueTimeKept, null);
  t.equal(plain.task.description, null);
  const other = expectStatus(await people['Li Wei'].api('GET', `/api/pm/tasks/${created.task.id}`), 404, "another user's personal task");
  t.ok(other);
});

t.test("confirm into a project the caller is no member of answers as PM's task create does", async (t) => {
  const body = { title: 'Peek', projectId: projects.SEC.id };
  const viaPm = await caller.api('POST', '/api/pm/tasks', body);
  const viaAi = await confirm(body);
  t.ok([400, 403, 404].includes(viaPm.statusCode), `PM refuses (${viaPm.statusCode})`);
  t.equal(viaAi.statusCode, viaPm.statusCode);
  t.equal(viaAi.json().code, viaPm.json().code);
  const unknown = await confirm({ title: 'x', projectId: UNKNOWN_ID });
  t.equal(unknown.statusCode, (await caller.api('POST', '/api/pm/tasks', { title: 'x', projectId: UNKNOWN_ID })).statusCode, 'unknown project as PM');
  // a viewer of a project may read it but not add tasks
  const viewer = await person('Vera Viewer');
  expectStatus(await stranger.api('POST', `/api/pm/projects/${projects.SEC.id}/members`, { userId: viewer.id, role: 'viewer' }), 201, 'viewer');
  const asViewer = await confirm(body, viewer.api);
  const pmViewer = await viewer.api('POST', '/api/pm/tasks', body);
  t.equal(asViewer.statusCode, pmViewer.statusCode, `viewer refused like PM (${pmViewer.statusCode})`);
  t.ok(asViewer.statusCode >= 400 && asViewer.statusCode < 500);
});

t.test('confirm: bad input', async (t) => {
  const bad: [object, string][] = [
    [{}, 'no title'],
    [{ title: '' }, 'empty title'],
    [{ title: '   ' }, 'blank title'],
    [{ title: 'x'.repeat(501) }, 'title too long'],
    [{ title: 'x', bogus: 1 }, 'unknown field'],
    [{ title: 5 }, 'title a number'],
    [{ title: 'x', priority: 'urgent' }, 'unknown priority'],
    [{ title: 'x', dueDate: '2026-02-30' }, 'no such day'],
    [{ title: 'x', dueDate: 'tomorrow' }, 'date in words'],
    [{ title: 'x', dueDate: '0000-01-01' }, 'year 0'],
    [{ title: 'x', dueTime: '15:00' }, 'time without date'],
    [{ title: 'x', dueDate: '2026-03-12', dueTime: '25:00' }, 'no such time'],
    [{ title: 'x', timeZone: 'Mars/Olympus' }, 'unknown zone'],
    [{ title: 'x', assigneeId: 'maria' }, 'assignee not an id'],
    [{ title: 'x', assigneeId: UNKNOWN_ID }, 'unknown assignee'],
    [{ title: 'x', description: 'y'.repeat(20_001) }, 'description too long'],
  ];
  for (const [body, what] of bad) expectProblem(t, await confirm(body), 400, 'VALIDATION_FAILED', what);
});

t.test('parse: bad input and the size cap', async (t) => {
  const bad: [object | string, string][] = [
    [{}, 'no text'],
    [{ text: '' }, 'empty text'],
    [{ text: ' \n\t ' }, 'blank text'],
    [{ text: 'x'.repeat(2001) }, 'over 2,000 characters'],
    [{ text: 5 }, 'text a number'],
    [{ text: ['a'] }, 'text a list'],
    [{ text: 'a', bogus: true }, 'unknown field'],
    [{ text: 'a', language: 'xx' }, 'unknown language'],
    [{ text: 'a', timeZone: 'Mars/Olympus' }, 'unknown zone'],
    [{ text: 'a', timeZone: '' }, 'empty zone'],
    [{ text: 'a', now: 'yesterday' }, 'now in words'],
    [{ text: 'a', now: '0050-06-01T12:00:00Z' }, 'now in antiquity'],
    [{ text: 'a', now: '9999-12-31T12:00:00Z' }, 'now at the end of time'],
    [{ text: 'a', useProvider: 'yes' }, 'useProvider a string'],
    ['{"text": ', 'broken JSON'],
  ];
  for (const [body, what] of bad) expectProblem(t, await caller.api('POST', '/api/ai/assistant/parse', body), 400, 'VALIDATION_FAILED', what);
  const long = expectStatus(await parse({ text: `${'word '.repeat(399)}todo`, now: NOW }), 200, '2,000 characters');
  t.equal(long.proposal.title.length, 500, 'the title is cut to what a task holds');
  t.same(
    long.warnings.map((w: { code: string }) => w.code),
    ['TITLE_TRUNCATED'],
  );
  const huge = await ctx.as(caller.token, { method: 'POST', url: '/api/ai/assistant/parse', payload: { text: 'x'.repeat(2 * 1024 * 1024) } });
  expectProblem(t, huge, 413, 'PAYLOAD_TOO_LARGE', 'beyond the body limit');
});

t.test('permissions: the AI code to use it, PM codes for what it sees and creates', async (t) => {
  const pmOnly = await person('Pat Pm', ['erp:pm:view']);
  for (const [method, url, body] of [
    ['POST', '/api/ai/assistant/parse', { text: 'a' }],
    ['POST', '/api/ai/assistant/confirm', { title: 'a' }],
    ['GET', '/api/ai/assistant/suggest?q=a'],
    ['GET', '/api/ai/assistant/help'],
  ] as const) {
    expectProblem(t, await ctx.app.inject({ method, url, ...(body ? { payload: body } : {}) }), 401, 'UNAUTHENTICATED', `${url} anonymous`);
    expectProblem(t, await pmOnly.api(method, url, body), 403, 'FORBIDDEN', `${url} without erp:ai:view`);
  }
  const aiOnly = await person('Ada Ai', ['erp:ai:view']);
  const parsed = expectStatus(await parse({ text: 'call @maria about #WEB', now: NOW }, aiOnly.api), 200, 'parse without PM codes');
  t.match(parsed.proposal, { assigneeId: null, projectId: null });
  t.same(parsed.warnings.map((w: { code: string }) => w.code).sort(), ['UNKNOWN_PROJECT', 'UNKNOWN_USER'], 'sees no users or projects');
  // names without @ or #, read as the caller: the caller finds them, one without PM codes finds no one and nothing
  const named = { text: 'remind Maria to call Acme in the Website relaunch', now: NOW };
  t.match(expectStatus(await parse(named), 200, 'by name').proposal, { title: 'Call Acme', assigneeId: people['Maria Rossi'].id, projectId: projects.WEB.id });
  const unseen = expectStatus(await parse(named, aiOnly.api), 200, 'by name without PM codes');
  t.match(unseen.proposal, { title: 'Remind Maria to call Acme in the Website relaunch', assigneeId: null, projectId: null });
  t.same(unseen.warnings, [], 'a name no one can see is just a word');
  expectProblem(t, await confirm({ title: 'x' }, aiOnly.api), 403, 'FORBIDDEN', 'cannot create tasks');
  t.same(expectStatus(await aiOnly.api('GET', '/api/ai/assistant/suggest?q=@ma'), 200, 'suggest').items, []);
  const help = expectStatus(await aiOnly.api('GET', '/api/ai/assistant/help?page=/pm/tasks'), 200, 'help');
  t.match(help, { canCreateTasks: false, topics: [], examples: [], page: null });
  // the entries erp:ai:view opens, as the manifests declare them; none of the project module's
  const allowed = ctx.kernel.modules.flatMap((m) => (m.manifest.menu ?? []).filter((e) => e.permission === 'erp:ai:view').map((e) => e.path));
  t.ok(allowed.includes('/ai/assistant'));
  t.same(
    help.pages.map((p: { path: string }) => p.path),
    allowed,
    'only the menu entries its codes allow',
  );
});

t.test('another tenant sees none of these users, projects or tasks', async (t) => {
  const other = await ctx.tenant();
  const outsider = await ctx.user(other, { codes: ['erp:ai:view', 'erp:pm:view'] });
  const api = apiAs(ctx, outsider.token);
  const parsed = expectStatus(await api('POST', '/api/ai/assistant/parse', { text: 'call @maria #WEB', now: NOW }), 200, 'parse');
  t.match(parsed.proposal, { assigneeId: null, projectId: null });
  const named = expectStatus(await api('POST', '/api/ai/assistant/parse', { text: 'Maria should call Acme for the Website relaunch', now: NOW }), 200, 'by name');
  t.match(named.proposal, { title: 'Maria should call Acme for the Website relaunch', assigneeId: null, projectId: null });
  const res = await api('POST', '/api/ai/assistant/confirm', { title: 'x', projectId: projects.WEB.id });
  t.equal(res.statusCode, (await api('POST', '/api/pm/tasks', { title: 'x', projectId: projects.WEB.id })).statusCode, 'a foreign project as PM answers');
  t.ok(res.statusCode >= 400 && res.statusCode < 500);
  t.same(expectStatus(await api('GET', '/api/ai/assistant/suggest?q=@maria'), 200, 'users').items, []);
  t.same(expectStatus(await api('GET', '/api/ai/assistant/suggest?kind=title&q=renewal'), 200, 'titles').items, []);
});

t.test('suggest: users, projects and recent titles, ranked, with matched ranges', async (t) => {
  const users = expectStatus(await caller.api('GET', '/api/ai/assistant/suggest?q=@mari'), 200, 'users');
  t.same(
    users.items
      .slice(0, 2)
      .map((s: { label: string }) => s.label)
      .sort(),
    ['Maria Rossi', 'Mario Bianchi'],
  );
  t.match(users.items[0], { kind: 'user', insert: /^@.+@/, matches: [{ field: String, ranges: [[Number, Number]] }] });
  const [range] = users.items[0].matches.find((m: { field: string }) => m.field === 'name').ranges;
  t.equal(users.items[0].label.slice(range[0], range[1]).toLowerCase(), 'mari', 'the range marks what matched');
  const typo = expectStatus(await caller.api('GET', '/api/ai/assistant/suggest?q=@rosi'), 200, 'typo');
  t.equal(typo.items[0]?.label, 'Maria Rossi', 'a near miss still finds her');
  const byKind = expectStatus(await caller.api('GET', '/api/ai/assistant/suggest?kind=project&q=web'), 200, 'projects');
  t.match(byKind.items[0], { kind: 'project', id: projects.WEB.id, insert: '#WEB', label: 'Website relaunch' });
  const marketing = expectStatus(await caller.api('GET', '/api/ai/assistant/suggest?q=%23market&limit=5'), 200, '#market');
  t.same(marketing.items.map((s: { detail: string }) => s.detail).sort(), ['MKE', 'MKT']);
  t.notOk(
    expectStatus(await caller.api('GET', '/api/ai/assistant/suggest?q=%23secret'), 200, 'foreign').items.some((s: { detail: string }) => s.detail === 'SEC'),
    "another's project",
  );
  expectStatus(await confirm({ title: 'Renew the Acme contract' }), 201, 'a task');
  expectStatus(await people['Li Wei'].api('POST', '/api/ai/assistant/confirm', { title: 'Renew my passport' }), 201, "someone else's task");
  const titles = expectStatus(await caller.api('GET', '/api/ai/assistant/suggest?q=renew'), 200, 'titles');
  t.same(
    titles.items.map((s: { label: string }) => s.label),
    ['Renew the Acme contract', 'Call Acme about the renewal'],
    "only the caller's titles, the closer first",
  );
  const all = expectStatus(await caller.api('GET', '/api/ai/assistant/suggest?kind=user&limit=3'), 200, 'no query');
  t.equal(all.items.length, 3, 'limit holds');
  for (const q of ['limit=0', 'limit=21', 'kind=team', `q=${'x'.repeat(101)}`, 'bogus=1', 'limit=two'])
    expectProblem(t, await caller.api('GET', `/api/ai/assistant/suggest?${q}`), 400, 'VALIDATION_FAILED', q);
});

t.test("help by page: the grammar, examples with the page's project, the caller's pages", async (t) => {
  const tasks = expectStatus(await caller.api('GET', '/api/ai/assistant/help?page=/pm/tasks'), 200, 'help');
  t.match(tasks, { page: { path: '/pm/tasks', label: 'Tasks', module: 'pm', current: true }, canCreateTasks: true, intro: { key: 'ai.assistant.help.intro' } });
  t.same(
    tasks.topics.map((x: { kind: string }) => x.kind),
    ['title', 'date', 'priority', 'assignee', 'project'],
  );
  t.ok(
    tasks.examples.some((e: string) => e.includes('#MKT')),
    'a project the caller reads (first by name)',
  );
  const paths = tasks.pages.map((p: { path: string }) => p.path);
  t.ok(paths.includes('/ai/assistant') && paths.includes('/pm/projects'), 'pages of several modules');
  t.notOk(paths.includes('/pm/settings/translations'), 'not a page of a code the caller lacks');
  // every example parses into a proposal without warnings
  for (const text of tasks.examples) {
    const p = expectStatus(await parse({ text, now: NOW }), 200, text);
    t.same(p.warnings, [], `example "${text}" parses cleanly`);
  }
  const project = expectStatus(await caller.api('GET', `/api/ai/assistant/help?page=/pm/projects/${projects.WEB.id}`), 200, 'a project page');
  t.equal(project.page.path, '/pm/projects', 'the menu entry it belongs to');
  t.ok(
    project.examples.some((e: string) => e.includes('#WEB')),
    "the page's project",
  );
  const german = expectStatus(await caller.api('GET', '/api/ai/assistant/help?page=/ai/assistant', undefined, { 'accept-language': 'de' }), 200, 'de');
  t.ok(german.topics.find((x: { kind: string }) => x.kind === 'date').examples.includes('morgen um 15 Uhr'));
  t.ok(
    german.examples.some((e: string) => e.includes('morgen um 15 Uhr')),
    'examples in the language',
  );
  t.equal(expectStatus(await caller.api('GET', '/api/ai/assistant/help?page=/nowhere'), 200, 'unknown page').page, null);
  for (const q of ['page=pm/tasks', 'language=xx', 'bogus=1', `page=/${'x'.repeat(300)}`]) expectProblem(t, await caller.api('GET', `/api/ai/assistant/help?${q}`), 400, 'VALIDATION_FAILED', q);
});
