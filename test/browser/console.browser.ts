// The web console in a real browser (npm run test:browser, not part of npm test):
// the app listens on a free port of this process, Chromium drives its pages as a
// user would, and each scenario asserts what the pages show.
import t from 'tap';
import type { Page } from 'playwright-core';
import { PASSWORD } from '../helper.ts';
import { seedModuleDemoData } from '../../core/demo-data.ts';
import { SYSTEM } from '../../core/access/principal.ts';
import { axeViolations, consoleInBrowser, logIn, screenshot, submit } from './browser.ts';

const { ctx, scenario } = await consoleInBrowser(t);

const tenant = await ctx.tenant();
const sys = await ctx.kernel.contextFor({ tenant: tenant.id, principal: SYSTEM, companyId: tenant.companyId });
const adminId = (await sys.data('User').find({ email: tenant.adminEmail }))[0].id as string;
await seedModuleDemoData(ctx.kernel, tenant.id, tenant.companyId, adminId);
const admin = { tenant: tenant.id, email: tenant.adminEmail, password: PASSWORD };

const menuLinks = (page: Page) => page.locator('nav[aria-label="Main menu"] a');

scenario('log in through the form; a wrong password stays on the login with an alert', async (t, page) => {
  t.equal((await page.goto('/login'))?.status(), 200);
  t.equal(await logIn(page, { ...admin, password: 'not the password' }), 401, 'the login answers 401');
  t.equal(new URL(page.url()).pathname, '/login', 'still on /login');
  t.match(await page.getByRole('alert').textContent(), /wrong/, 'the form says what went wrong');
  t.equal(await page.getByLabel('Tenant').inputValue(), tenant.id, 'the tenant is kept');
  t.same(await axeViolations(page), [], 'no serious axe violation on the refused login');

  t.equal(await logIn(page, admin), 200);
  t.not(new URL(page.url()).pathname, '/login', `logged in, at ${page.url()}`);
  t.ok(await menuLinks(page).count(), 'the menu shows');
});

scenario('every menu page answers 200 with a heading, no script error and no serious axe finding', async (t, page, errors) => {
  await logIn(page, admin);
  const paths = await menuLinks(page).evaluateAll((links) => links.map((a) => a.getAttribute('href')!));
  t.ok(paths.length >= 10, `${paths.length} menu entries: ${paths.join(' ')}`);
  for (const path of paths) {
    const before = errors.length;
    const res = await page.goto(path);
    t.equal(res?.status(), 200, `${path}: 200`);
    t.ok(await page.locator('h1').count(), `${path}: has an h1 (${await page.locator('h1').first().textContent()})`);
    t.same(await axeViolations(page), [], `${path}: no serious or critical axe violation`);
    await screenshot(page, path);
    t.same(errors.slice(before), [], `${path}: no console error`);
  }
});

