// The AI module's console pages over app.inject, as a browser uses them: the
// dashboard, the assistant (and the relay calls its script makes), the report
// history with a run and its comparison, and running a report now. Each shows
// what the API gives the user: nothing without the module's code, never
// another user's reports, never another tenant's rows; a bad address is a 4xx.
// Their words are the module's texts (plugins/ai/texts.en.json), which a
// tenant translates.
import { readdirSync, readFileSync } from 'node:fs';
import t from 'tap';
import type { LightMyRequestResponse } from 'fastify';
import { build, PASSWORD, type TestTenant } from '../../helper.ts';
import { ConsoleSession, menuOf } from '../../support/console-session.ts';
import { apiAs, expectStatus } from '../core/core-api.ts';

const ctx = await build(t);
const tenant = await ctx.tenant();
const other = await ctx.tenant();
const AI = ['erp:ai:view', 'erp:pm:view'];
const UNKNOWN = '01a20b42-0000-7000-8000-000000000000';

const sessionOf = async (tenantId: string, email: string) => {
  const s = new ConsoleSession(ctx.app);
  const res = await s.login(tenantId, email, PASSWORD);
  if (res.statusCode !== 303) throw new Error(`login failed: ${res.statusCode}`);
  return s;
};

/** A user with the AI codes, their report run twice, a client and a task, all made through the API. */
async function seed(where: TestTenant, prefix: string) {
  const user = await ctx.user(where, { codes: AI });
  const api = apiAs(ctx, user.token);
  expectStatus(await api('POST', '/api/pm/tasks', { title: `${prefix} task`, priority: 'high' }), 201, 'task');
  const client = expectStatus(await api('POST', '/api/ai/clients', { name: `${prefix} laptop` }), 201, 'client');
  const report = expectStatus(await api('POST', '/api/ai/reports', { name: `${prefix} summary`, type: 'task-summary' }), 201, 'report');
  const first = expectStatus(await api('POST', `/api/ai/reports/${report.id}/run`, { to: '2020-01-01T00:00:00Z' }), 201, 'first run');
  const second = expectStatus(await api('POST', `/api/ai/reports/${report.id}/run`, {}), 201, 'second run');
  return { user, api, client, report, first, second };
}

const mine = await seed(tenant, 'Mine');
const theirs = await seed(other, 'Elsewhere');
const me = await sessionOf(tenant.id, mine.user.email);

