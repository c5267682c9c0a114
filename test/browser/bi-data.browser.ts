// An application's data page and Analytics on its data sources in a real
// browser (npm run test:browser, not part of npm test): an application created
// in the console, a data source over the local PostgreSQL added on its data
// page (a wrong user first: the API's reason beside the password), its tables
// listed, one opened in Analytics and counted, the query saved in the
// application, listed on the data page, opened again and deleted; then the
// source changed, refreshed and deleted. Each step checked through the API (the
// console's relay, as the page's user). Skipped without a PostgreSQL server.
import t, { type Test } from 'tap';
import type { Page } from 'playwright-core';
import { PASSWORD, testConfig } from '../helper.ts';
import { externalDbConfig } from '../../core/config.ts';
import { externalDatabase, SERVER, skipWithout, type ExternalFixture } from '../plugins/bi/external-fixture.ts';
import { axeViolations, consoleInBrowser, logIn, submit } from './browser.ts';

const fixture = await externalDatabase(t);
if (fixture) await run(fixture);
else t.plan(0, String(skipWithout(fixture)));

/** GET through the console's relay, as the page's user (the context's cookies). */
const apiGet = async (page: Page, path: string) => (await page.request.get(`/console/api${path}`)).json();
const relayCall = (page: Page, method: string, path: RegExp, status?: number) =>
  page.waitForResponse((r) => r.request().method() === method && path.test(new URL(r.url()).pathname) && (status === undefined || r.status() === status));
const focused = (page: Page, selector: string) => page.locator(selector).evaluate((el) => el === document.activeElement);

/** Sends the data page's form (or clicks a button that makes the page load again) and waits for the page with its notice. */
async function reloaded(page: Page, notice: string, click: () => Promise<void>) {
  const loaded = page.waitForURL((url) => url.searchParams.get('notice') === notice, { waitUntil: 'load' });
  await click();
  await loaded;
}

