// The web console over app.inject, as a browser uses it: login and logout with
// cookies and CSRF, the menu a user's codes allow, the generic list, detail and
// form pages (validation beside fields, a stale edit, delete), and what an
// intruder gets: another tenant's rows, forged forms, open redirects.
import t from 'tap';
import { build, PASSWORD } from '../../helper.ts';
import { ConsoleSession, menuOf } from '../../support/console-session.ts';

const ctx = await build(t);
const tenant = await ctx.tenant();
const other = await ctx.tenant();
const admin = () => new ConsoleSession(ctx.app);

const loggedIn = async (email = tenant.adminEmail, id = tenant.id) => {
  const s = admin();
  const res = await s.login(id, email, PASSWORD);
  if (res.statusCode !== 303) throw new Error(`login failed: ${res.statusCode}`);
  return s;
};

t.test('without a session every page leads to the login, keeping where it was going', async (t) => {
  const s = admin();
  t.equal((await s.get('/')).headers.location, '/login');
  const res = await s.get('/catalog/categories?page=2');
  t.equal(res.statusCode, 303);
  t.equal(res.headers.location, `/login?next=${encodeURIComponent('/catalog/categories?page=2')}`);
  const login = await s.get('/login');
  t.equal(login.statusCode, 200);
  t.match(login.headers['content-type'], /text\/html/);
  t.match(login.headers['content-security-policy'], /script-src 'self'/, 'a page gets the page CSP');
  t.ok(s.csrf, 'the form carries a CSRF token');
});

t.test('login', async (t) => {
  t.test('wrong password: the form again with an alert, no session', async (t) => {
    const s = admin();
    const res = await s.login(tenant.id, tenant.adminEmail, 'wrong password');
    t.equal(res.statusCode, 401);
    t.match(res.body, /role="alert"/);
    t.notOk(s.cookies.has('plinth_access'));
  });
  t.test('empty fields: an error beside each', async (t) => {
    const s = admin();
    await s.get('/login');
    const res = await s.post('/login', { tenant: '', email: '', password: '' });
    t.equal(res.statusCode, 400);
    for (const f of ['tenant', 'email', 'password']) t.match(res.body, new RegExp(`id="login-${f}-error"`));
  });
  t.test("a malformed tenant is the API's 400, shown in the form", async (t) => {
    const res = await admin().login('Not A Tenant!', tenant.adminEmail, PASSWORD);
    t.equal(res.statusCode, 400);
    t.match(res.body, /login-tenant-error/);
  });
  t.test('without the CSRF token (a forged cross-site post) nothing happens', async (t) => {
    const s = admin();
    await s.get('/login');
    const res = await s.post('/login', { _csrf: 'forged', tenant: tenant.id, email: tenant.adminEmail, password: PASSWORD });
    t.equal(res.statusCode, 403);
    t.notOk(s.cookies.has('plinth_access'));
  });
  t.test('success: httpOnly SameSite cookies and the page asked for', async (t) => {
    const s = admin();
    const res = await s.login(tenant.id, tenant.adminEmail, PASSWORD, '/catalog/categories');
    t.equal(res.statusCode, 303);
    t.equal(res.headers.location, '/catalog/categories');
    const cookies = res.cookies as { name: string; httpOnly?: boolean; sameSite?: string }[];
    for (const name of ['plinth_access', 'plinth_refresh']) {
      const c = cookies.find((x) => x.name === name);
      t.ok(c?.httpOnly, `${name} is httpOnly`);
      t.equal(c?.sameSite, 'Lax');
    }
  });
  t.test('an address of another site after login is refused (no open redirect)', async (t) => {
    for (const next of ['//evil.example/x', 'https://evil.example/', '/\\evil.example']) {
      const res = await admin().login(tenant.id, tenant.adminEmail, PASSWORD, next);
      t.equal(res.headers.location, '/', next);
    }
  });
});