const relay = (s: ConsoleSession, method: 'GET' | 'POST', url: string, payload?: unknown, token = s.csrf): Promise<LightMyRequestResponse> =>
  ctx.app.inject({
    method,
    url,
    headers: { cookie: s.cookieHeader, 'x-csrf-token': token, ...(payload === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(payload === undefined ? {} : { payload: JSON.stringify(payload) }),
  });

t.test('the menu leads to the dashboard and the assistant', async (t) => {
  const menu = menuOf((await me.get('/ai/dashboard')).body);
  t.ok(menu.includes('/ai/dashboard'));
  t.ok(menu.includes('/ai/assistant'));
});

t.test('dashboard: cards, charts with tables, clients with presence, last runs', async (t) => {
  const res = await me.get('/ai/dashboard');
  t.equal(res.statusCode, 200);
  t.match(res.body, /<h1>AI dashboard<\/h1>/);
  t.match(res.body, /<span class="card-value">1<\/span><span class="card-label">Tasks<\/span>/, 'my one task');
  t.match(res.body, /role="img" aria-label="Tasks by priority: Critical 0, High 1, Normal 0, Low 0"/, 'the chart is summarised for screen readers');
  t.match(res.body, /<th scope="col">Priority<\/th>/, 'and given as a table');
  t.match(res.body, /id="ai-dashboard-charts">\[\{"id":"ai-chart-category"/, "the charts' data for the script");
  t.match(res.body, new RegExp(`<a href="/ai/clients/${mine.client.id}">Mine laptop</a>`));
  t.match(res.body, /ai-offline">Offline<\/span>/, 'a client that never called is offline');
  t.match(res.body, new RegExp(`/ai/reports/history/${mine.second.id}">Mine summary</a>`), 'the last runs link to the history');
  t.notMatch(res.body, /Elsewhere/, "another tenant's rows never show");
  const js = await ctx.app.inject({ method: 'GET', url: '/console/modules/ai/dashboard.js' });
  t.equal(js.statusCode, 200, "the page's script is served");
});

t.test('assistant: the help, and parse, confirm and suggest through the relay', async (t) => {
  const res = await me.get('/ai/assistant');
  t.equal(res.statusCode, 200);
  t.match(res.body, /<label for="ai-text">Your request<\/label>/);
  t.match(res.body, /id="ai-result" class="ai-result" role="status"/, 'the result region is a live region');
  t.match(res.body, /data-example="[^"]+"/, 'examples from the help');
  const parsed = await relay(me, 'POST', '/console/api/ai/assistant/parse', { text: 'Call Acme tomorrow, high priority' });
  t.equal(parsed.statusCode, 200);
  const proposal = parsed.json().proposal;
  t.match(proposal, { title: 'Call Acme', priority: 'high' });
  const confirmed = await relay(me, 'POST', '/console/api/ai/assistant/confirm', { title: proposal.title, dueDate: proposal.dueDate, priority: proposal.priority, timeZone: parsed.json().timeZone });
  t.equal(confirmed.statusCode, 201);
  t.equal(confirmed.json().task.title, 'Call Acme');
  const task = await me.get(`/ai/tasks/${confirmed.json().task.id}`);
  t.equal(task.statusCode, 200, 'the link the page shows opens the task');
  const suggested = await relay(me, 'GET', '/console/api/ai/assistant/suggest?q=Mine&limit=6');
  t.equal(suggested.statusCode, 200);
  t.ok(
    suggested.json().items.some((s: { label: string }) => s.label === 'Mine task'),
    'a recent title is suggested',
  );
  t.equal((await relay(me, 'POST', '/console/api/ai/assistant/confirm', { title: ' ' })).statusCode, 400, "the API's refusal reaches the script");
  t.equal((await relay(me, 'POST', '/console/api/ai/assistant/parse', { text: 'x' }, 'forged')).statusCode, 403, 'no CSRF token, no call');
});

t.test('report history: newest first, filters, paging; another tenant never shows', async (t) => {
  const res = await me.get('/ai/reports/history');
  t.equal(res.statusCode, 200);
  t.match(res.body, /<h1>Report history<\/h1>/);
  const second = res.body.indexOf(`/ai/reports/history/${mine.second.id}"`);
  const first = res.body.indexOf(`/ai/reports/history/${mine.first.id}"`);
  t.ok(second > 0 && first > second, 'both runs, the newest first');
  t.match(res.body, /Report runs: 2 in all/);
  t.notMatch(res.body, /Elsewhere/);
  const filtered = await me.get(`/ai/reports/history?reportId=${mine.report.id}&status=failed`);
  t.match(filtered.body, /Runs of Mine summary: 0 in all/);
  const paged = await me.get('/ai/reports/history?size=10&page=2');
  t.match(paged.body, /Page 2 of 1/);
  t.equal((await me.get('/ai/reports/history?reportId=nope')).statusCode, 400, 'a malformed report id');
  const one = await me.get(`/ai/reports/${mine.report.id}/history`);
  t.equal(one.statusCode, 200);
  t.match(one.body, /<h1>Report history: Mine summary<\/h1>/);
  t.equal((await me.get(`/ai/reports/${UNKNOWN}/history`)).statusCode, 404);
});

t.test('a run: its result, and the comparison with the run before it', async (t) => {
  const res = await me.get(`/ai/reports/history/${mine.second.id}`);
  t.equal(res.statusCode, 200);
  t.match(res.body, /<h1>Mine summary: run of /);
  t.match(res.body, /<h2 id="ai-result-heading">Result<\/h2>/);
  t.match(res.body, /<dt>Total<\/dt><dd>1<\/dd>/, 'my one task');
  t.match(res.body, new RegExp(`previous successful run of this report: <a href="/ai/reports/history/${mine.first.id}">`));
  t.match(res.body, /<th scope="row">Total<\/th><td class="numeric">0<\/td><td class="numeric">1<\/td>/, 'total: 0 then 1');
  t.match(res.body, /<span aria-hidden="true">\+1<\/span><span class="visually-hidden">up by 1<\/span>/, 'the change in words too');
  const oldest = await me.get(`/ai/reports/history/${mine.first.id}`);
  t.match(oldest.body, /first successful run/);
  t.equal((await me.get('/ai/reports/history/nope')).statusCode, 400);
  t.equal((await me.get(`/ai/reports/history/${UNKNOWN}`)).statusCode, 404);
  t.equal((await me.get(`/ai/reports/history/${theirs.second.id}`)).statusCode, 404, "another tenant's run");
});

t.test('run now: linked from the report, run through the relay', async (t) => {
  const detail = await me.get(`/ai/reports/${mine.report.id}`);
  t.match(detail.body, new RegExp(`href="/ai/reports/${mine.report.id}/run">Run</a>`), 'the generic report page links to it');
  t.match(detail.body, new RegExp(`href="/ai/reports/${mine.report.id}/history">History</a>`));
  const page = await me.get(`/ai/reports/${mine.report.id}/run`);
  t.equal(page.statusCode, 200);
  t.match(page.body, /<h1>Run Mine summary<\/h1>/);
  t.match(page.body, /<button type="submit" id="ai-run-button">Run now<\/button>/);
  t.match(page.body, new RegExp(`id="ai-run-data">\\{"id":"${mine.report.id}"\\}`));
  const ran = await relay(me, 'POST', `/console/api/ai/reports/${mine.report.id}/run`, {});
  t.equal(ran.statusCode, 201);
  t.equal(ran.json().status, 'succeeded');
  const shown = await me.get(`/ai/reports/history/${ran.json().id}?ran=1`);
  t.match(shown.body, /The report ran\./, 'the run opens with a notice');
  const backwards = await relay(me, 'POST', `/console/api/ai/reports/${mine.report.id}/run`, { from: '2026-02-01T00:00:00Z', to: '2026-01-01T00:00:00Z' });
  t.equal(backwards.statusCode, 400, 'a range backwards');
  t.equal((await me.get('/ai/reports/nope/run')).statusCode, 400);
  t.equal((await me.get(`/ai/reports/${UNKNOWN}/run`)).statusCode, 404);
  t.equal((await me.get(`/ai/reports/${theirs.report.id}/run`)).statusCode, 404, "another tenant's report");
});

t.test("another user's reports and runs are theirs", async (t) => {
  const colleague = await ctx.user(tenant, { codes: AI });
  const s = await sessionOf(tenant.id, colleague.email);
  const history = await s.get('/ai/reports/history');
  t.equal(history.statusCode, 200);
  t.match(history.body, /Report runs: 0 in all/);
  t.notMatch(history.body, /Mine summary/);
  t.equal((await s.get(`/ai/reports/history/${mine.second.id}`)).statusCode, 404);
  t.equal((await s.get(`/ai/reports/${mine.report.id}/run`)).statusCode, 404);
  t.equal((await relay(s, 'POST', `/console/api/ai/reports/${mine.report.id}/run`, {})).statusCode, 404);
  t.notMatch((await s.get('/ai/dashboard')).body, /Mine laptop/, "another user's client");
});

t.test("without the AI module's code: no menu entry, no data", async (t) => {
  const outsider = await ctx.user(tenant, { codes: ['erp:pm:view'] });
  const s = await sessionOf(tenant.id, outsider.email);
  const menu = menuOf((await s.get('/pm/tasks')).body);
  t.notOk(menu.includes('/ai/dashboard'));
  for (const url of ['/ai/dashboard', '/ai/assistant', '/ai/reports/history', `/ai/reports/history/${mine.second.id}`, `/ai/reports/${mine.report.id}/run`]) {
    const res = await s.get(url);
    t.ok(res.statusCode >= 400 && res.statusCode < 500, `${url}: ${res.statusCode}`);
    t.notMatch(res.body, /Mine (laptop|summary)/, `${url}: no data`);
  }
  t.equal((await relay(s, 'POST', '/console/api/ai/assistant/parse', { text: 'Call Acme' })).statusCode, 403);
});

t.test("the pages in the tenant's German: its texts in the views, in what load() builds and in the scripts' texts; English where it has none", async (t) => {
  const admin = apiAs(ctx, tenant.adminToken);
  const translate = async (key: string, text: string) => expectStatus(await admin('POST', '/api/translations', { language: 'de', namespace: 'ai', key, text }), 201, key);
  await translate('page.ai.dashboard', 'KI-Übersicht');
  await translate('dashboard.tasks', 'Aufgaben');
  await translate('dashboard.offline', 'Getrennt');
  await translate('dashboard.tasksByPriority', 'Aufgaben nach Priorität');
  await translate('value.high', 'Hoch');
  await translate('page.ai.reports.history', 'Berichtsverlauf');
  await translate('history.caption', 'Berichtsläufe: {total} insgesamt');
  await translate('history.pageOf', 'Seite {page} von {pages}');
  await translate('page.ai.reports.:id.run', 'Ausführen');
  await translate('assistant.nobody', 'Niemand');
  await translate('run.upBy', 'gestiegen um {n}');

  const de = await sessionOf(tenant.id, mine.user.email);
  await de.get('/ai/dashboard');
  t.equal((await de.post('/console/language', { value: 'de', back: '/ai/dashboard' })).statusCode, 303, 'German chosen in the switcher');

  const dashboard = (await de.get('/ai/dashboard')).body;
  t.match(dashboard, /<title>KI-Übersicht · Plinth<\/title>/, "the page's title, by its page. key");
  t.match(dashboard, /<h1>KI-Übersicht<\/h1>/, 'and its heading');
  t.match(dashboard, /<span class="card-value">\d+<\/span><span class="card-label">Aufgaben<\/span>/, 'a card label load() builds');
  t.match(dashboard, /<th scope="col">Aufgaben<\/th>/, "the same key in the view's table");
  t.match(dashboard, /ai-offline">Getrennt<\/span>/, 'a text of the view');
  t.match(dashboard, /<h2 id="ai-chart-priority-heading">Aufgaben nach Priorität<\/h2>/, "a chart's title");
  t.match(dashboard, /aria-label="Aufgaben nach Priorität: Critical 0, Hoch \d+, Normal 0, Low 0"/, 'its summary, a translated value among English ones');
  t.match(dashboard, /"title":"Aufgaben nach Priorität"/, "the chart's data for the script");
  t.match(dashboard, /<summary>Aufgaben nach Priorität as a table<\/summary>/, 'a placeholder filled in an English text');
  t.match(dashboard, /<span class="card-label">Overdue tasks<\/span>/, 'English for a key without a German text');

  const history = (await de.get('/ai/reports/history')).body;
  t.match(history, /<h1>Berichtsverlauf<\/h1>/, "a heading load() builds from the page's title");
  t.match(history, /<caption>Berichtsläufe: \d+ insgesamt<\/caption>/, "load()'s placeholder");
  t.match(history, /<span>Seite 1 von 1<\/span>/, "the view's placeholders");
  t.match(history, /<th scope="col">Triggered by<\/th>/);

  const detail = (await de.get(`/ai/reports/${mine.report.id}`)).body;
  t.match(detail, new RegExp(`href="/ai/reports/${mine.report.id}/run">Ausführen</a>`), "the report's page links to its run page by the translated title");
  const run = (await de.get(`/ai/reports/${mine.report.id}/run`)).body;
  t.match(run, /<title>Ausführen · Plinth<\/title>/);
  t.match(run, /id="ai-run-texts">\{"rangeBackwards":"The start of the range is after its end\."/, "the script's texts, in English without German ones");
  t.match((await de.get(`/ai/reports/history/${mine.second.id}`)).body, /<span class="visually-hidden">gestiegen um 1<\/span>/, 'a change in words');

  const assistant = (await de.get('/ai/assistant')).body;
  const texts = JSON.parse(/<script type="application\/json" id="ai-assistant-texts">(.*?)<\/script>/s.exec(assistant)?.[1] ?? 'null');
  t.equal(texts?.nobody, 'Niemand', "the assistant's script gets the German text");
  t.equal(texts?.writeFirst, 'Write a request first.', 'and English for the rest');
  t.equal(texts?.kinds?.date, 'date');

  t.match((await me.get('/ai/dashboard')).body, /<h1>AI dashboard<\/h1>/, 'an English session keeps the English');
});

t.test('every text key the views and page code name is in texts.en.json, and every text there is used', async (t) => {
  const dir = new URL('../../../plugins/ai/', import.meta.url);
  const english: Record<string, string> = JSON.parse(readFileSync(new URL('texts.en.json', dir), 'utf8'));
  const catalog = (await apiAs(ctx, tenant.adminToken)('GET', '/api/translations/catalog?namespaces=ai&language=en')).json().texts.ai as Record<string, string>;
  const views = readdirSync(new URL('views/', dir)).map((f) => readFileSync(new URL(`views/${f}`, dir), 'utf8'));
  const code = [
    'dashboard-page.ts',
    'assistant-page.ts',
    'report-history-page.ts',
    'report-run-page.ts',
    'run-report-page.ts',
    'report-delete-page.ts',
    'report-archive-page.ts',
    'page-support.ts',
    'report-result.ts',
  ].map((f) => readFileSync(new URL(f, dir), 'utf8'));
  // a quoted key of one of the texts' prefixes ('dashboard.tasks'), wherever the code names it
  const prefixes = [...new Set(Object.keys(english).map((k) => k.split('.')[0])), 'page'];
  const keyLiteral = new RegExp(`'((?:${prefixes.join('|')})\\.[A-Za-z0-9_.:]+)'`, 'g');
  const used = new Set([...views.flatMap((v) => [...v.matchAll(/\{\{t "([^"]+)"/g)].map((m) => m[1])), ...code.flatMap((c) => [...c.matchAll(keyLiteral)].map((m) => m[1]))]);
  t.ok(used.size > 100, `${used.size} keys found`);
  for (const key of used) {
    // a page title's key is the kernel's, from ConsolePage.title
    if (key.startsWith('page.')) t.ok(key in catalog, `${key}: a page's title`);
    else t.ok(key in english, `${key} is in texts.en.json`);
  }
  // value.* texts are looked up by the value; the others must be named somewhere
  t.same(
    Object.keys(english).filter((k) => !k.startsWith('value.') && !used.has(k)),
    [],
    'no unused text',
  );
  const manifest = (name: string) =>
    JSON.parse(readFileSync(new URL(`../../../manifests/${name}.json`, import.meta.url), 'utf8')) as { entities: { name: string; fields: Record<string, { values?: string[] }> }[] };
  const valuesOf = (m: string, entity: string, field: string) => manifest(m).entities.find((e) => e.name === entity)?.fields[field]?.values ?? [];
  const shown = [
    ...valuesOf('pm', 'Task', 'category'),
    ...valuesOf('pm', 'Task', 'priority'),
    ...valuesOf('ai', 'AiJob', 'state'),
    ...valuesOf('ai', 'AiClient', 'status'),
    ...valuesOf('ai', 'AiReportRun', 'status'),
    ...valuesOf('ai', 'AiReportRun', 'triggeredBy'),
  ];
  t.ok(shown.length > 15, 'the values the pages show');
  for (const v of shown) t.ok(`value.${v}` in english, `value.${v}: the words for a value the pages show`);
});
