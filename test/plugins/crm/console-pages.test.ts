// The CRM dashboard over app.inject: the pipeline by stage counted and summed
// per currency (never adding euros to pounds), weighted by probability, won
// and lost with the win rate, the activities due (open, due today or before),
// the opportunities closing next; a stage of more than one page of rows summed
// over all its pages; only the current company's rows, never another tenant's,
// and nothing for a user without a CRM code; a tenant's own texts in the user's
// language, and no text key the page uses missing from texts.en.json.
import { readdirSync, readFileSync } from 'node:fs';
import t from 'tap';
import { build, PASSWORD, type TestTenant } from '../../helper.ts';
import { ConsoleSession, menuOf } from '../../support/console-session.ts';
import { crmApi, expectStatus } from './crm-api.ts';

const ctx = await build(t);
const tenant = await ctx.tenant();
const other = await ctx.tenant();
const crm = crmApi(ctx, tenant.adminToken);

// the page's "today" is the server's day in UTC
const today = new Date().toISOString().slice(0, 10);
const day = (n: number) => new Date(Date.parse(`${today}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);

const acme = await crm.customer({ name: 'Acme Tools', currency: 'EUR' });
const opportunity = (body: Record<string, unknown>) => crm.opportunity({ customerId: acme.id, currency: 'EUR', ...body });
const big = await opportunity({ name: 'Big proposal', stage: 'proposal', amount: '1000.00', probability: 50, expectedCloseDate: day(10) });
await opportunity({ name: 'Small proposal', stage: 'proposal', amount: '500.50', probability: 20 });
await opportunity({ name: 'Pound deal', stage: 'negotiation', amount: '200.00', currency: 'GBP', probability: 80, expectedCloseDate: day(5) });
await opportunity({ name: 'Won deal', stage: 'won', amount: '300.00', probability: 100 });
await opportunity({ name: 'Lost deal', stage: 'lost', amount: '50.00', probability: 0 });
const activity = (subject: string, dueDate: string, status = 'open') =>
  crm.activity({ subject, dueDate, status, customerId: acme.id, ...(subject.startsWith('Call') ? { opportunityId: big.id } : {}) });
await activity('Call about the proposal', day(-1));
await activity('Send the offer', day(0));
await activity('Future meeting', day(1));
await activity('Done long ago', day(-3), 'done');
await activity('Cancelled long ago', day(-3), 'cancelled');
await crm.lead({ status: 'new' });

const theirs = crmApi(ctx, other.adminToken);
const foreign = await theirs.customer({ name: 'Foreign Customer', currency: 'EUR' });
await theirs.opportunity({ name: 'Foreign deal', customerId: foreign.id, currency: 'EUR', stage: 'proposal', amount: '999.00' });

const viewer = await ctx.user(tenant, { codes: ['erp:crm:view'] });
const clerk = await ctx.user(tenant, { codes: ['erp:catalog:view'] });

const session = async (email: string, as: TestTenant = tenant) => {
  const s = new ConsoleSession(ctx.app);
  const res = await s.login(as.id, email, PASSWORD);
  if (res.statusCode !== 303) throw new Error(`login failed: ${res.statusCode}`);
  return s;
};
/** The text of the table row whose first cell is `label`, tags stripped. */
const row = (html: string, label: string) => {
  const tr = [...html.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((m) => m[1]).find((r) => new RegExp(`<th scope="row">(<a [^>]*>)?${label}(</a>)?`).test(r));
  return tr
    ?.replace(/<[^>]+>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
};
const card = (html: string, label: string) => {
  const m = new RegExp(`<span class="card-value">([^<]*)</span><span class="card-label">${label}</span>(?:<span class="crm-card-detail">([^<]*)</span>)?`).exec(html);
  return m ? [m[1], m[2]].filter(Boolean).join(' / ') : undefined;
};

t.test('the pipeline by stage, per currency and weighted; won, lost and the win rate', async (t) => {
  const s = await session(tenant.adminEmail);
  const res = await s.get('/crm/dashboard');
  t.equal(res.statusCode, 200);
  t.match(res.body, /<h1>CRM dashboard<\/h1>/);
  t.equal(row(res.body, 'Prospecting'), 'Prospecting 0 None None');
  t.equal(row(res.body, 'Proposal'), 'Proposal 2 €1,500.50 €600.10', 'counted, summed and weighted exactly');
  t.equal(row(res.body, 'Negotiation'), 'Negotiation 1 £200.00 £160.00', 'pounds stay pounds');
  t.equal(row(res.body, 'Won'), 'Won 1 €300.00');
  t.equal(row(res.body, 'Lost'), 'Lost 1 €50.00');
  t.equal(card(res.body, 'Open opportunities'), '3 / €1,500.50 · £200.00');
  t.equal(card(res.body, 'Weighted open pipeline'), '€600.10 · £160.00');
  t.equal(card(res.body, 'Won'), '1 / €300.00');
  t.equal(card(res.body, 'Win rate \\(won of won and lost\\)'), '50 %');
  t.equal(card(res.body, 'Open leads'), '1');
  t.match(res.body, /data-chart="crm-chart-pipeline" role="img" aria-label="Pipeline by stage: Prospecting 0 \(None\);[^"]*Proposal 2 \(€1,500\.50\);/, 'the chart says its numbers');
  const charts = JSON.parse(/<script type="application\/json" id="crm-charts">([^<]*)<\/script>/.exec(res.body)![1]);
  t.same(
    charts['crm-chart-pipeline'].series.map((s: { name: string; data: number[] }) => [s.name, s.data]),
    [
      ['EUR', [0, 0, 1500.5, 0, 300, 50]],
      ['GBP', [0, 0, 0, 200, 0, 0]],
    ],
    'one series per currency',
  );
  t.notMatch(res.body, /Foreign/, "never another tenant's rows");
});

t.test('activities due: open, due today or before, oldest first; the opportunities closing next', async (t) => {
  const s = await session(tenant.adminEmail);
  const res = await s.get('/crm/dashboard');
  t.equal(card(res.body, 'Activities due'), '2');
  t.equal(row(res.body, 'Call about the proposal'), `Call about the proposal (Call) ${day(-1)} 1 day overdue Big proposal`, 'about its opportunity');
  t.match(row(res.body, 'Send the offer'), `${day(0)} Today Acme Tools`);
  for (const gone of ['Future meeting', 'Done long ago', 'Cancelled long ago']) t.notMatch(res.body, gone, `${gone}: not due`);
  const closing = [...res.body.matchAll(/<th scope="row"><a href="\/crm\/opportunities\/[^"]+">([^<]+)<\/a><\/th>/g)].map((m) => m[1]);
  t.same(closing.slice(0, 2), ['Pound deal', 'Big proposal'], 'the earliest expected close first');
  t.notOk(closing.includes('Won deal'), 'decided deals are not closing');
});

t.test('a user with the view code sees the same; without a CRM code, nothing', async (t) => {
  const v = await session(viewer.email);
  const seen = await v.get('/crm/dashboard');
  t.equal(seen.statusCode, 200);
  t.equal(row(seen.body, 'Proposal'), 'Proposal 2 €1,500.50 €600.10');
  const c = await session(clerk.email);
  t.notOk(menuOf((await c.get('/catalog/products')).body).includes('/crm/dashboard'), 'no menu entry without the code');
  const refused = await c.get('/crm/dashboard');
  t.equal(refused.statusCode, 403, "the API's refusal");
  t.notMatch(refused.body, /Acme|proposal|€/);
});

t.test("the current company's pipeline only; a stage of more than one page is summed over all pages", async (t) => {
  const me = expectStatus(await crm.api('GET', '/api/auth/me'), 200, 'me');
  const branch = await ctx.company(tenant, 'BIG', [me.id]);
  const inBranch = { 'x-company-id': branch };
  const buyer = await crm.customer({ name: 'Branch buyer', currency: 'EUR' }, inBranch);
  // 1001 rows: one more than a page of the list API
  for (let n = 0; n < 1001; n += 100) {
    const create = Array.from({ length: Math.min(100, 1001 - n) }, (_, i) => ({
      name: `Lead deal ${n + i}`,
      customerId: buyer.id,
      currency: 'EUR',
      stage: 'prospecting',
      amount: '1.25',
      probability: 10,
    }));
    expectStatus(await crm.api('POST', '/api/crm/opportunities/bulk', { create }, inBranch), 200, 'bulk create');
  }
  const s = await session(tenant.adminEmail);
  await s.get('/crm/dashboard');
  t.equal((await s.post('/console/company', { value: branch, back: '/crm/dashboard' })).statusCode, 303);
  const res = await s.get('/crm/dashboard');
  t.equal(res.statusCode, 200);
  t.equal(row(res.body, 'Prospecting'), 'Prospecting 1001 €1,251.25 €125.13', 'every page counted; the weighted sum rounded once');
  t.equal(row(res.body, 'Proposal'), 'Proposal 0 None None', "the other company's deals are not here");
  t.notMatch(res.body, /Acme|Big proposal|partial/);
});

t.test('the module serves the script and styles its page includes', async (t) => {
  for (const url of ['/console/assets/charts.js', '/console/modules/crm/crm.css']) {
    t.equal((await ctx.app.inject({ method: 'GET', url })).statusCode, 200, url);
  }
});

t.test("a tenant's German texts show in the view and in what load() builds; English where there is none", async (t) => {
  const german = {
    'dashboard.asOf': 'Stand {today} (UTC)',
    'dashboard.pipeline': 'Pipeline nach Phase',
    'dashboard.openLeads': 'Offene Interessenten',
    'dashboard.pipelineSummary': 'Pipeline nach Phase: {stages}.',
    'stage.proposal': 'Angebot',
    'common.none': 'Keine',
  };
  for (const [key, text] of Object.entries(german)) expectStatus(await crm.api('POST', '/api/translations', { language: 'de', namespace: 'crm', key, text }), 201, key);
  const s = await session(tenant.adminEmail);
  await s.get('/crm/dashboard');
  t.equal((await s.post('/console/language', { value: 'de', back: '/crm/dashboard' })).statusCode, 303);
  const res = await s.get('/crm/dashboard');
  t.equal(res.statusCode, 200);
  t.match(res.body, `<p class="crm-muted">Stand ${today} (UTC)</p>`, "the view's text, its placeholder filled in");
  t.match(res.body, '<h2 id="crm-pipeline-title">Pipeline nach Phase</h2>');
  t.equal(card(res.body, 'Offene Interessenten'), '1', 'a card label load() builds');
  t.equal(row(res.body, 'Angebot'), 'Angebot 2 €1,500.50 €600.10', "a stage's name");
  t.equal(row(res.body, 'Prospecting'), 'Prospecting 0 Keine Keine', 'a stage without a German text stays English; "None" is German');
  t.match(res.body, /aria-label="Pipeline nach Phase: Prospecting 0 \(Keine\);[^"]*Angebot 2 \(€1,500\.50\);/, "the chart's summary");
  const charts = JSON.parse(/<script type="application\/json" id="crm-charts">([^<]*)<\/script>/.exec(res.body)![1]);
  t.ok(charts['crm-chart-pipeline'].xAxis.data.includes('Angebot (2)'), "the chart's axis");
  t.equal(card(res.body, 'Weighted open pipeline'), '€600.10 · £160.00', 'English for a key without a German text');
  t.match(res.body, '<h2 id="crm-due-title">Activities due</h2>');

  const english = await (await session(tenant.adminEmail)).get('/crm/dashboard');
  t.match(english.body, '<h2 id="crm-pipeline-title">Pipeline by stage</h2>', 'a user without German keeps the English');
  t.equal(card(english.body, 'Open leads'), '1');
});

t.test('every text key the pages use is in texts.en.json, and every stage and activity type has its text', async (t) => {
  const crmDir = new URL('../../../plugins/crm/', import.meta.url);
  const texts: Record<string, string> = JSON.parse(readFileSync(new URL('texts.en.json', crmDir), 'utf8'));
  const keysIn = (folder: string, pattern: RegExp) =>
    readdirSync(new URL(folder, crmDir)).flatMap((file) => [...readFileSync(new URL(`${folder}/${file}`, crmDir), 'utf8').matchAll(pattern)].map((m) => `${folder}/${file}: ${m[1]}`));
  const used = [...keysIn('views', /\{\{t "([^"]+)"/g), ...keysIn('pages', /api\.text\('([^']+)'/g)];
  t.ok(used.length > 30, `${used.length} keys found: the patterns still match the code`);
  t.same(
    used.filter((u) => !(u.split(': ')[1] in texts)),
    [],
    'no key without its English',
  );
  const manifest = JSON.parse(readFileSync(new URL('../../../manifests/crm.json', import.meta.url), 'utf8'));
  const values = (entity: string, field: string): string[] => manifest.entities.find((e: { name: string }) => e.name === entity).fields[field].values;
  const named = [...values('Opportunity', 'stage').map((v) => `stage.${v}`), ...values('Activity', 'type').map((v) => `activityType.${v}`)];
  t.same(
    named.filter((k) => !(k in texts)),
    [],
    'the values the page names',
  );
});