t.test('the menu holds what the codes allow, and other pages are not there', async (t) => {
  const s = await loggedIn();
  const home = await s.get('/');
  t.equal(home.headers.location, '/dashboard', 'an administrator starts at the dashboard');
  const page = await s.get('/dashboard');
  t.equal(page.statusCode, 200);
  const menu = menuOf(page.body);
  for (const path of ['/dashboard', '/companies', '/users', '/catalog/products', '/crm/leads']) t.ok(menu.includes(path), path);

  const viewer = await ctx.user(tenant, { codes: ['erp:catalog:view'] });
  const v = await loggedIn(viewer.email);
  t.equal((await v.get('/')).headers.location, '/catalog/products');
  const theirs = menuOf((await v.get('/catalog/products')).body);
  t.same(theirs, ['/catalog/products', '/catalog/categories']);
  t.equal((await v.get('/crm/leads')).statusCode, 404, 'a page of an entity they may not read');
  t.equal((await v.get('/companies')).statusCode, 404, 'an admin-protected entity page they hold no code for: no page at all either');
  const dashboard = await v.get('/dashboard');
  t.equal(dashboard.statusCode, 403, 'a page of a menu entry they may not open');
  t.notMatch(dashboard.body, /class="card"/);
});

t.test("an entry is in the menu only when its page's route lets the user in, not only their code", async (t) => {
  // the view codes of admin-protected areas (authenticate → requireRole → requireAdmin), and one more
  const clerk = await ctx.user(tenant, { codes: ['core:company:view', 'core:email:view', 'core:organization:view'] });
  const c = await loggedIn(clerk.email);
  t.equal((await c.get('/')).headers.location, '/organizations', 'the first page they may open');
  const page = await c.get('/organizations');
  t.equal(page.statusCode, 200);
  t.same(menuOf(page.body), ['/organizations'], 'no Companies, no E-mail accounts');
  for (const path of ['/companies', '/emails', '/companies/new']) {
    const res = await c.get(path);
    t.equal(res.statusCode, 403, `${path}: refused as its route refuses`);
    t.notMatch(res.body, /<table/, `${path}: no list`);
  }
  const adminMenu = menuOf((await (await loggedIn()).get('/organizations')).body);
  for (const path of ['/companies', '/emails', '/organizations']) t.ok(adminMenu.includes(path), `an administrator has ${path}`);

  // a login on its way to a page they may not open lands on their first page instead of a refusal
  for (const next of ['/companies', '/emails/new', '/dashboard', '/crm/leads?page=2']) {
    const s = admin();
    const res = await s.login(tenant.id, clerk.email, PASSWORD, next);
    t.equal(res.headers.location, '/', `${next}: home…`);
    t.equal((await s.get('/')).headers.location, '/organizations', `${next}: …which is their first page`);
  }
  t.equal((await admin().login(tenant.id, clerk.email, PASSWORD, '/organizations?page=2')).headers.location, '/organizations?page=2', 'a page they may open: kept');
  t.equal((await admin().login(tenant.id, tenant.adminEmail, PASSWORD, '/companies')).headers.location, '/companies', 'an administrator goes on to it');
});

t.test('a create form starts from the defaults: a boolean that defaults to true is checked', async (t) => {
  const s = await loggedIn();
  const form = await s.get('/companies/new');
  t.equal(form.statusCode, 200);
  t.match(form.body, /<input type="checkbox" id="field-isActive" name="isActive" value="true" checked/, 'isActive (default true) starts checked');
  t.match((await s.get('/catalog/categories/new')).body, /id="field-isActive" name="isActive" value="true" checked/);
  const created = await s.post('/companies', { code: 'NEW-1', name: 'New one', isActive: ['false', 'true'] });
  t.equal(created.statusCode, 303, 'the form as sent with the box left as it started');
  const id = created.headers.location!.replace(/\?.*/, '').split('/').pop();
  t.equal((await ctx.as(tenant.adminToken, { method: 'GET', url: `/api/companies/${id}` })).json().isActive, true, 'an active company');
});