scenario('a category: create, required field, edit, conflict between two tabs, delete', async (t, page) => {
  await logIn(page, admin);
  const name = `Garden tools ${Date.now().toString(36)}`;
  const list = '/catalog/categories';
  const row = (p: Page, text: string) => p.locator('#list tbody tr', { hasText: text });

  // required field left empty: the form comes back with the error beside the field
  await page.goto(`${list}/new`);
  t.equal(await submit(page, page.getByRole('button', { name: 'Save' })), 400, 'an empty name is refused');
  t.ok(await page.locator('#field-name-error').isVisible(), `the error is beside the field: ${await page.locator('#field-name-error').textContent()}`);
  t.equal(await page.locator('#field-name').getAttribute('aria-invalid'), 'true', 'the field is marked invalid');
  t.equal(await page.locator('#field-name').getAttribute('aria-describedby'), 'field-name-error', 'and names its error');
  t.same(await axeViolations(page), [], 'no serious axe violation on the refused form');

  // the same form, filled in: created
  await page.locator('#field-name').fill(name);
  await page.locator('#field-description').fill('Spades, rakes and hoes');
  t.equal(await submit(page, page.getByRole('button', { name: 'Save' })), 200);
  t.match(page.url(), /\/catalog\/categories\/[0-9a-f-]{36}\?notice=created$/, 'on the new row');
  t.equal(await page.getByRole('status').textContent(), 'Created.');
  t.match(await page.locator('h1').textContent(), name);
  const detail = new URL(page.url()).pathname;

  // in the list, and found by its search box (an htmx swap of the table)
  await page.goto(list);
  t.equal(await row(page, name).count(), 1, 'listed');
  await page.locator('#list-search').fill(name);
  await page.locator('#list-search').press('Enter');
  await row(page, 'Office supplies').waitFor({ state: 'detached' });
  t.equal(await page.locator('#list tbody tr').count(), 1, 'the search leaves only the new row');
  t.match(page.url(), /[?&]search=/, 'the search is in the address');

  // edit and save
  await page.goto(detail);
  await submit(page, page.getByRole('link', { name: 'Edit' }));
  await page.locator('#field-name').fill(`${name} (edited)`);
  t.equal(await submit(page, page.getByRole('button', { name: 'Save' })), 200);
  t.equal(new URL(page.url()).search, '?notice=saved');
  t.equal(await page.getByRole('status').textContent(), 'Saved.');
  t.match(await page.locator('h1').textContent(), `${name} (edited)`);

  // two tabs on the same version: the second save is refused, its input kept
  const other = await page.context().newPage();
  await page.goto(`${detail}/edit`);
  await other.goto(`${detail}/edit`);
  await page.locator('#field-description').fill('Saved first');
  t.equal(await submit(page, page.getByRole('button', { name: 'Save' })), 200, 'the first tab saves');
  await other.locator('#field-description').fill('Saved second');
  t.equal(await submit(other, other.getByRole('button', { name: 'Save' })), 412, 'the second tab is refused');
  t.ok(await other.locator('#form-conflict').isVisible(), 'the conflict alert shows');
  t.equal(await other.locator('#form-conflict').getAttribute('role'), 'alert');
  t.equal(await other.locator('#field-description').inputValue(), 'Saved second', 'the refused input is still in the form');
  t.same(await axeViolations(other), [], 'no serious axe violation on the conflict');
  await page.goto(detail);
  t.ok(await page.locator('dd', { hasText: 'Saved first' }).count(), 'the first save stands');

  // delete after the confirmation page
  await submit(page, page.getByRole('link', { name: 'Delete' }));
  t.equal(new URL(page.url()).pathname, `${detail}/delete`, 'a confirmation page first');
  t.same(await axeViolations(page), [], 'no serious axe violation on the confirmation');
  t.equal(await submit(page, page.getByRole('button', { name: 'Delete' })), 200);
  t.equal(new URL(page.url()).pathname + new URL(page.url()).search, `${list}?notice=deleted`);
  t.equal(await page.getByRole('status').textContent(), 'Deleted.');
  t.equal(await row(page, name).count(), 0, 'gone from the list');
  t.equal((await page.goto(detail))?.status(), 404, 'its page is gone');
});

scenario('a user with catalog codes only sees the catalog', async (t, page) => {
  const clerk = await ctx.user(tenant, { codes: ['erp:catalog:view'] });
  t.equal(await logIn(page, { tenant: tenant.id, email: clerk.email, password: PASSWORD }), 200);
  t.same(await menuLinks(page).allTextContents(), ['Products', 'Categories'], 'the menu holds their entries only');
  await page.goto('/catalog/categories');
  t.ok(await page.locator('#list tbody tr', { hasText: 'Office supplies' }).count(), 'their list shows rows');
  t.equal(await page.getByRole('link', { name: 'New Category' }).count(), 0, 'and no create without a manage code');

  const lead = (await ctx.as(tenant.adminToken, { method: 'GET', url: '/api/crm/leads?size=1' })).json().items[0].title as string;
  for (const path of ['/crm/leads', '/companies', '/users']) {
    const res = await page.goto(path);
    t.equal(res?.status(), 404, `${path}: as if there were no page`);
    t.equal(await page.locator('table').count(), 0, `${path}: no table`);
  }
  await page.goto('/crm/leads');
  t.notMatch(await page.locator('body').textContent(), lead, 'no lead shows');

  // no write form the user's actions do not allow (the API would refuse it anyway)
  const category = (await ctx.as(tenant.adminToken, { method: 'GET', url: '/api/categories?size=1' })).json().items[0].id as string;
  for (const path of ['/catalog/categories/new', `/catalog/categories/${category}/edit`, `/catalog/categories/${category}/delete`]) {
    await page.goto(path);
    t.equal(await page.locator('main form button').count(), 0, `${path}: no form to send`);
  }
});

