// A record's page as a hub, derived from the manifests (GET /api/meta's related
// lists and actions): a customer's contacts, opportunities, quotes and
// activities; a lead converted from its page, landing on the new customer; a
// quote built from lines whose totals are the API's; a project's members; a
// secret shown once; an action on a list. And what a user without the rights,
// another tenant or a forged form gets.
import t from 'tap';
import { build, PASSWORD } from '../../helper.ts';
import { ConsoleSession } from '../../support/console-session.ts';

const ctx = await build(t);
const tenant = await ctx.tenant();
const other = await ctx.tenant();
const api = async (method: string, url: string, payload?: object, token = tenant.adminToken) => {
  const res = await ctx.as(token, { method: method as 'GET', url, ...(payload ? { payload } : {}) });
  if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`);
  return res.json();
};
const session = async (email = tenant.adminEmail, id = tenant.id) => {
  const s = new ConsoleSession(ctx.app);
  const res = await s.login(id, email, PASSWORD);
  if (res.statusCode !== 303) throw new Error(`login failed: ${res.statusCode}`);
  return s;
};
const main = (html: string) => /<main[\s\S]*<\/main>/.exec(html)?.[0] ?? '';
const section = (html: string, id: string) => new RegExp(`<section class="related" id="${id}"[\\s\\S]*?</section>`).exec(html)?.[0] ?? '';

t.test("GET /api/meta: a record's related lists and actions, as the caller may use them", async (t) => {
  const meta = await api('GET', '/api/meta');
  const entity = (name: string) => meta.entities.find((e: { name: string }) => e.name === name);
  const customer = entity('Customer');
  t.same(
    customer.related.map((r: { entity: string }) => r.entity),
    ['Contact', 'Opportunity', 'Quote', 'Activity', 'Lead'],
    "the manifest's order",
  );
  t.match(
    customer.related.find((r: { entity: string }) => r.entity === 'Contact'),
    { field: 'customerId', path: '/api/crm/customers/{id}/contacts', nested: false },
  );
  t.match(
    customer.related.find((r: { entity: string }) => r.entity === 'Lead'),
    { label: 'Converted leads', path: '/api/crm/leads?customerId={id}' },
  );
  t.match(entity('Quote').related, [{ entity: 'QuoteLine', nested: true, path: '/api/crm/quotes/{id}/lines' }]);
  const convert = entity('Lead').rowActions.find((a: { name: string }) => a.name === 'convertLead');
  t.match(convert, { label: 'Convert', method: 'POST', path: '/api/crm/leads/{id}/convert', when: { status: ['new', 'contacted', 'qualified'] } });
  t.ok(convert.body.properties.customer, "the route's body schema, for a form");
  t.match(entity('AiClient'), { createReveals: 'apiKey', rowActions: [{ name: 'rotateClientKey', reveals: 'apiKey', confirm: true }, { name: 'revokeClient' }] });
  t.match(entity('Notification').listActions, [{ name: 'setAllNotificationsRead', label: 'Mark all as read' }]);
  t.match(
    entity('Task').related.find((r: { entity: string }) => r.entity === 'Attachment'),
    { upload: '/api/pm/tasks/{id}/attachments' },
  );
  t.notOk(
    entity('Task').rowActions.some((a: { name: string }) => a.name === 'createAttachment'),
    'an upload is no action',
  );
  t.notOk(
    entity('User').related.some((r: { entity: string }) => r.entity === 'Notification'),
    'a ref marked "related": false is no list',
  );

  t.same(entity('ProjectActivity').actions, ['read'], 'a log its routes only read offers no New, Edit or Delete, even to an administrator');
  t.same(entity('AiClient').actions, ['read', 'create', 'update'], "a module's own routes count: it creates and changes clients, and deletes none");

  const viewer = await ctx.user(tenant, { codes: ['erp:crm:view'] });
  const theirs = await api('GET', '/api/meta', undefined, viewer.token);
  const lead = theirs.entities.find((e: { name: string }) => e.name === 'Lead');
  t.same(lead.rowActions, [], 'no Convert without the right to convert');
});

t.test("a customer's page lists its contacts, opportunities, quotes and activities, each with New pre-filled", async (t) => {
  const customer = await api('POST', '/api/crm/customers', { name: 'Hub & Co' });
  const contact = await api('POST', '/api/crm/contacts', { customerId: customer.id, lastName: 'Lindqvist', email: 'l@hub.test' });
  await api('POST', '/api/crm/opportunities', { customerId: customer.id, name: 'Pumps' });
  await api('POST', '/api/crm/quotes', { customerId: customer.id, number: 'Q-HUB-1', title: 'Pumps quote' });
  await api('POST', '/api/crm/activities', { customerId: customer.id, type: 'call', subject: 'Intro call' });
  const elsewhere = await api('POST', '/api/crm/customers', { name: 'Another' });
  await api('POST', '/api/crm/contacts', { customerId: elsewhere.id, lastName: 'Nobody' });

  const s = await session();
  const page = await s.get(`/crm/customers/${customer.id}`);
  t.equal(page.statusCode, 200);
  const html = main(page.body);
  t.match(html, /<h1>Hub &amp; Co <span class="badge" data-value="active">Active<\/span><\/h1>/, 'title and status badge, by its label');
  const contacts = section(html, 'related-Contact-customerId');
  t.match(contacts, /Contacts <span class="count">1<\/span>/);
  t.match(contacts, new RegExp(`<tr data-href="/crm/contacts/${contact.id}">`), 'a row opens on a click');
  t.match(contacts, new RegExp(`<a href="/crm/contacts/${contact.id}">Lindqvist</a>`), 'with a real link');
  t.match(contacts, /href="mailto:l@hub.test"/, 'an e-mail address is a link');
  t.notMatch(contacts, /Nobody/, "another customer's contact is not listed");
  t.match(section(html, 'related-Opportunity-customerId'), /Pumps/);
  t.match(section(html, 'related-Quote-customerId'), /Q-HUB-1/);
  t.match(section(html, 'related-Activity-customerId'), /Intro call/);
  t.notMatch(section(html, 'related-Lead-customerId'), /list\.new|>New</, 'no New where the reference is set by the module only');

  const newUrl = new RegExp(`href="(/crm/contacts/new\\?customerId&#x3D;${customer.id})"`).exec(contacts)?.[1].replace('&#x3D;', '=');
  t.ok(newUrl, 'New names the customer');
  const form = await s.get(newUrl!);
  t.match(form.body, new RegExp(`<option value="${customer.id}" selected>Hub &amp; Co</option>`), 'the new contact starts at the customer');
});

t.test('a lead converted from its page lands on the new customer; the action is gone then', async (t) => {
  const lead = await api('POST', '/api/crm/leads', { title: 'Pump deal', companyName: 'Pumpwerk GmbH', lastName: 'Berg', status: 'new' });
  const rep = await api('POST', '/api/crm/salesreps', { name: 'Rita Rep', email: 'rita@rep.test' });
  const s = await session();
  const page = await s.get(`/crm/leads/${lead.id}`);
  t.match(page.body, new RegExp(`<a class="button secondary" href="/crm/leads/${lead.id}/do/convertLead"[^>]*>Convert</a>`));
  const form = await s.get(`/crm/leads/${lead.id}/do/convertLead`);
  t.equal(form.statusCode, 200);
  t.match(form.body, /name="body\.opportunity\.name"/, 'a form from the body schema');
  t.match(
    form.body,
    new RegExp(`<select[^>]*name="body\\.opportunity\\.ownerId"[\\s\\S]*?<option value="${rep.id}"[^>]*>Rita Rep</option>`),
    'a sales representative picked by name, not typed as an id',
  );
  t.notMatch(form.body, /"\/api\//, 'no route on the page');

  const bad = await s.post(`/crm/leads/${lead.id}/do/convertLead`, { 'body.opportunity.probability': '140' });
  t.equal(bad.statusCode, 400, "the form's own check");
  t.match(bad.body, /aria-invalid="true"/);
  t.equal((await api('GET', `/api/crm/leads/${lead.id}`)).status, 'new', 'nothing converted');

  const done = await s.post(`/crm/leads/${lead.id}/do/convertLead`, { 'body.opportunity.name': 'Pumps 2027', 'body.opportunity.probability': '40' });
  t.equal(done.statusCode, 303);
  const converted = await api('GET', `/api/crm/leads/${lead.id}`);
  t.equal(converted.status, 'converted');
  t.equal(done.headers.location, `/crm/customers/${converted.customerId}?done=convertLead`, "the new customer's page");
  const customer = await s.get(done.headers.location as string);
  t.match(customer.body, /<p class="notice" role="status">Done: Convert\.<\/p>/);
  t.match(section(main(customer.body), 'related-Opportunity-customerId'), /Pumps 2027/);

  const again = await s.get(`/crm/leads/${lead.id}`);
  t.notMatch(again.body, /do\/convertLead/, 'a converted lead offers no conversion');
  t.equal((await s.get(`/crm/leads/${lead.id}/do/convertLead`)).statusCode, 404);
  const edit = await s.get(`/crm/leads/${lead.id}/edit`);
  t.notMatch(edit.body, /<option value="new"/, 'a converted lead moves nowhere');

  const fresh = await api('POST', '/api/crm/leads', { title: 'Fresh', companyName: 'F', lastName: 'F' });
  const editFresh = await s.get(`/crm/leads/${fresh.id}/edit`);
  t.match(editFresh.body, /<option value="contacted"/);
  t.notMatch(editFresh.body, /<option value="converted"/, 'a state only the module sets is not offered');

  const viewer = await ctx.user(tenant, { codes: ['erp:crm:view'] });
  const v = await session(viewer.email);
  t.notMatch((await v.get(`/crm/leads/${fresh.id}`)).body, /do\/convertLead/, 'a reader is not offered the conversion');
  t.equal((await v.get(`/crm/leads/${fresh.id}/do/convertLead`)).statusCode, 404);

  const stranger = await session(other.adminEmail, other.id);
  t.equal((await stranger.get(`/crm/leads/${fresh.id}/do/convertLead`)).statusCode, 404, "another tenant's lead");
  const forged = await s.post(`/crm/leads/${fresh.id}/do/convertLead`, { _csrf: 'forged' });
  t.equal(forged.statusCode, 403, 'a forged form');
  t.equal((await api('GET', `/api/crm/leads/${fresh.id}`)).status, 'new');
});

t.test("a quote built from lines on its page: the totals are the API's after each change", async (t) => {
  const customer = await api('POST', '/api/crm/customers', { name: 'Lines Ltd' });
  const quote = await api('POST', '/api/crm/quotes', { customerId: customer.id, number: 'Q-LINES-1', title: 'Three lines' });
  const s = await session();
  const url = `/crm/quotes/${quote.id}`;
  const page = await s.get(url);
  t.match(page.body, /data-lines="QuoteLine\.quoteId"/, 'a line editor');
  const add = `${url}/lines/QuoteLine.quoteId`;
  for (const [position, description, quantity, unitPrice] of [
    ['1', 'Pump', '2', '100.00'],
    ['2', 'Valve', '3', '10.50'],
    ['3', 'Service', '1', '80'],
  ]) {
    const res = await s.post(add, { position, description, quantity, unitPrice, discount: '0', taxRate: '0.19' });
    t.equal(res.statusCode, 303, `line ${description} added`);
  }
  let lines = (await api('GET', `/api/crm/quotes/${quote.id}/lines`)).items;
  t.equal(lines.length, 3);
  let stored = await api('GET', `/api/crm/quotes/${quote.id}`);
  t.equal(stored.subtotal, '311.50');
  const shown = await s.get(url);
  t.match(main(shown.body), new RegExp(`<dt>Net total</dt><dd>${stored.subtotal} EUR`), "the page shows the API's total, with its currency");
  t.match(main(shown.body), new RegExp(`<dt>Total</dt><dd>${stored.total} EUR`));

  const valve = lines.find((l: { description: string }) => l.description === 'Valve');
  const changed = await s.post(`${add}/${valve.id}`, { _version: String(valve.version), position: '2', description: 'Valve', quantity: '5', unitPrice: '10.50', discount: '0', taxRate: '0.19' });
  t.equal(changed.statusCode, 303);
  stored = await api('GET', `/api/crm/quotes/${quote.id}`);
  t.equal(stored.subtotal, '332.50', 'a changed quantity changes the total');

  const stale = await s.post(`${add}/${valve.id}`, { _version: String(valve.version), position: '2', description: 'Valve', quantity: '9', unitPrice: '10.50', discount: '0', taxRate: '0.19' });
  t.equal(stale.statusCode, 412, 'a line changed meanwhile is not overwritten');
  t.match(stale.body, /class="line-errors"/, 'the refusal beside the row');
  t.match(stale.body, /value="9"/, 'with what was typed');

  const missing = await s.post(add, { position: '4', description: '', quantity: 'x', unitPrice: '1', discount: '0', taxRate: '0' });
  t.equal(missing.statusCode, 400);
  t.match(missing.body, /class="line-errors"/);
  t.notMatch(main(missing.body), /must |\/api\//, 'in words');

  lines = (await api('GET', `/api/crm/quotes/${quote.id}/lines`)).items;
  const service = lines.find((l: { description: string }) => l.description === 'Service');
  t.equal((await s.post(`${add}/${service.id}/delete`, { _version: String(service.version) })).statusCode, 303);
  t.equal((await api('GET', `/api/crm/quotes/${quote.id}`)).subtotal, '252.50', 'a removed line leaves the total');

  t.equal((await s.post(`${url}/lines/Nothing.quoteId`, { description: 'x' })).statusCode, 404, 'an unknown list');
  const stranger = await session(other.adminEmail, other.id);
  t.equal((await stranger.post(add, { description: 'Intruder', quantity: '1', unitPrice: '1' })).statusCode, 404, "another tenant's quote");
  t.equal((await api('GET', `/api/crm/quotes/${quote.id}/lines`)).items.length, 2);
});

t.test("a project's members added on its page", async (t) => {
  const project = await api('POST', '/api/pm/projects', { key: 'HUB', name: 'Hub project' });
  const member = await ctx.user(tenant, { codes: ['erp:pm:view'] });
  const s = await session();
  const url = `/pm/projects/${project.id}`;
  const page = await s.get(url);
  t.match(page.body, /data-lines="ProjectMember\.projectId"/);
  t.match(page.body, new RegExp(`<option value="${member.id}"`), 'the users to choose from');
  const res = await s.post(`${url}/lines/ProjectMember.projectId`, { userId: member.id, role: 'member' });
  t.equal(res.statusCode, 303, res.body);
  const members = (await api('GET', `/api/pm/projects/${project.id}/members`)).items;
  t.ok(members.some((m: { userId: string }) => m.userId === member.id));
});

t.test('a secret shown once: a new AI client and a rotated key', async (t) => {
  const s = await session();
  await s.get('/ai/clients/new');
  const created = await s.post('/ai/clients', { name: 'Desk client' });
  t.equal(created.statusCode, 200);
  const key = /id="revealed-secret"[^>]*value="([^"]+)"/.exec(created.body)?.[1];
  t.match(key, /^plk_/, 'the key, this once');
  t.match(created.body, /will not be shown again/);
  const client = (await api('GET', '/api/ai/clients?search=Desk')).items[0];
  const page = await s.get(`/ai/clients/${client.id}`);
  t.notMatch(page.body, new RegExp(key!), 'never again');
  const confirm = await s.get(`/ai/clients/${client.id}/do/rotateClientKey`);
  t.match(confirm.body, /class="warning"/, 'asks first');
  const rotated = await s.post(`/ai/clients/${client.id}/do/rotateClientKey`, {});
  t.equal(rotated.statusCode, 200);
  const second = /id="revealed-secret"[^>]*value="([^"]+)"/.exec(rotated.body)?.[1];
  t.ok(second && second !== key, 'a new key');
});

t.test('an action on a list: notifications marked read', async (t) => {
  const s = await session();
  const list = await s.get('/pm/notifications');
  t.match(list.body, /action="\/pm\/notifications\/do\/setAllNotificationsRead"/, 'a button, no page: it asks nothing');
  const res = await s.post('/pm/notifications/do/setAllNotificationsRead', {});
  t.equal(res.statusCode, 303);
  t.equal(res.headers.location, '/pm/notifications?done=setAllNotificationsRead');
  t.match((await s.get(res.headers.location as string)).body, /Done: Mark all as read\./);
  t.equal((await s.post('/pm/notifications/do/nothing', {})).statusCode, 404, 'an unknown action');
});

t.test("a task's page: a comment written there, a file attached and downloaded as it was, watchers", async (t) => {
  const project = await api('POST', '/api/pm/projects', { key: 'COL', name: 'Collaboration' });
  const task = await api('POST', '/api/pm/tasks', { projectId: project.id, title: 'Write the spec' });
  const s = await session();
  const url = `/pm/tasks/${task.id}`;
  const page = await s.get(url);
  const comments = section(main(page.body), 'related-Comment-taskId');
  t.match(comments, new RegExp(`<form class="compose" method="post" action="${url}/compose/Comment.taskId">`), 'a comment is written on the page');
  t.match(comments, /<textarea[^>]*name="body"[^>]*data-mentions/, 'with @ completion');

  const empty = await s.post(`${url}/compose/Comment.taskId`, { body: '' });
  t.equal(empty.statusCode, 400, 'an empty comment is refused');
  t.match(section(main(empty.body), 'related-Comment-taskId'), /class="alert"/, 'beside the form');
  const said = await s.post(`${url}/compose/Comment.taskId`, { body: 'First draft is up' });
  t.equal(said.statusCode, 303);
  t.match(section(main((await s.get(url)).body), 'related-Comment-taskId'), /First draft is up/);

  // a comment has no page of its own: changed and deleted in place, by its author only
  const comment = (await api('GET', `/api/pm/comments?taskId=${task.id}`)).items[0];
  const edited = await s.post(`${url}/lines/Comment.taskId/${comment.id}`, { _version: String(comment.version), body: 'Second draft is up' });
  t.equal(edited.statusCode, 303);
  t.equal((await api('GET', `/api/pm/comments/${comment.id}`)).body, 'Second draft is up', 'edited');
  // a member of the project who may comment, but not change what others wrote (an erp:pm:admin may)
  const colleague = await ctx.user(tenant, { codes: ['erp:pm:view'] });
  await api('POST', `/api/pm/projects/${project.id}/members`, { userId: colleague.id, role: 'member' });
  const c = await session(colleague.email);
  const current = await api('GET', `/api/pm/comments/${comment.id}`);
  const theirs = await c.post(`${url}/lines/Comment.taskId/${comment.id}`, { _version: String(current.version), body: 'Not mine to change' });
  t.ok(theirs.statusCode >= 400 && theirs.statusCode < 500, `another user's comment is refused (${theirs.statusCode})`);
  t.match(section(main(theirs.body), 'related-Comment-taskId'), /class="line-errors"/, 'beside it');
  t.equal((await api('GET', `/api/pm/comments/${comment.id}`)).body, 'Second draft is up');
  const removed = await s.post(`${url}/lines/Comment.taskId/${comment.id}/delete`, { _version: String(current.version) });
  t.equal(removed.statusCode, 303);
  t.ok((await api('GET', `/api/pm/comments/${comment.id}`)).deletedAt, 'deleted by its author');

  const attachments = section(main(page.body), 'related-Attachment-taskId');
  const action = /<form class="upload" method="post" action="([^"]+)"/.exec(attachments)?.[1].replaceAll('&amp;', '&').replace('&#x3D;', '=');
  t.ok(action?.startsWith(`${url}/upload/Attachment.taskId?_csrf=`), 'an upload form');
  const bytes = Buffer.from('%PDF-1.4\n% a tiny file\n');
  const boundary = '----plinthtest';
  const body = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="spec.pdf"\r\nContent-Type: application/pdf\r\n\r\n`),
    bytes,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  const sent = await ctx.app.inject({ method: 'POST', url: action!, payload: body, headers: { cookie: s.cookieHeader, 'content-type': `multipart/form-data; boundary=${boundary}` } });
  t.equal(sent.statusCode, 303, sent.body.slice(0, 300));
  const listed = section(main((await s.get(url)).body), 'related-Attachment-taskId');
  t.match(listed, /spec\.pdf/);
  const download = /<a href="([^"]+)" download/.exec(listed)?.[1];
  t.match(download, /^\/console\/api\/pm\/attachments\/[0-9a-f-]+\/content$/);
  const got = await ctx.app.inject({ method: 'GET', url: download!, headers: { cookie: s.cookieHeader } });
  t.equal(got.statusCode, 200);
  t.same(got.rawPayload, bytes, 'the same bytes back');

  const forged = await ctx.app.inject({
    method: 'POST',
    url: `${url}/upload/Attachment.taskId`,
    payload: body,
    headers: { cookie: s.cookieHeader, 'content-type': `multipart/form-data; boundary=${boundary}` },
  });
  t.equal(forged.statusCode, 403, 'an upload without the CSRF token');
  const viewer = await ctx.user(tenant, { codes: ['erp:crm:view'] });
  t.equal((await (await session(viewer.email)).get(url)).statusCode, 404, 'a user who may not read tasks has no task page');

  t.match(main(page.body), /data-lines="TaskWatcher\.taskId"/, 'watchers are added in place');
});

t.test("a record's history in words: who changed what, values as the page reads them, newest first", async (t) => {
  const lead = await api('POST', '/api/crm/leads', { title: 'History lead', companyName: 'H', lastName: 'H' });
  await api('PATCH', `/api/crm/leads/${lead.id}`, { status: 'contacted', estimatedValue: '1200.00' });
  const s = await session();
  const page = main((await s.get(`/crm/leads/${lead.id}`)).body);
  const history = /<section class="timeline"[\s\S]*?<\/section>/.exec(page)?.[0] ?? '';
  t.match(history, /History <span class="count">2<\/span>/);
  t.match(history, /Admin changed this Lead\.[\s\S]*Admin created this Lead\./, 'the newest first, by the name of who did it');
  t.match(history, /Status: New → Contacted/, 'values by their labels');
  t.match(history, /Estimated value: \(empty\) → 1200\.00 EUR/, 'money with its currency');
  t.notMatch(history, /entityId|"before"|\{/, 'no raw JSON');

  const viewer = await ctx.user(tenant, { codes: ['erp:pm:view'] });
  const meta = await api('GET', '/api/meta', undefined, viewer.token);
  t.notOk(
    meta.entities.some((e: { name: string }) => e.name === 'Lead'),
    'a user who may not read leads has no history of them',
  );
});

t.test("a page's script gets the API's problems in the user's words through the relay", async (t) => {
  const s = await session();
  await s.get('/crm/leads');
  const res = await ctx.app.inject({
    method: 'POST',
    url: '/console/api/crm/leads',
    payload: { title: 'x'.repeat(300), companyName: 'C', surprise: true },
    headers: { cookie: s.cookieHeader, 'x-csrf-token': s.csrf, 'content-type': 'application/json' },
  });
  t.equal(res.statusCode, 400);
  const problem = res.json();
  t.equal(problem.code, 'VALIDATION_FAILED', 'the code as the API gave it');
  t.notMatch(problem.title, /validation failed/i, 'the title a sentence');
  t.ok(problem.errors.length >= 2);
  for (const e of problem.errors) t.notMatch(e.message, /must |should /, `in words: ${e.message}`);
  const ok = await ctx.app.inject({ method: 'GET', url: '/console/api/crm/leads?size=1', headers: { cookie: s.cookieHeader } });
  t.equal(ok.statusCode, 200, 'an answer that is no problem passes unchanged');
  t.ok(Array.isArray(ok.json().items));
});