t.test('create, read, edit and delete through the forms', async (t) => {
  const s = await loggedIn();
  await s.get('/catalog/categories/new');

  const missing = await s.post('/catalog/categories', { name: '', description: 'x', isActive: ['false', 'true'] });
  t.equal(missing.statusCode, 400, 'a required field left empty');
  t.match(missing.body, /id="field-name-error"/);
  t.match(missing.body, /id="field-name"[^>]*aria-invalid="true"/);
  t.match(missing.body, /name="description:en"[^>]*>x<\/textarea>/, 'what was typed stays in the form (a translatable field: in the first language)');

  const tooLong = await s.post('/catalog/categories', { name: 'n'.repeat(121) });
  t.equal(tooLong.statusCode, 400, 'the API checks what the form cannot');
  t.match(tooLong.body, /id="field-name-error"/);

  const created = await s.post('/catalog/categories', { name: 'Garden <tools>', description: '', isActive: ['false', 'true'] });
  t.equal(created.statusCode, 303);
  const url = created.headers.location!.replace(/\?.*/, '');
  t.match(url, /^\/catalog\/categories\/[0-9a-f-]{36}$/);
  const detail = await s.get(created.headers.location!);
  t.equal(detail.statusCode, 200);
  t.match(detail.body, /Garden &lt;tools&gt;/, 'text is escaped');
  t.match(detail.body, /role="status"/);

  const list = await s.get('/catalog/categories?search=garden');
  t.match(list.body, /Garden &lt;tools&gt;/);
  t.match(list.body, /1 in all/);

  const edit = await s.get(`${url}/edit`);
  const version = /name="_version" value="(\d+)"/.exec(edit.body)![1];
  const saved = await s.post(url, { _version: version, name: 'Garden', description: 'Spades', isActive: 'false', parentId: '' });
  t.equal(saved.statusCode, 303);
  const after = await ctx.as(tenant.adminToken, { method: 'GET', url: `/api/categories/${url.split('/').pop()}` });
  t.match(after.json(), { name: 'Garden', description: 'Spades', isActive: false });

  const stale = await s.post(url, { _version: version, name: 'Lost edit', isActive: 'true' });
  t.equal(stale.statusCode, 412, 'a stale edit is a conflict…');
  t.match(stale.body, /id="form-conflict"/);
  t.match(stale.body, /value="Lost edit"/, '…and keeps what the user typed');
  t.equal((await ctx.as(tenant.adminToken, { method: 'GET', url: `/api/categories/${url.split('/').pop()}` })).json().name, 'Garden', 'nothing was overwritten');

  const confirm = await s.get(`${url}/delete`);
  t.equal(confirm.statusCode, 200);
  const current = /name="_version" value="(\d+)"/.exec(confirm.body)![1];
  const forged = await s.post(`${url}/delete`, { _csrf: 'forged', _version: current });
  t.equal(forged.statusCode, 403, 'a delete without the CSRF token does nothing');
  const deleted = await s.post(`${url}/delete`, { _version: current });
  t.equal(deleted.statusCode, 303);
  t.equal(deleted.headers.location, '/catalog/categories?notice=deleted');
  t.equal((await s.get(url)).statusCode, 404);
});

t.test('a translatable field: an input per language, each saved, an emptied one removed', async (t) => {
  const s = await loggedIn();
  const form = await s.get('/catalog/categories/new');
  for (const [id, name, label] of [
    ['field-name', 'name:en', 'Name \\(English\\)'],
    ['field-name-de', 'name:de', 'Name \\(German\\)'],
  ])
    t.match(form.body, new RegExp(`<label for="${id}">${label}</label>\\s*<input id="${id}" name="${name}" lang="${name.slice(5)}"`), `${name}: labelled`);
  t.match(form.body, /<textarea id="field-description-fr" name="description:fr" lang="fr"/, 'a text field: a textarea per language');

  const empty = await s.post('/catalog/categories', { 'name:en': ' ', 'name:de': '', isActive: 'true' });
  t.equal(empty.statusCode, 400, 'no language given for a required field');
  t.match(empty.body, /id="field-name-error"[^>]*>Fill in Name in at least one language/);

  const created = await s.post('/catalog/categories', { 'name:en': 'Hoses', 'name:de': 'Schläuche', 'name:fr': '', 'description:en': 'Long', isActive: 'true' });
  t.equal(created.statusCode, 303);
  const id = created.headers.location!.replace(/\?.*/, '').split('/').pop()!;
  const api = () => ctx.as(tenant.adminToken, { method: 'GET', url: `/api/categories/${id}?translations=true` });
  t.same((await api()).json().translations, { name: { en: 'Hoses', de: 'Schläuche' }, description: { en: 'Long' } }, 'each language stored, the empty one not');

  const edit = await s.get(`/catalog/categories/${id}/edit`);
  t.match(edit.body, /name="name:de" lang="de" value="Schläuche"/, 'the edit form holds every language');
  const version = /name="_version" value="(\d+)"/.exec(edit.body)![1];
  const saved = await s.post(`/catalog/categories/${id}`, {
    _version: version,
    'name:en': 'Garden hoses',
    'name:de': '',
    'name:fr': 'Tuyaux',
    'name:es': '',
    'description:en': 'Long',
    isActive: 'true',
    parentId: '',
  });
  t.equal(saved.statusCode, 303);
  t.same((await api()).json().translations.name, { en: 'Garden hoses', fr: 'Tuyaux' }, 'German emptied, so removed; French added');

  const v2 = /name="_version" value="(\d+)"/.exec((await s.get(`/catalog/categories/${id}/edit`)).body)![1];
  const none = await s.post(`/catalog/categories/${id}`, { _version: v2, 'name:en': '', 'name:fr': '', isActive: 'true' });
  t.equal(none.statusCode, 400, 'emptying every language of a required field is refused');
  t.match(none.body, /name="name:en" lang="en" value=""[^>]*aria-invalid="true"/, 'the error marks the inputs');
  t.same((await api()).json().translations.name, { en: 'Garden hoses', fr: 'Tuyaux' }, 'and nothing was lost');
});