scenario('log out: back at the login, and pages then send there', async (t, page) => {
  await logIn(page, admin);
  t.equal(await submit(page, page.getByRole('button', { name: 'Log out' })), 200);
  t.equal(new URL(page.url()).pathname, '/login', 'at /login');
  await page.goto('/catalog/categories');
  const url = new URL(page.url());
  t.equal(url.pathname, '/login', 'a protected page redirects to the login');
  t.equal(url.searchParams.get('next'), '/catalog/categories', 'which comes back after logging in');
  t.equal(await page.locator('nav[aria-label="Main menu"]').count(), 0, 'no menu');
});

scenario('the language and company switchers change what the list shows', async (t, page) => {
  await logIn(page, admin);
  await page.goto('/catalog/categories?sort=name');
  const names = () => page.locator('#list tbody tr td:first-child').allTextContents();
  t.same(await names(), ['Hand tools', 'Office supplies', 'Tools']);
  // console.js sends the switcher's form on change
  await Promise.all([page.waitForEvent('load'), page.locator('#switch-language').selectOption('de')]);
  t.same(await names(), ['Büromaterial', 'Handwerkzeuge', 'Werkzeuge'], 'names in German');
  t.equal(new URL(page.url()).search, '?sort=name', 'back on the same list');

  await ctx.company(tenant, 'BR', [adminId]);
  await page.reload();
  await Promise.all([page.waitForEvent('load'), page.locator('#switch-company').selectOption({ label: 'Company BR (BR)' })]);
  t.equal(await page.locator('#switch-company option:checked').textContent(), 'Company BR (BR)');
  t.same(await names(), ['Nothing to show.'], "the other company's categories: none");
});

/** GET through the console's relay, as the page's user (the context's cookies). */
const apiGet = async (page: Page, path: string) => (await page.request.get(`/console/api${path}`)).json();

scenario("a project's board: a card dragged to another column is saved there", async (t, page) => {
  await logIn(page, admin);
  const projects = await apiGet(page, '/pm/projects?size=100');
  for (const project of projects.items as { id: string }[]) {
    await page.goto(`/pm/projects/${project.id}/board`);
    if (await page.locator('.pm-card[draggable="true"]').count()) break;
  }
  const card = page.locator('.pm-card[draggable="true"]').first();
  t.ok(await card.count(), `a card that may move, on ${page.url()}`);
  const taskId = (await card.getAttribute('data-task-id'))!;
  const target = (await card.locator('select[data-move] option').first().getAttribute('value'))!;
  const column = page.locator(`section.pm-column[data-status-id="${target}"]`);
  const saved = page.waitForResponse((r) => r.url().endsWith(`/console/api/pm/tasks/${taskId}`) && r.request().method() === 'PATCH');
  await card.dragTo(column.locator('h2'));
  t.equal((await saved).status(), 200, 'the drop sends the move and the API takes it');
  await column.locator(`.pm-card[data-task-id="${taskId}"]`).waitFor();
  t.match(await page.getByRole('status').first().textContent(), /moved to/, 'the page says so');
  t.equal((await apiGet(page, `/pm/tasks/${taskId}`)).statusId, target, 'the task has its new status');
  await page.reload();
  t.equal(await column.locator(`.pm-card[data-task-id="${taskId}"]`).count(), 1, 'still in that column after a reload');
  t.same(await axeViolations(page), [], 'no serious axe violation on the board');
});

