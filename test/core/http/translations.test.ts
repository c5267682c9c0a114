// Interface texts: the built-in English of every manifest label and console
// string, a tenant's own texts per language (generic CRUD under
// /api/translations, limited by grants: a PM administrator changes "pm" only),
// the merged catalog with its fallbacks, the missing-keys report, /api/meta's
// labels in the caller's language, and the console's Translations pages.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import t from 'tap';
import { build, PASSWORD } from '../../helper.ts';
import { ConsoleSession } from '../../support/console-session.ts';
import { builtInTexts, type TextSource } from '../../../core/context/built-in-texts.ts';

const ctx = await build(t);
const tenant = await ctx.tenant();
const other = await ctx.tenant();
const as = (token: string, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown, headers: Record<string, string> = {}) =>
  ctx.as(token, { method, url, headers, ...(payload === undefined ? {} : { payload: payload as object }) });
const admin = tenant.adminToken;

t.test('the built-in catalog: every manifest label and console string, in English', async (t) => {
  const res = await as(admin, 'GET', '/api/translations/catalog');
  t.equal(res.statusCode, 200);
  const { texts, languages } = res.json();
  t.same(languages, ['en']);
  t.equal(texts.crm['menu.crm.leads'], 'Leads');
  t.equal(texts.catalog['field.Product.sku'], 'SKU');
  t.equal(texts.catalog['entity.Product'], 'Product');
  t.equal(texts.console['form.save'], 'Save');
  t.notOk('field.RefreshToken.tokenHash' in texts.core, 'internal fields have no text');
  const some = await as(admin, 'GET', '/api/translations/catalog?namespaces=console,crm');
  t.same(Object.keys(some.json().texts).sort(), ['console', 'crm']);
});