t.test('a key-value JSON field: rows of keys and values', async (t) => {
  const s = await loggedIn();
  const form = await s.get('/catalog/products/new');
  t.match(form.body, /<fieldset class="key-value"[^>]*>\s*<legend>Attributes/, 'a fieldset with its legend');
  t.equal([...form.body.matchAll(/name="attributes:key"/g)].length, 2, 'two blank rows on a new form');

  const bad = await s.post('/catalog/products', { sku: 'KV-1', 'name:en': 'Hose', price: '5', currency: 'EUR', 'attributes:key': ['colour', 'colour'], 'attributes:value': ['green', 'red'] });
  t.equal(bad.statusCode, 400);
  t.match(bad.body, /id="field-attributes-error"[^>]*>the key &quot;colour&quot; is given twice/);
  t.match(bad.body, /name="attributes:value" value="red"/, 'the rows stay as typed');
  const noKey = await s.post('/catalog/products', { sku: 'KV-1', 'name:en': 'Hose', price: '5', currency: 'EUR', 'attributes:key': [''], 'attributes:value': ['lost'] });
  t.match(noKey.body, /has no key/);

  const created = await s.post('/catalog/products', {
    sku: 'KV-1',
    'name:en': 'Hose',
    price: '5',
    currency: 'EUR',
    'attributes:key': ['colour', 'length', 'outdoor', 'code', '', ''],
    'attributes:value': ['green', '25', 'true', '"007"', '', ''],
  });
  t.equal(created.statusCode, 303);
  const id = created.headers.location!.replace(/\?.*/, '').split('/').pop()!;
  const stored = () => ctx.as(tenant.adminToken, { method: 'GET', url: `/api/products/${id}` }).then((r) => r.json().attributes);
  t.same(await stored(), { colour: 'green', length: 25, outdoor: true, code: '007' }, 'numbers and true as such, quoted text as text');

  const edit = await s.get(`/catalog/products/${id}/edit`);
  t.match(edit.body, /name="attributes:value" value="&quot;007&quot;"/, 'text that looks like a number is quoted, so it stays text');
  t.equal([...edit.body.matchAll(/name="attributes:key"/g)].length, 6, 'four stored rows and two blank');
  const version = /name="_version" value="(\d+)"/.exec(edit.body)![1];
  const keep = Object.fromEntries([...edit.body.matchAll(/<input id="field-[^"]*" name="((?:sku|price|currency)|name:en)"[^>]*value="([^"]*)"/g)].map((m) => [m[1], m[2]]));
  const saved = await s.post(`/catalog/products/${id}`, { ...keep, _version: version, 'attributes:key': ['colour', 'length', 'outdoor', ''], 'attributes:value': ['blue', '25', 'true', ''] });
  t.equal(saved.statusCode, 303);
  t.same(await stored(), { colour: 'blue', length: 25, outdoor: true }, 'a row left out is gone');

  // a value that is no flat object is edited as JSON
  await ctx.as(tenant.adminToken, { method: 'PATCH', url: `/api/products/${id}`, payload: { attributes: { sizes: [1, 2] } } });
  t.match((await s.get(`/catalog/products/${id}/edit`)).body, /<textarea id="field-attributes" name="attributes"/);
});

t.test('a reference marked filter is a select of the rows the user may read, and narrows the list', async (t) => {
  const s = await loggedIn();
  const post = (url: string, payload: object) => ctx.as(tenant.adminToken, { method: 'POST', url, payload });
  const pots = (await post('/api/categories', { name: 'Pots' })).json();
  const pans = (await post('/api/categories', { name: 'Pans' })).json();
  await post('/api/products', { sku: 'FLT-1', name: 'Clay pot', price: '3.00', categoryId: pots.id });
  await post('/api/products', { sku: 'FLT-2', name: 'Frying pan', price: '9.00', categoryId: pans.id });
  const list = await s.get('/catalog/products');
  t.match(list.body, /<select id="filter-categoryId" name="categoryId">/);
  t.match(list.body, new RegExp(`<option value="${pots.id}">Pots</option>`), 'its options are rows by their label');
  const narrowed = await s.get(`/catalog/products?categoryId=${pots.id}`);
  t.match(narrowed.body, /Clay pot/);
  t.notMatch(narrowed.body, /Frying pan/, 'only the chosen category');
  t.match(narrowed.body, new RegExp(`<option value="${pots.id}" selected>Pots</option>`), 'the choice stays selected');
  const bad = await s.get('/catalog/products?categoryId=not-a-uuid');
  t.equal(bad.statusCode, 200, 'a malformed choice is the API’s refusal on the page');
  t.match(bad.body, /role="alert"/);
});
t.test("a referenced row that may not be deleted: the API's 409 on a page", async (t) => {
  const s = await loggedIn();
  const parent = (await ctx.as(tenant.adminToken, { method: 'POST', url: '/api/categories', payload: { name: 'Parent' } })).json();
  const child = (await ctx.as(tenant.adminToken, { method: 'POST', url: '/api/categories', payload: { name: 'Child', parentId: parent.id } })).json();
  await s.get(`/catalog/categories/${parent.id}/delete`);
  const res = await s.post(`/catalog/categories/${parent.id}/delete`, { _version: String(parent.version) });
  t.equal(res.statusCode, 409);
  t.match(res.body, /role="alert"/);
  const detail = await s.get(`/catalog/categories/${child.id}`);
  t.match(detail.body, new RegExp(`href="/catalog/categories/${parent.id}">Parent</a>`), 'a reference reads as its label, linked');
});

t.test('bad input to the pages', async (t) => {
  const s = await loggedIn();
  t.equal((await s.get('/catalog/categories/not-a-uuid')).statusCode, 400);
  t.equal((await s.get('/catalog/categories/00000000-0000-4000-8000-000000000000')).statusCode, 404);
  const odd = await s.get('/catalog/categories?page=-5&size=7&sort=password&isActive=maybe&search=' + 'x'.repeat(5000));
  t.ok(odd.statusCode < 500, 'nonsense in the query is no server error');
  t.equal((await s.post('/catalog/categories', { name: 'A\u0000B' })).statusCode, 400, 'a NUL byte');
  const json = await ctx.app.inject({ method: 'POST', url: '/catalog/categories', payload: { name: 'x' }, headers: { cookie: s.cookieHeader } });
  t.equal(json.statusCode, 403, 'a JSON post without the token is refused like a form');
});

t.test("another tenant's rows are not reachable through the console", async (t) => {
  const theirs = (await ctx.as(other.adminToken, { method: 'POST', url: '/api/categories', payload: { name: 'Secret' } })).json();
  const s = await loggedIn();
  t.equal((await s.get(`/catalog/categories/${theirs.id}`)).statusCode, 404);
  t.equal((await s.get(`/catalog/categories/${theirs.id}/edit`)).statusCode, 404);
  await s.get('/catalog/categories/new');
  const res = await s.post(`/catalog/categories/${theirs.id}/delete`, { _version: String(theirs.version) });
  t.equal(res.statusCode, 404);
  t.notMatch((await s.get('/catalog/categories?size=100')).body, /Secret/);
});

t.test('an expired access token is renewed from the refresh cookie; logout ends the session', async (t) => {
  const s = await loggedIn();
  const refresh = s.cookies.get('plinth_refresh');
  s.cookies.set('plinth_access', 'expired.or.forged');
  const page = await s.get('/catalog/categories');
  t.equal(page.statusCode, 200);
  t.not(s.cookies.get('plinth_refresh'), refresh, 'the refresh token rotated');
  const out = await s.post('/logout', {});
  t.equal(out.headers.location, '/login');
  t.notOk(s.cookies.has('plinth_access'));
  // the cookies a thief copied before the logout no longer open anything
  const thief = admin();
  thief.cookies.set('plinth_refresh', s.cookies.get('plinth_refresh') ?? refresh!);
  t.equal((await thief.get('/catalog/categories')).statusCode, 303);
});

t.test('the company and language switchers', async (t) => {
  const s = await loggedIn();
  await s.get('/catalog/categories');
  const foreign = await s.post('/console/company', { value: '00000000-0000-4000-8000-000000000000', back: '//evil.example' });
  t.equal(foreign.headers.location, '/', 'back to this site only');
  const page = await s.get('/catalog/categories');
  t.equal(page.statusCode, 200, 'a company the user is not in falls back to their own');
  t.notOk(s.cookies.has('plinth_company'));
  const lang = await s.post('/console/language', { value: 'de', back: '/catalog/categories' });
  t.equal(lang.headers.location, '/catalog/categories');
  t.equal(s.cookies.get('plinth_language'), 'de');
  await s.post('/console/language', { value: 'xx-not-offered' });
  t.notOk(s.cookies.has('plinth_language'), 'a language not offered is not kept');
});

t.test("a reference's options: the rows the user may read, narrowed by a search", async (t) => {
  const tools = (await ctx.as(tenant.adminToken, { method: 'POST', url: '/api/categories', payload: { name: 'Power tools' } })).json();
  await ctx.as(other.adminToken, { method: 'POST', url: '/api/categories', payload: { name: 'Power tools elsewhere' } });
  const s = await loggedIn();
  const form = await s.get('/catalog/products/new');
  t.match(form.body, new RegExp(`<option value="${tools.id}"[^>]*>Power tools</option>`), 'the create form lists them');
  const found = await s.get('/catalog/products/options/categoryId?_search=power');
  t.equal(found.statusCode, 200);
  t.match(found.body, /Power tools/);
  t.notMatch(found.body, /elsewhere/, "never another tenant's");
  t.equal((await s.get('/catalog/products/options/name')).statusCode, 404, 'only reference fields have options');
});

t.test("the relay for a page's scripts: the API as the user, changes only with the page's CSRF token", async (t) => {
  const s = await loggedIn();
  await s.get('/catalog/categories');
  const relay = (method: 'GET' | 'POST', url: string, payload?: unknown, token = s.csrf) =>
    ctx.app.inject({
      method,
      url,
      headers: { cookie: s.cookieHeader, 'x-csrf-token': token, ...(payload ? { 'content-type': 'application/json' } : {}) },
      ...(payload ? { payload: JSON.stringify(payload) } : {}),
    });
  const list = await relay('GET', '/console/api/categories?size=1');
  t.equal(list.statusCode, 200);
  t.type(list.json().total, 'number');
  const made = await relay('POST', '/console/api/categories', { name: 'Relayed' });
  t.equal(made.statusCode, 201);
  t.ok(made.headers.etag);
  t.equal((await relay('POST', '/console/api/categories', { name: 'Forged' }, 'forged')).statusCode, 403, 'no token, no change');
  t.equal((await relay('POST', '/console/api/categories', { name: 'x', bogus: 1 })).statusCode, 400, "the API's own validation");
  t.equal((await relay('POST', '/console/api/auth/refresh', { refreshToken: 'x'.repeat(20) })).statusCode, 404, 'the session is not relayed');
  const anonymous = await ctx.app.inject({ method: 'GET', url: '/console/api/categories' });
  t.equal(anonymous.statusCode, 401, 'without a session: 401, not a redirect');
});

t.test('assets, and a page that does not exist', async (t) => {
  for (const url of ['/console/assets/console.css', '/console/vendor/htmx/htmx.min.js', '/console/vendor/echarts/echarts.min.js', '/console/vendor/gridstack/gridstack-all.js']) {
    t.equal((await ctx.app.inject({ method: 'GET', url })).statusCode, 200, url);
  }
  t.equal((await ctx.app.inject({ method: 'GET', url: '/console/vendor/htmx/package.json' })).statusCode, 404, 'only the files named');
  t.equal((await ctx.app.inject({ method: 'GET', url: '/console/vendor/htmx/../../package.json' })).statusCode, 404);
  const page = await ctx.app.inject({ method: 'GET', url: '/no/such/page', headers: { accept: 'text/html' } });
  t.equal(page.statusCode, 404);
  t.match(page.headers['content-type'], /text\/html/);
  const api = await ctx.app.inject({ method: 'GET', url: '/api/no-such-route', headers: { accept: 'text/html' } });
  t.match(api.headers['content-type'], /problem\+json/, 'the API stays JSON');
});
