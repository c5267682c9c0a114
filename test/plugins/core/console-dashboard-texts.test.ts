// The core dashboard (/dashboard) in the user's language: a tenant's German
// texts (namespace core) in the view and in the card labels load() builds,
// English where there is none, and no text key the page uses missing from
// plugins/core/texts.en.json.
import { readFileSync } from 'node:fs';
import t from 'tap';
import { build, PASSWORD } from '../../helper.ts';
import { ConsoleSession } from '../../support/console-session.ts';
import { apiAs, expectStatus } from './core-api.ts';

const ctx = await build(t);
const tenant = await ctx.tenant();
const api = apiAs(ctx, tenant.adminToken);

const loggedIn = async () => {
  const s = new ConsoleSession(ctx.app);
  const res = await s.login(tenant.id, tenant.adminEmail, PASSWORD);
  if (res.statusCode !== 303) throw new Error(`login failed: ${res.statusCode}`);
  return s;
};
const cardLabels = (html: string) => [...html.matchAll(/<span class="card-label">([^<]*)<\/span>/g)].map((m) => m[1]);

t.test("a tenant's German texts show in the view and in what load() builds; English where there is none", async (t) => {
  const german = { 'dashboard.heading': 'Übersicht', 'dashboard.newUsers': 'Neue Benutzer', 'dashboard.activeUsers': 'Aktive Benutzer' };
  for (const [key, text] of Object.entries(german)) expectStatus(await api('POST', '/api/translations', { language: 'de', namespace: 'core', key, text }), 201, key);
  const s = await loggedIn();
  await s.get('/dashboard');
  t.equal((await s.post('/console/language', { value: 'de', back: '/dashboard' })).statusCode, 303);
  const res = await s.get('/dashboard');
  t.equal(res.statusCode, 200);
  t.match(res.body, '<h1>Übersicht</h1>', "the view's text");
  t.match(res.body, '<h2 id="new-users">Neue Benutzer</h2>');
  t.same(cardLabels(res.body), ['Active companies', 'Active organizations', 'Aktive Benutzer', 'Active groups', 'Database size'], 'a card label load() builds; the others stay English');
  t.match(res.body, '<h2 id="new-companies">Recently added companies</h2>');

  const english = await (await loggedIn()).get('/dashboard');
  t.match(english.body, '<h1>Dashboard</h1>', 'a user without German keeps the English');
  t.ok(cardLabels(english.body).includes('Active users'));
});

t.test('every text key the page uses is in texts.en.json', async (t) => {
  const read = (file: string) => readFileSync(new URL(`../../../plugins/core/${file}`, import.meta.url), 'utf8');
  const texts: Record<string, string> = JSON.parse(read('texts.en.json'));
  const used = [...read('views/dashboard.hbs').matchAll(/\{\{t "([^"]+)"/g), ...read('dashboard-page.ts').matchAll(/api\.text\('([^']+)'/g)].map((m) => m[1]);
  t.ok(used.length > 15, `${used.length} keys found: the patterns still match the code`);
  t.same(
    used.filter((key) => !(key in texts)),
    [],
    'no key without its English',
  );
});
