// The BI console pages in a real browser (npm run test:browser, not part of npm
// test): a query run on /bi/analytics is added to a dashboard as a widget, found
// there, renamed and removed, each step checked through the API (the console's
// relay, as the page's user); a viewer gets none of these controls.
import t, { type Test } from 'tap';
import type { Page } from 'playwright-core';
import { PASSWORD } from '../helper.ts';
import { axeViolations, consoleInBrowser, logIn, submit } from './browser.ts';

const { ctx, scenario } = await consoleInBrowser(t);

const tenant = await ctx.tenant();
const admin = { tenant: tenant.id, email: tenant.adminEmail, password: PASSWORD };
const api = async (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: unknown) => {
  const res = await ctx.as(tenant.adminToken, { method, url, ...(payload === undefined ? {} : { payload: payload as object }) });
  if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`);
  return res.json();
};

// an application with one page that holds a widget already: a new one goes below it
const app = await api('POST', '/api/bi/apps', { name: 'Browser board' });
const sheet = await api('POST', `/api/bi/apps/${app.id}/sheets`, { name: 'Overview' });
const existing = await api('POST', `/api/bi/sheets/${sheet.id}/widgets`, { kind: 'number', title: 'Pages', w: 3, h: 2, query: { table: 'BiSheet', measures: [{ agg: 'count' }] } });
const dashboard = `/bi/apps/${app.id}/sheets/${sheet.id}`;

/** GET through the console's relay, as the page's user (the context's cookies). */
const apiGet = async (page: Page, path: string) => (await page.request.get(`/console/api${path}`)).json();
const widgetsOf = async (page: Page) => (await apiGet(page, `/bi/sheets/${sheet.id}/widgets?size=100`)).items as { id: string; title: string; version: number }[];
const widgetCall = (page: Page, method: string, status?: number) =>
  page.waitForResponse((r) => r.request().method() === method && /\/console\/api\/bi\/sheets\/[^/]+\/widgets(\/|$)/.test(new URL(r.url()).pathname) && (status === undefined || r.status() === status));

/** Runs Sheets counted by name, drawn as bars, on /bi/analytics; the result shows. */
async function runQuery(t: Test, page: Page) {
  await page.goto('/bi/analytics');
  await Promise.all([page.waitForEvent('load'), page.getByLabel('Table', { exact: true }).selectOption('BiSheet')]);
  await page.getByLabel('Group by 1', { exact: true }).selectOption('name');
  await page.getByLabel('Chart', { exact: true }).selectOption('bar');
  const ran = page.waitForResponse((r) => r.url().endsWith('/console/api/bi/analytics') && r.request().method() === 'POST');
  await page.getByRole('button', { name: 'Run' }).click();
  t.equal((await ran).status(), 200, 'the query ran');
  await page.locator('#bi-result').waitFor();
}

scenario(
  'a query added to a dashboard from analytics, then found there, renamed and removed',
  async (t, page) => {
    await logIn(page, admin);
    await runQuery(t, page);
    const form = page.locator('#bi-add-form');
    await form.waitFor();
    t.equal(await page.getByLabel('Title', { exact: true }).inputValue(), 'Sheet: Count of rows by Name', "the title starts as the query's summary");
    t.equal(await page.getByLabel('Show as').inputValue(), 'chart', 'a chart, as the builder draws one');
    t.equal(await page.getByLabel('Chart type').inputValue(), 'bar');
    t.same(await axeViolations(page), [], 'no serious axe violation on the result with its form');

    // a title longer than the API takes: its error beside the input, the problem in the alert
    await page.getByLabel('Page', { exact: true }).selectOption({ label: 'Overview' });
    await page.getByLabel('Title', { exact: true }).evaluate((input) => input.removeAttribute('maxlength'));
    await page.getByLabel('Title', { exact: true }).fill('x'.repeat(201));
    const refused = widgetCall(page, 'POST');
    await page.getByRole('button', { name: 'Add to the dashboard' }).click();
    t.equal((await refused).status(), 400, 'the API refuses the title');
    await page.locator('#bi-add-title-error').filter({ hasText: /\S/ }).waitFor();
    t.equal(await page.getByLabel('Title', { exact: true }).getAttribute('aria-invalid'), 'true', 'the title is marked invalid');
    t.match(await page.locator('#bi-add-error').getAttribute('role'), 'alert');
    t.match(await page.locator('#bi-add-error').textContent(), /The widget was not added: /, "the problem's text in the alert");
    t.ok(await page.getByLabel('Title', { exact: true }).evaluate((input) => input === document.activeElement), 'the focus on the field to fix');
    t.same(await axeViolations(page), [], 'no serious axe violation on the refusal');

    // the title and a pie: added, and linked
    const title = `Pages by name ${Date.now().toString(36)}`;
    await page.getByLabel('Title', { exact: true }).fill(title);
    await page.getByLabel('Chart type').selectOption({ label: 'Pie' });
    const added = widgetCall(page, 'POST');
    await page.getByRole('button', { name: 'Add to the dashboard' }).click();
    t.equal((await added).status(), 201, 'the API adds the widget');
    const status = page.locator('#bi-add-status');
    await status.getByRole('link').waitFor();
    t.equal(await status.getAttribute('role'), 'status');
    t.equal(await status.textContent(), `${title} was added to Overview of Browser board. Open Overview`);
    t.equal(await page.locator('#bi-add-error').textContent(), '', 'the alert is gone');
    t.equal(await page.getByLabel('Title', { exact: true }).getAttribute('aria-invalid'), null, 'and the invalid mark');
    const widget = (await widgetsOf(page)).find((w) => w.title === title) as unknown as { id: string; kind: string; chartType: string; query: unknown; x: number; y: number; version: number };
    t.ok(widget, 'the API lists the new widget');
    t.same([widget.kind, widget.chartType, widget.query], ['chart', 'pie', { table: 'BiSheet', measures: [{ agg: 'count' }], dimensions: ['name'] }], 'a pie chart of the query that ran');
    t.same([widget.x, widget.y], [0, existing.y + existing.h], 'placed below the widget already there');

    // the link leads to the dashboard, where the widget is
    t.equal(await submit(page, status.getByRole('link', { name: 'Open Overview' })), 200);
    t.equal(new URL(page.url()).pathname, dashboard, "on the sheet's dashboard");
    const section = page.locator(`[data-widget="${widget.id}"]`);
    t.equal(await section.locator('h2').textContent(), title, 'the widget shows with its title');
    await section.locator('.bi-chart canvas, .bi-chart svg').first().waitFor();
    t.same(await axeViolations(page), [], 'no serious axe violation on the dashboard');

    // a layout save gives every widget a new version, which the rename then sends as If-Match
    const moved = page.waitForResponse((r) => r.url().endsWith(`/console/api/bi/sheets/${sheet.id}/layout`) && r.request().method() === 'PUT');
    await section.getByRole('button', { name: `Move ${title} right` }).click();
    t.equal((await moved).status(), 200, 'moved right: the layout is saved');

    // rename by keyboard: Rename opens the form with the focus in it, Enter saves
    const renamed = `${title} (renamed)`;
    await section.getByRole('button', { name: `Rename ${title}` }).focus();
    await page.keyboard.press('Enter');
    const input = section.getByLabel(`New title of ${title}`);
    t.ok(await input.evaluate((el) => el === document.activeElement), 'the focus in the title');
    t.same(await axeViolations(page), [], 'no serious axe violation with the rename form open');
    await input.fill(renamed);
    const patched = widgetCall(page, 'PATCH');
    await page.keyboard.press('Enter');
    t.equal((await patched).status(), 200, 'the rename is saved');
    await section.locator('h2', { hasText: renamed }).waitFor();
    t.equal(await page.locator('#layout-status').textContent(), `Renamed to ${renamed}.`);
    t.ok(await section.getByRole('button', { name: `Remove ${renamed}` }).count(), "the widget's buttons carry its new name");
    t.ok(await section.getByRole('button', { name: `Rename ${renamed}` }).evaluate((el) => el === document.activeElement), 'the focus back on Rename');
    const stored = (await widgetsOf(page)).find((w) => w.id === widget.id)!;
    t.equal(stored.title, renamed, 'the API has the new title');

    // changed behind the page's back: removing it is refused with 412, and a reload helps
    await api('PATCH', `/api/bi/sheets/${sheet.id}/widgets/${widget.id}`, { h: 5 });
    await section.getByRole('button', { name: `Remove ${renamed}` }).click();
    const dialog = page.getByRole('dialog', { name: 'Remove this widget?' });
    await dialog.waitFor();
    t.match(await dialog.textContent(), `The widget ${renamed} will be removed from this page.`);
    t.same(await axeViolations(page), [], 'no serious axe violation with the confirmation open');
    const stale = widgetCall(page, 'DELETE');
    await dialog.getByRole('button', { name: 'Remove' }).click();
    t.equal((await stale).status(), 412, 'a stale version: refused');
    const alert = page.locator('#layout-error');
    await alert.getByRole('button', { name: 'Reload the page' }).waitFor();
    t.match(await alert.textContent(), `Someone changed ${renamed} since this page loaded.`, 'the alert says the widget changed');
    t.equal(await alert.getAttribute('role'), 'alert');
    t.equal(await section.count(), 1, 'the widget is still there');
    t.same(await axeViolations(page), [], 'no serious axe violation on the conflict');
    t.equal(await submit(page, alert.getByRole('button', { name: 'Reload the page' })), 200, 'reloaded');

    // cancel first: nothing happens; then removed
    await section.getByRole('button', { name: `Remove ${renamed}` }).click();
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    t.ok(await section.getByRole('button', { name: `Remove ${renamed}` }).evaluate((el) => el === document.activeElement), 'Cancel: the focus back on Remove');
    await section.getByRole('button', { name: `Remove ${renamed}` }).click();
    const removed = widgetCall(page, 'DELETE');
    await dialog.getByRole('button', { name: 'Remove' }).click();
    t.equal((await removed).status(), 204, 'removed at its current version');
    await section.waitFor({ state: 'detached' });
    t.equal(await page.locator('#layout-status').textContent(), `${renamed} removed.`);
    t.ok(await page.locator(`[data-widget="${existing.id}"]`).evaluate((el) => el === document.activeElement), 'the focus on the widget left');
    t.same(
      (await widgetsOf(page)).map((w) => w.id),
      [existing.id],
      'the API lists only the widget that was there before',
    );
    t.equal((await page.request.get(`/console/api/bi/sheets/${sheet.id}/widgets/${widget.id}`)).status(), 404);
    t.same(await axeViolations(page), [], 'no serious axe violation after the removal');
    await page.reload();
    t.equal(await section.count(), 0, 'gone after a reload');
  },
  // the refused title (400) and the stale removal (412) this scenario asks for
  (e) => /status of (400|412) .*\/console\/api\/bi\/sheets\/[^/]+\/widgets/.test(e),
);

scenario('a viewer of the application can neither add to nor change its dashboard', async (t, page) => {
  const viewer = await ctx.user(tenant, { codes: ['erp:bi:view'] });
  await api('POST', `/api/bi/apps/${app.id}/members`, { userId: viewer.id, role: 'viewer' });
  t.equal(await logIn(page, { tenant: tenant.id, email: viewer.email, password: PASSWORD }), 200);
  await runQuery(t, page);
  t.equal(await page.locator('#bi-add-form').count(), 0, 'no form to add the result');
  t.match(await page.locator('#bi-add-none').textContent(), /^You cannot add this result to a dashboard/, 'a sentence says why');
  t.same(await axeViolations(page), [], 'no serious axe violation on the analytics page');
  await page.goto(dashboard);
  await page.locator(`[data-widget="${existing.id}"]`).waitFor();
  t.equal(await page.getByRole('button', { name: /^(Rename|Remove) / }).count(), 0, 'no Rename or Remove');
  t.same(await axeViolations(page), [], 'no serious axe violation on the dashboard');
});