scenario("a sheet's dashboard: a widget dragged on the grid keeps its new place", async (t, page) => {
  await logIn(page, admin);
  const apps = await apiGet(page, '/bi/apps?size=100');
  let found: { url: string; sheetId: string } | null = null;
  for (const app of apps.items as { id: string }[]) {
    const sheets = await apiGet(page, `/bi/apps/${app.id}/sheets?size=100`);
    for (const sheet of sheets.items as { id: string }[]) {
      const widgets = await apiGet(page, `/bi/sheets/${sheet.id}/widgets?size=100`);
      if (widgets.items.length) found ??= { url: `/bi/apps/${app.id}/sheets/${sheet.id}`, sheetId: sheet.id };
    }
  }
  t.ok(found, 'the demo data has a sheet with widgets');
  await page.goto(found!.url);
  const item = page.locator('.grid-stack-item').first();
  const widgetId = (await item.getAttribute('gs-id'))!;
  const before = { x: Number(await item.getAttribute('gs-x')), y: Number(await item.getAttribute('gs-y')), w: Number(await item.getAttribute('gs-w')) };
  const grid = (await page.locator('.grid-stack').boundingBox())!;
  const head = (await item.locator('.bi-widget-head').boundingBox())!;
  // two columns to the right where there is room, else two rows down
  const right = before.x + before.w <= 10;
  const dx = right ? (2 * grid.width) / 12 : 0;
  const dy = right ? 0 : 2 * 78;
  const saved = page.waitForResponse((r) => r.url().endsWith(`/console/api/bi/sheets/${found!.sheetId}/layout`) && r.request().method() === 'PUT');
  const start = { x: head.x + 20, y: head.y + head.height / 2 };
  await page.mouse.move(start.x, start.y);
  await page.mouse.down();
  for (let step = 1; step <= 10; step++) await page.mouse.move(start.x + (dx * step) / 10, start.y + (dy * step) / 10);
  await page.mouse.up();
  t.equal((await saved).status(), 200, 'the drop saves the layout in one call');
  const stored = ((await apiGet(page, `/bi/sheets/${found!.sheetId}/widgets?size=100`)).items as { id: string; x: number; y: number }[]).find((w) => w.id === widgetId)!;
  if (right) t.ok(stored.x > before.x, `moved right: x ${before.x} → ${stored.x}`);
  else t.ok(stored.y > before.y, `moved down: y ${before.y} → ${stored.y}`);
  await page.reload();
  const after = page.locator(`.grid-stack-item[gs-id="${widgetId}"]`);
  t.same([Number(await after.getAttribute('gs-x')), Number(await after.getAttribute('gs-y'))], [stored.x, stored.y], 'the page shows the saved place after a reload');
  t.same(await axeViolations(page), [], 'no serious axe violation on the dashboard');
});

scenario('a product: its name in two languages and its attributes as rows of keys and values', async (t, page) => {
  await logIn(page, admin);
  await page.goto('/catalog/products/new');
  const sku = `BR-${Date.now().toString(36)}`;
  await page.getByLabel('SKU').fill(sku);
  await page.getByLabel('Name (English)').fill('Watering can');
  await page.getByLabel('Name (German)').fill('Gießkanne');
  await page.getByLabel('Price').fill('12.50');
  await page.getByLabel('Attributes: Key 1').fill('volume');
  await page.getByLabel('Attributes: Value 1').fill('10');
  await page.getByLabel('Attributes: Key 2').fill('colour');
  await page.getByLabel('Attributes: Value 2').fill('green');
  // console.js: one more row per click
  await page.getByRole('button', { name: 'Add a row' }).click();
  await page.getByLabel('Attributes: Key 3').fill('code');
  await page.getByLabel('Attributes: Value 3').fill('"0042"');
  t.same(await axeViolations(page), [], 'no serious axe violation on the form');
  t.equal(await submit(page, page.getByRole('button', { name: 'Save' })), 200);
  const id = new URL(page.url()).pathname.split('/').pop()!;
  const product = await apiGet(page, `/products/${id}?translations=true`);
  t.same(product.translations.name, { en: 'Watering can', de: 'Gießkanne' }, 'both languages saved');
  t.same(product.attributes, { volume: 10, colour: 'green', code: '0042' }, 'the rows as one object, typed');
});
