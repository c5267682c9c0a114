// The seed's daily work in a real browser, from record pages the manifests
// derive: a lead converted, landing on the new customer; a quote built from
// three lines whose totals are the API's; a project member added; a comment
// with a mention; a file attached and downloaded as it was; a new AI client's
// key shown once; a customer's related records. As the demo administrator, and
// as a reader who must not be offered the actions.
import t from 'tap';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { PASSWORD } from '../helper.ts';
import { axeViolations, consoleInBrowser, logIn, screenshot, submit } from './browser.ts';

const { ctx, scenario } = await consoleInBrowser(t);
const tenant = await ctx.tenant();
const admin = { tenant: tenant.id, email: tenant.adminEmail, password: PASSWORD };
const api = async (method: string, url: string, payload?: object) => {
  const res = await ctx.as(tenant.adminToken, { method: method as 'GET', url, ...(payload ? { payload } : {}) });
  if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`);
  return res.json();
};

scenario('a lead converted from its page lands on the new customer, which lists its contact and opportunity', async (t, page, errors) => {
  const lead = await api('POST', '/api/crm/leads', { title: 'Browser deal', companyName: 'Klick AG', lastName: 'Maus', email: 'maus@klick.test' });
  await api('PATCH', `/api/crm/leads/${lead.id}`, { status: 'qualified' });
  await logIn(page, admin);
  await page.goto('/crm/leads');
  await page.locator('tr[data-href]', { hasText: 'Browser deal' }).locator('td').nth(1).click();
  await page.waitForURL(`**/crm/leads/${lead.id}`);
  t.equal(await page.locator('.badge').textContent(), 'Qualified', 'the status as a badge, by its label');
  await page.getByRole('link', { name: 'Convert' }).click();
  await page.getByLabel('Name').nth(1).fill('Klick rollout');
  t.equal(await submit(page, page.getByRole('button', { name: 'Convert' })), 200);
  t.match(page.url(), /\/crm\/customers\/[0-9a-f-]+\?done=convertLead$/, "on the new customer's page");
  t.match(await page.getByRole('status').textContent(), /Done: Convert/);
  t.match(await page.locator('#related-Contact-customerId').textContent(), /Maus/);
  t.match(await page.locator('#related-Opportunity-customerId').textContent(), /Klick rollout/);
  t.same(await axeViolations(page), [], 'no serious axe finding on a record hub');
  await screenshot(page, 'daily-customer-hub');
  t.same(errors, [], 'no script error');
});

scenario("a quote built from three lines; a changed quantity; the totals are the API's", async (t, page, errors) => {
  const customer = await api('POST', '/api/crm/customers', { name: 'Quote Browser GmbH' });
  const quote = await api('POST', '/api/crm/quotes', { customerId: customer.id, number: 'Q-BR-1', title: 'Browser quote' });
  await logIn(page, admin);
  await page.goto(`/crm/quotes/${quote.id}`);
  const lines = [
    ['1', 'Pump', '2', '100.00'],
    ['2', 'Valve', '3', '10.50'],
    ['3', 'Service', '1', '80'],
  ];
  for (const [position, description, quantity, price] of lines) {
    const blank = page.locator('tr.line-new');
    await blank.getByLabel('Position').fill(position);
    await blank.getByLabel('Description').fill(description);
    await blank.getByLabel('Quantity').fill(quantity);
    await blank.getByLabel('Unit price').fill(price);
    await blank.getByLabel('Tax rate (fraction, 0.19 = 19 %)').fill('0.19');
    await blank.getByRole('button', { name: 'Add' }).click();
    await page
      .locator('tr', { has: page.locator(`input[value="${description}"]`) })
      .first()
      .waitFor();
  }
  let stored = await api('GET', `/api/crm/quotes/${quote.id}`);
  t.equal(stored.subtotal, '311.50');
  t.match(await page.locator('.record-fields').first().textContent(), new RegExp(`${stored.total} EUR`), 'the page shows the total');

  const valve = page.locator('tbody tr', { has: page.locator('input[value="Valve"]') });
  await valve.getByLabel('Quantity').fill('5');
  await valve.getByRole('button', { name: /Save/ }).click();
  await page.locator('.record-fields').first().getByText('332.50 EUR').first().waitFor();
  stored = await api('GET', `/api/crm/quotes/${quote.id}`);
  t.equal(stored.subtotal, '332.50', 'the API has the new total');
  t.match(await page.locator('.record-fields').first().textContent(), new RegExp(`${stored.total} EUR`), 'and the page shows it without a reload of its own');
  await screenshot(page, 'daily-quote-lines');
  t.same(errors, []);
});

scenario('a project member added; a comment with a mention; a file attached and downloaded as it was', async (t, page, errors) => {
  const project = await api('POST', '/api/pm/projects', { key: 'BRW', name: 'Browser project' });
  const colleague = await ctx.user(tenant, { codes: ['erp:pm:view'] });
  const task = await api('POST', '/api/pm/tasks', { projectId: project.id, title: 'Try the browser' });
  await logIn(page, admin);
  await page.goto(`/pm/projects/${project.id}`);
  const blank = page.locator('#related-ProjectMember-projectId tr.line-new');
  const before = Number(await page.locator('#related-ProjectMember-projectId .count').textContent());
  await blank.locator('select[name="userId"]').selectOption(colleague.id);
  await blank.getByRole('button', { name: 'Add' }).click();
  await page.locator('#related-ProjectMember-projectId .count', { hasText: String(before + 1) }).waitFor();
  const members = (await api('GET', `/api/pm/projects/${project.id}/members`)).items;
  t.ok(
    members.some((m: { userId: string }) => m.userId === colleague.id),
    'the member is stored',
  );

  await page.goto(`/pm/tasks/${task.id}`);
  const box = page.locator('#related-Comment-taskId textarea');
  const handle = colleague.email.split('@')[0];
  await box.pressSequentially(`Please check @${handle.slice(0, 4)}`);
  await page.locator('.mention-list li').first().waitFor();
  await box.press('Enter');
  t.match(await box.inputValue(), new RegExp(`@${handle} $`), 'the mention completed');
  await submit(page, page.locator('#related-Comment-taskId').getByRole('button', { name: 'Add' }));
  t.match(await page.locator('#related-Comment-taskId').textContent(), new RegExp(`@${handle}`));
  // (the notification follows from the comment's mentions by an event the workers deliver: test/plugins/pm)
  const comment = (await api('GET', `/api/pm/comments?taskId=${task.id}`)).items[0];
  t.same(comment.mentions, [colleague.id], 'the mention names the colleague');

  const file = join(tmpdir(), `plinth-attach-${Date.now()}.txt`);
  writeFileSync(file, 'notes of the browser test\n');
  await page.locator('#related-Attachment-taskId input[type="file"]').setInputFiles(file);
  await page.locator('#related-Attachment-taskId').getByRole('button', { name: 'Upload' }).click();
  await page.locator('#related-Attachment-taskId a[download]').waitFor();
  const [download] = await Promise.all([page.waitForEvent('download'), page.locator('#related-Attachment-taskId a[download]').first().click()]);
  t.equal(readFileSync((await download.path())!, 'utf8'), 'notes of the browser test\n', 'the same bytes back');
  t.same(await axeViolations(page), [], 'no serious axe finding on the task page');
  await screenshot(page, 'daily-task');
  t.same(errors, []);
});

scenario("a new AI client's key is shown once, with a copy button", async (t, page, errors) => {
  await logIn(page, admin);
  await page.goto('/ai/clients/new');
  await page.getByLabel('Name').fill('Browser desk');
  t.equal(await submit(page, page.getByRole('button', { name: 'Save' })), 200);
  const key = await page.locator('#revealed-secret').inputValue();
  t.match(key, /^plk_/);
  t.match(await page.getByRole('alert').textContent(), /will not be shown again/);
  await page.getByRole('button', { name: 'Copy' }).click();
  await page.getByRole('button', { name: 'Copied' }).waitFor();
  await page.getByRole('link', { name: 'I have copied it' }).click();
  t.notMatch(await page.content(), new RegExp(key), 'not on the client page');
  t.same(errors, []);
});

scenario('a reader is offered no conversion, no line editor and no upload', async (t, page) => {
  const reader = await ctx.user(tenant, { codes: ['erp:crm:view', 'erp:pm:view'] });
  const lead = await api('POST', '/api/crm/leads', { title: 'Read only', companyName: 'R', lastName: 'R' });
  const customer = await api('POST', '/api/crm/customers', { name: 'Reader Ltd' });
  const quote = await api('POST', '/api/crm/quotes', { customerId: customer.id, number: 'Q-RD-1' });
  await logIn(page, { tenant: tenant.id, email: reader.email, password: PASSWORD });
  await page.goto(`/crm/leads/${lead.id}`);
  t.equal(await page.getByRole('link', { name: 'Convert' }).count(), 0, 'no Convert');
  await page.goto(`/crm/quotes/${quote.id}`);
  t.equal(await page.locator('tr.line-new').count(), 0, 'no line to add');
});

scenario('a report made with a project picked in its form, then run from its page', async (t, page, errors) => {
  const project = await api('POST', '/api/pm/projects', { key: 'RPB', name: 'Report browser' });
  await logIn(page, admin);
  await page.goto('/ai/reports/new');
  await page.getByLabel('Name').fill('Overdue in Report browser');
  await page.locator('select[name="type"]').selectOption('overdue-tasks');
  await page.locator('select[name="parameters:overdue-tasks.projectId"]').selectOption(project.id);
  t.equal(await page.locator('textarea[name="parameters"]').count(), 0, 'no raw JSON for the parameters');
  t.equal(await submit(page, page.getByRole('button', { name: 'Save' })), 200);
  const report = (await api('GET', '/api/ai/reports?search=Overdue%20in%20Report')).items[0];
  t.same(report.parameters?.projectId, project.id, 'the project chosen in the form is stored');
  await page.getByRole('link', { name: 'Run', exact: true }).click();
  await page.getByRole('button', { name: /Run now/ }).click();
  await page.waitForURL(/\/ai\/reports\/history\/[0-9a-f-]+\?ran=1$/);
  const runs = (await api('GET', `/api/ai/report-runs?reportId=${report.id}`)).items;
  t.equal(runs.length, 1, 'it ran once');
  t.same(errors, []);
});

scenario('on a phone the page comes first and the menu is one tap away', async (t, page) => {
  const customer = await api('POST', '/api/crm/customers', { name: 'Phone GmbH' });
  await page.setViewportSize({ width: 390, height: 844 });
  await logIn(page, admin);
  await page.goto(`/crm/customers/${customer.id}`);
  const heading = await page.locator('main h1').boundingBox();
  t.ok(heading && heading.y + heading.height < 844, `the heading is on the first screen (at ${Math.round(heading?.y ?? -1)} px)`);
  await page.getByRole('link', { name: 'Menu' }).click();
  t.ok(await page.locator('nav#menu').isVisible(), 'the menu link leads to the menu');
  t.same(await axeViolations(page), [], 'no serious axe finding on a phone');
  await screenshot(page, 'daily-phone-customer');
});