async function run(fixture: ExternalFixture) {
  // the external database is on this machine: the kernel may connect to private addresses here
  const { ctx, scenario } = await consoleInBrowser(t, { config: { externalDb: { ...testConfig().externalDb, ...externalDbConfig({ EXTERNAL_DB_ALLOW_PRIVATE: 'true' }) } } });
  const tenant = await ctx.tenant();
  const admin = { tenant: tenant.id, email: tenant.adminEmail, password: PASSWORD };

  scenario(
    'a data source added on the data page, a table of it counted in Analytics, the query saved, listed and deleted',
    async (t: Test, page: Page) => {
      await logIn(page, admin);
      // an application, created in the console; its detail page links its data
      await page.goto('/bi/apps/new');
      await page.getByRole('textbox', { name: 'Name', exact: true }).fill('Warehouse board');
      t.equal(await submit(page, page.getByRole('button', { name: 'Save' })), 200, 'the application is created');
      const appId = new URL(page.url()).pathname.split('/').pop()!;
      t.equal(await submit(page, page.getByRole('link', { name: 'Data', exact: true })), 200, 'its data page');
      const dataUrl = `/bi/apps/${appId}/data`;
      t.equal(new URL(page.url()).pathname, dataUrl);
      await page.getByRole('heading', { name: 'Add a data source' }).waitFor();
      t.equal(
        await page
          .locator('#sources tbody')
          .textContent()
          .then((s) => s?.trim()),
        'This application has no data source yet.',
      );
      t.same(await axeViolations(page), [], 'no serious axe violation on the empty data page');

      // a user the server does not know: the reason beside the password, the problem in the alert
      const sources = /\/console\/api\/bi\/apps\/[^/]+\/data-sources$/;
      await page.getByLabel('Name', { exact: true }).fill('warehouse');
      await page.getByLabel('Database URL').fill(`postgres://no_such_role_x@${SERVER}/${fixture.database}`);
      await page.getByLabel('Password').fill('wrong-secret');
      await page.getByLabel('Schema', { exact: true }).fill('sales');
      await page.getByLabel('TLS').selectOption('disable');
      const refused = relayCall(page, 'POST', sources);
      await page.getByRole('button', { name: 'Add and test' }).click();
      t.equal((await refused).status(), 422, 'the test fails');
      const passwordError = page.locator('#source-password-error');
      await passwordError.filter({ hasText: /\S/ }).waitFor();
      t.match(await passwordError.textContent(), /^authentication failed/, 'the reason beside the password, the field to fix');
      t.equal(await page.getByLabel('Password').getAttribute('aria-invalid'), 'true');
      t.ok(await focused(page, '#source-password'), 'the focus on the password');
      t.match(await page.locator('#data-error').textContent(), /^The data source was not added: the data source failed its test: authentication failed/);
      t.same(await axeViolations(page), [], 'no serious axe violation on the refusal');

      // the right user: added and tested, the page again with a notice
      await page.getByLabel('Database URL').fill(fixture.url);
      await page.getByLabel('Password').fill('');
      await reloaded(page, 'added', () => page.getByRole('button', { name: 'Add and test' }).click());
      t.match(await page.locator('p.notice').textContent(), /^Data source warehouse added: /);
      const [source] = (await apiGet(page, `/bi/apps/${appId}/data-sources`)).items;
      t.match(source, { name: 'warehouse', schemaName: 'sales', sslMode: 'disable', status: 'ok' }, 'the API lists it');
      const row = page.locator(`tr[data-source="${source.id}"]`);
      t.same(await row.locator('td').evaluateAll((cells) => cells.slice(0, 2).map((c) => c.textContent?.trim())), ['sales', 'OK'], 'schema and status');
      t.notMatch(await page.content(), 'wrong-secret', 'no password on the page');

      // its tables, collapsed; one opens Analytics
      const summary = row.locator('summary');
      t.equal(await summary.textContent(), '4 tables');
      t.notOk(await row.getByRole('link', { name: 'Orders', exact: true }).isVisible(), 'collapsed');
      await summary.click();
      t.same(await axeViolations(page), [], 'no serious axe violation with the tables shown');
      t.equal(await submit(page, row.getByRole('link', { name: 'Orders', exact: true })), 200);
      t.equal(new URL(page.url()).search, `?app=${appId}&table=warehouse.orders`, 'Analytics on the table, in the application');
      t.equal(await page.getByLabel('Application', { exact: true }).inputValue(), appId, 'the application chosen');
      t.equal(await page.getByLabel('Table', { exact: true }).inputValue(), 'warehouse.orders');
      t.equal(await page.getByLabel('Measure 1', { exact: true }).inputValue(), 'count', 'a count to start with');

      // run: the count of the external table, asked with the application
      const ran = page.waitForResponse((r) => r.url().endsWith('/console/api/bi/analytics') && r.request().method() === 'POST');
      await page.getByRole('button', { name: 'Run' }).click();
      const answer = await ran;
      t.equal(answer.status(), 200, 'the query ran');
      t.same(answer.request().postDataJSON(), { table: 'warehouse.orders', app: appId, measures: [{ agg: 'count' }] }, 'with its application');
      await page.locator('#bi-result').waitFor();
      t.equal(await page.locator('#bi-result-table tbody td').first().textContent(), '6', 'six orders');
      t.same(await axeViolations(page), [], 'no serious axe violation on the result');

      // save it: without app, in the application; the data page linked
      const save = page.locator('#bi-save-form');
      await save.waitFor();
      const empty = page.locator('#bi-save-name-error');
      await save.getByRole('button', { name: 'Save the query' }).click();
      await empty.filter({ hasText: /\S/ }).waitFor();
      t.equal(await empty.textContent(), 'Give the query a name.', 'a name is needed');
      t.ok(await focused(page, '#bi-save-name'), 'the focus on it');
      await page.getByLabel('Name', { exact: true }).fill('Order count');
      await page.getByLabel('Description (optional)').fill('All orders of the shop');
      const saving = relayCall(page, 'POST', /\/console\/api\/bi\/apps\/[^/]+\/queries$/);
      await save.getByRole('button', { name: 'Save the query' }).click();
      t.equal((await saving).status(), 201, 'saved');
      const status = page.locator('#bi-save-status');
      await status.getByRole('link').waitFor();
      t.equal(await status.getAttribute('role'), 'status');
      t.equal(await status.textContent(), 'Order count was saved in Warehouse board. See the data of Warehouse board');
      const [saved] = (await apiGet(page, `/bi/apps/${appId}/queries`)).items;
      t.match(saved, { name: 'Order count', description: 'All orders of the shop' });
      t.same(saved.query, { table: 'warehouse.orders', measures: [{ agg: 'count' }] }, 'the query, without app');
      t.same(await axeViolations(page), [], 'no serious axe violation after saving');

      // listed on the data page, opened in Analytics again
      t.equal(await submit(page, status.getByRole('link', { name: 'See the data of Warehouse board' })), 200);
      t.equal(new URL(page.url()).pathname, dataUrl);
      const queryRow = page.locator(`tr[data-query="${saved.id}"]`);
      t.equal(await queryRow.locator('th').textContent(), 'Order count');
      t.equal(await queryRow.locator('td').first().textContent(), 'All orders of the shop');
      t.equal(
        await queryRow.getByRole('link', { name: 'Query its result: Order count' }).getAttribute('href'),
        `/bi/analytics?app=${appId}&table=query%3A${saved.id}`,
        'its result is a table of the application',
      );
      t.equal(await submit(page, queryRow.getByRole('link', { name: 'Open in Analytics: Order count' })), 200);
      t.equal(await page.locator('p.notice').textContent(), 'The saved query Order count, in the builder.');
      t.equal(await page.locator('#bi-result-table tbody td').first().textContent(), '6', 'run at once');
      await page.goto(dataUrl);

      // deleted after a confirmation: Cancel first
      const dialog = page.getByRole('dialog', { name: 'Delete this saved query?' });
      await queryRow.getByRole('button', { name: 'Delete Order count' }).click();
      await dialog.waitFor();
      t.match(await dialog.textContent(), 'The saved query Order count will be deleted.');
      t.ok(await dialog.getByRole('button', { name: 'Cancel' }).evaluate((el) => el === document.activeElement), 'the focus on Cancel');
      t.same(await axeViolations(page), [], 'no serious axe violation with the confirmation open');
      await page.keyboard.press('Escape');
      t.ok(await queryRow.getByRole('button', { name: 'Delete Order count' }).evaluate((el) => el === document.activeElement), 'Escape: the focus back on Delete');
      await queryRow.getByRole('button', { name: 'Delete Order count' }).click();
      await reloaded(page, 'queryDeleted', () => dialog.getByRole('button', { name: 'Delete' }).click());
      t.equal(await page.locator('p.notice').textContent(), 'Saved query deleted.');
      t.equal(await queryRow.count(), 0, 'gone from the page');
      t.same((await apiGet(page, `/bi/apps/${appId}/queries`)).items, [], 'and from the API');

      // the source changed (another schema: tested again), refreshed, then deleted
      await row.getByRole('button', { name: 'Change warehouse' }).click();
      t.equal(await page.locator('#source-form-heading').textContent(), 'Change the data source warehouse');
      t.ok(await focused(page, '#source-name'), 'the focus in the form');
      t.equal(await page.getByLabel('Password').inputValue(), '', 'no password shown');
      await page.getByLabel('Schema', { exact: true }).fill('public');
      const patched = relayCall(page, 'PATCH', /\/data-sources\/[^/]+$/);
      await reloaded(page, 'changed', () => page.getByRole('button', { name: 'Save and test' }).click());
      t.equal((await patched).request().headers()['if-match'], `"${source.version}"`, 'with If-Match');
      t.equal(await row.locator('summary').textContent(), '1 table', 'the tables of the other schema');
      await reloaded(page, 'refreshed', () => row.getByRole('button', { name: 'Refresh warehouse' }).click());
      t.match(await page.locator('p.notice').textContent(), /^Data source warehouse tested again/);
      await row.getByRole('button', { name: 'Delete warehouse' }).click();
      const sourceDialog = page.getByRole('dialog', { name: 'Delete this data source?' });
      await sourceDialog.waitFor();
      await reloaded(page, 'deleted', () => sourceDialog.getByRole('button', { name: 'Delete' }).click());
      t.same((await apiGet(page, `/bi/apps/${appId}/data-sources`)).items, [], 'no source left');
      t.same(await axeViolations(page), [], 'no serious axe violation at the end');
    },
    // the failed test (422) this scenario asks for
    (e) => /status of 422 .*\/console\/api\/bi\/apps\/[^/]+\/data-sources/.test(e),
  );
}