t.test("a module's texts file: its keys join the module's namespace, a bad file stops the start", async (t) => {
  const res = await as(admin, 'GET', '/api/translations/catalog?namespaces=pm');
  t.equal(res.json().texts.pm['page.pm.projects.:id.board'], 'Board', "a page's own title is a key of its module");
  const dir = mkdtempSync(join(tmpdir(), 'plinth-texts-'));
  const file = (name: string, text: string) => {
    writeFileSync(join(dir, name), text);
    return pathToFileURL(join(dir, name));
  };
  const modulesWith = (texts: URL): TextSource[] => [{ manifest: { id: 'shop', menu: [], entities: [] }, plugin: { texts } }];
  t.equal(
    builtInTexts(modulesWith(file('ok.json', '{"cart.empty": "Your cart is empty"}')))
      .get('shop')
      ?.get('cart.empty'),
    'Your cart is empty',
  );
  t.throws(() => builtInTexts(modulesWith(file('broken.json', '{"cart.empty": '))), /plugins\/shop's texts .*broken\.json/);
  t.throws(() => builtInTexts(modulesWith(file('list.json', '["a"]'))), /must be a JSON object/);
  t.throws(() => builtInTexts(modulesWith(file('number.json', '{"cart.count": 3}'))), /"cart.count" must be a non-empty string/);
  t.throws(() => builtInTexts(modulesWith(file('clash.json', '{"menu.shop": "Shop"}'))), /"menu.shop" starts like the keys the manifest's labels get/);
  t.throws(() => builtInTexts(modulesWith(pathToFileURL(join(dir, 'missing.json')))), /ENOENT/);
});

t.test("a tenant's texts win, per language, with fallbacks", async (t) => {
  const made = await as(admin, 'POST', '/api/translations', { language: 'de', namespace: 'crm', key: 'menu.crm.leads', text: 'Interessenten' });
  t.equal(made.statusCode, 201);
  await as(admin, 'POST', '/api/translations', { language: 'de', namespace: 'console', key: 'form.save', text: 'Speichern' });
  const de = (await as(admin, 'GET', '/api/translations/catalog', undefined, { 'accept-language': 'de-AT, en;q=0.5' })).json();
  t.equal(de.texts.crm['menu.crm.leads'], 'Interessenten', 'de-AT falls back to de');
  t.equal(de.texts.crm['menu.crm.customers'], 'Customers', 'a key without a German text: English');
  t.same(de.languages, ['de', 'en']);
  const asked = (await as(admin, 'GET', '/api/translations/catalog?language=fr')).json();
  t.equal(asked.texts.crm['menu.crm.leads'], 'Leads');
  const theirs = (await as(other.adminToken, 'GET', '/api/translations/catalog?language=de')).json();
  t.equal(theirs.texts.crm['menu.crm.leads'], 'Leads', "never another tenant's");

  const meta = (await as(admin, 'GET', '/api/meta', undefined, { 'accept-language': 'de' })).json();
  t.equal(meta.menu.find((e: { path: string }) => e.path === '/crm/leads').label, 'Interessenten', "/api/meta's labels follow");

  const update = await as(admin, 'PATCH', `/api/translations/${made.json().id}`, { text: 'Leads (DE)' }, { 'if-match': made.headers.etag as string });
  t.equal(update.statusCode, 200);
  const after = (await as(admin, 'GET', '/api/translations/catalog?language=de')).json();
  t.equal(after.texts.crm['menu.crm.leads'], 'Leads (DE)', 'a change shows at once');
});

t.test('what is missing, per namespace', async (t) => {
  const res = await as(admin, 'GET', '/api/translations/missing?language=de');
  t.equal(res.statusCode, 200);
  const crm = res.json().namespaces.find((n: { namespace: string }) => n.namespace === 'crm');
  t.equal(crm.translated, 1);
  t.equal(crm.missing.length, crm.total - 1);
  t.notOk(crm.missing.some((m: { key: string }) => m.key === 'menu.crm.leads'));
  const en = (await as(admin, 'GET', '/api/translations/missing?language=en')).json();
  t.ok(
    en.namespaces.every((n: { missing: unknown[] }) => n.missing.length === 0),
    'English is complete',
  );
  t.equal((await as(admin, 'GET', '/api/translations/missing')).statusCode, 400, 'a language is needed');
  t.equal((await as(admin, 'GET', '/api/translations/missing?language=Not_A_Tag')).statusCode, 400);
});

t.test('bad input and duplicates', async (t) => {
  const dup = await as(admin, 'POST', '/api/translations', { language: 'de', namespace: 'console', key: 'form.save', text: 'Noch einmal' });
  t.equal(dup.statusCode, 409, 'one text per language, namespace and key');
  for (const body of [
    { language: 'DE!', namespace: 'crm', key: 'k', text: 'x' },
    { language: 'de', namespace: 'Crm Module', key: 'k', text: 'x' },
    { language: 'de', namespace: 'crm', key: 'k', text: '' },
    { language: 'de', namespace: 'crm', key: 'k', text: 'x'.repeat(4001) },
    { language: 'de', namespace: 'crm', key: 'k' },
  ])
    t.equal((await as(admin, 'POST', '/api/translations', body)).statusCode, 400, JSON.stringify(body).slice(0, 60));
  t.equal((await as(admin, 'GET', '/api/translations/catalog?namespaces=..%2Fetc')).statusCode, 400);
});

t.test('grants decide whose texts a user may change', async (t) => {
  const pmAdmin = await ctx.user(tenant, { codes: ['erp:pm:admin'] });
  t.equal((await as(pmAdmin.token, 'POST', '/api/translations', { language: 'fr', namespace: 'pm', key: 'menu.pm.projects', text: 'Projets' })).statusCode, 201);
  t.equal((await as(pmAdmin.token, 'POST', '/api/translations', { language: 'fr', namespace: 'crm', key: 'menu.crm.leads', text: 'Pistes' })).statusCode, 403, 'not the CRM texts');
  const reader = await ctx.user(tenant, { codes: ['erp:catalog:view'] });
  t.equal((await as(reader.token, 'GET', '/api/translations/catalog?language=fr')).json().texts.pm['menu.pm.projects'], 'Projets', 'every user reads the catalog');
  t.equal((await as(reader.token, 'GET', '/api/translations/missing?language=fr')).statusCode, 403);
  t.equal((await as(reader.token, 'POST', '/api/translations', { language: 'fr', namespace: 'catalog', key: 'x', text: 'y' })).statusCode, 403);
  t.equal((await ctx.app.inject({ method: 'GET', url: '/api/translations/catalog' })).statusCode, 401);
});

t.test('the Translations page of the console', async (t) => {
  const s = new ConsoleSession(ctx.app);
  await s.login(tenant.id, tenant.adminEmail, PASSWORD);
  const page = await s.get('/settings/translations?language=de&namespace=console');
  t.equal(page.statusCode, 200);
  t.match(page.body, /value="Speichern"/, 'the stored text is in its input');
  t.match(page.body, /texts have no translation/);
  const keys = [...page.body.matchAll(/name="key" value="([^"]+)"/g)].map((m) => m[1]);
  const texts = [...page.body.matchAll(/name="text" value="([^"]*)"/g)].map((m) => m[1]);
  t.ok(keys.length > 20);
  texts[keys.indexOf('form.cancel')] = 'Abbrechen';
  texts[keys.indexOf('form.save')] = '';
  const saved = await s.post('/settings/translations', { language: 'de', namespace: 'console', key: keys, text: texts });
  t.equal(saved.statusCode, 303);
  const de = (await as(admin, 'GET', '/api/translations/catalog?language=de&namespaces=console')).json().texts.console;
  t.equal(de['form.cancel'], 'Abbrechen', 'a new text');
  t.equal(de['form.save'], 'Save', 'an emptied text goes back to the built-in one');

  await s.post('/console/language', { value: 'de', back: '/catalog/categories' });
  const form = await s.get('/catalog/categories/new');
  t.match(form.body, />Abbrechen</, 'the console speaks the chosen language');
  for (const [key, text] of [
    ['form.newTitle', 'Neue {entity}'],
    ['value.yes', 'Ja'],
    ['form.pairTwice', 'der Schlüssel „{key}“ steht zweimal da'],
  ])
    await as(admin, 'POST', '/api/translations', { language: 'de', namespace: 'console', key, text });
  await as(admin, 'POST', '/api/translations', { language: 'de', namespace: 'catalog', key: 'entity.Category', text: 'Kategorie' });
  await as(admin, 'POST', '/api/categories', { name: 'Eimer', isActive: true });
  t.match((await s.get('/catalog/categories/new')).body, /<h1>Neue Kategorie<\/h1>/, "a title the pages build, with the entity's label in German");
  t.match((await s.get('/catalog/categories')).body, /<td>Ja<\/td>/, 'a yes in a list');
  const twice = await s.post('/catalog/products', { sku: 'TR-KV', 'name:de': 'Eimer', price: '1', 'attributes:key': ['a', 'a'], 'attributes:value': ['1', '2'] });
  t.match(twice.body, /der Schlüssel „a“ steht zweimal da/, "a form's own error");

  const pmAdmin = await ctx.user(tenant, { codes: ['erp:pm:admin', 'erp:pm:view'] });
  const p = new ConsoleSession(ctx.app);
  await p.login(tenant.id, pmAdmin.email, PASSWORD);
  const pmPage = await p.get('/pm/settings/translations?language=fr');
  t.equal(pmPage.statusCode, 200);
  t.match(pmPage.body, /value="Projets"/);
  const refused = await p.post('/pm/settings/translations', { language: 'fr', namespace: 'crm', key: ['menu.crm.leads'], text: ['Pistes'] });
  t.ok(refused.statusCode >= 400 && refused.statusCode < 500, "a PM administrator cannot change the CRM's texts through the page either");
});
