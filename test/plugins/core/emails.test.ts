// /api/emails: SMTP/IMAP accounts naming a company, tenant-scoped, admin
// protected. Passwords are accepted on write, stored encrypted, never returned
// and never logged.
import t from 'tap';
import { build } from '../../helper.ts';
import { apiAs, checkAdminGuard, expectProblem, expectStatus, logSink, UNKNOWN_ID } from './core-api.ts';

const lines: string[] = [];
const ctx = await build(t, { logger: logSink(lines) });
const tenant = await ctx.tenant();
const api = apiAs(ctx, tenant.adminToken);
const SECRET = 'pa$$-Wörd-🔑-never-shown-0123456789';
let seq = 0;
const account = async (body: Record<string, unknown> = {}) =>
  expectStatus(await api('POST', '/api/emails', { companyId: tenant.companyId, type: 'SMTP', name: `box ${++seq}`, host: 'smtp.example.test', port: 587, ...body }), 201, 'create account');
const second = expectStatus(await api('POST', '/api/companies', { code: 'SECOND', name: 'Second' }), 201, 'company');

/** The stored column, straight from the database. */
async function storedPassword(id: string): Promise<string | null> {
  const tn = ctx.kernel.tenants.cached(tenant.id)!;
  const [row] = (await ctx.kernel.dbs.get(tn.connectionKey).em.getConnection().execute(`select password from "${tn.schema}".core_email_accounts where id = ?`, [id])) as { password: string | null }[];
  return row.password;
}

t.test('the three admin checks on every route', async (t) => {
  const a = await account();
  const codes = ['core:email:view', 'core:email:manage'];
  for (const request of [
    { method: 'GET', url: '/api/emails' },
    { method: 'GET', url: `/api/emails/company/${tenant.companyId}` },
    { method: 'GET', url: `/api/emails/${a.id}` },
    { method: 'POST', url: '/api/emails', payload: { companyId: tenant.companyId, type: 'IMAP', name: 'x', host: 'h', port: 993 } },
    { method: 'PATCH', url: `/api/emails/${a.id}`, payload: { port: 25 } },
    { method: 'DELETE', url: `/api/emails/${a.id}` },
  ] as const)
    await checkAdminGuard(t, ctx, tenant, codes, request);
  t.equal(expectStatus(await api('GET', `/api/emails/${a.id}`), 200, 'read').port, 587, 'unchanged');
});

t.test('create, read, PATCH, PUT, delete; the password never comes back', async (t) => {
  const res = await api('POST', '/api/emails', {
    companyId: tenant.companyId,
    type: 'IMAP',
    name: 'Inbox',
    host: 'imap.example.test',
    port: 993,
    security: 'tls',
    username: 'inbox',
    password: SECRET,
    fromAddress: 'inbox@example.test',
  });
  t.equal(res.statusCode, 201, res.body);
  t.equal(res.headers.location, `/api/emails/${res.json().id}`);
  const a = res.json();
  t.same(Object.keys(a).sort(), ['companyId', 'createdAt', 'fromAddress', 'host', 'id', 'isActive', 'name', 'port', 'security', 'type', 'updatedAt', 'username', 'version']);
  t.match(a, { companyId: tenant.companyId, type: 'IMAP', name: 'Inbox', host: 'imap.example.test', port: 993, security: 'tls', username: 'inbox', isActive: true });

  const stored = await storedPassword(a.id);
  t.ok(stored && !stored.includes(SECRET) && !stored.includes('never-shown'), 'stored encrypted');
  t.equal(ctx.kernel.secrets.decrypt(stored!), SECRET, 'and decrypts with the configured key');
  const again = await account({ password: SECRET });
  t.not(await storedPassword(again.id), stored, 'equal secrets do not look alike');

  const responses = [
    res,
    await api('GET', `/api/emails/${a.id}`),
    await api('GET', '/api/emails?size=1000'),
    await api('GET', `/api/emails/company/${tenant.companyId}`),
    await api('PATCH', `/api/emails/${a.id}`, { port: 143 }),
  ];
  for (const r of responses) {
    t.equal(r.statusCode, 200 + (r === res ? 1 : 0));
    t.notOk(r.body.includes('password') || r.body.includes(SECRET) || r.body.includes(stored!), 'no password in the response');
  }

  const changed = expectStatus(await api('PATCH', `/api/emails/${a.id}`, { password: 'another one' }), 200, 'patch password');
  t.equal(changed.version, 3);
  t.equal(ctx.kernel.secrets.decrypt((await storedPassword(a.id))!), 'another one');
  const put = { companyId: tenant.companyId, type: 'IMAP', name: 'Inbox 2', host: 'imap.example.test', port: 993, security: 'tls', username: 'inbox', fromAddress: null, isActive: true };
  expectStatus(await api('PUT', `/api/emails/${a.id}`, put), 200, 'PUT without the password');
  t.equal(ctx.kernel.secrets.decrypt((await storedPassword(a.id))!), 'another one', 'a PUT without the password keeps it');
  expectStatus(await api('PUT', `/api/emails/${a.id}`, { ...put, password: null }), 200, 'PUT clearing the password');
  t.equal(await storedPassword(a.id), null, 'null clears it');
  expectProblem(t, await api('PATCH', `/api/emails/${a.id}`, { port: 25 }, { 'if-match': '"1"' }), 412, 'PRECONDITION_FAILED', 'stale If-Match');
  t.equal((await api('DELETE', `/api/emails/${a.id}`)).statusCode, 204);
  expectProblem(t, await api('GET', `/api/emails/${a.id}`), 404, 'NOT_FOUND');
});

t.test("lists: every company's, one company's, by type", async (t) => {
  const smtp = await account({ type: 'SMTP' });
  const imap = await account({ type: 'IMAP', port: 993 });
  const other = await account({ companyId: second.id, type: 'SMTP' });
  const ids = (page: { items: { id: string }[] }) => page.items.map((i) => i.id);
  const all = expectStatus(await api('GET', '/api/emails?page=1&size=1000'), 200, 'all');
  t.ok(
    [smtp.id, imap.id, other.id].every((id) => ids(all).includes(id)),
    "every company's accounts",
  );
  t.equal(all.total, all.items.length);
  const onlySmtp = expectStatus(await api('GET', '/api/emails?type=SMTP&size=1000'), 200, 'smtp');
  t.ok(onlySmtp.items.every((i: { type: string }) => i.type === 'SMTP'));
  t.ok(ids(onlySmtp).includes(other.id) && !ids(onlySmtp).includes(imap.id));
  const mine = expectStatus(await api('GET', `/api/emails/company/${tenant.companyId}?size=1000`), 200, 'company');
  t.ok(mine.items.every((i: { companyId: string }) => i.companyId === tenant.companyId));
  t.ok(ids(mine).includes(smtp.id) && !ids(mine).includes(other.id));
  t.same(ids(expectStatus(await api('GET', `/api/emails/company/${second.id}?type=SMTP`), 200, 'second smtp')), [other.id]);
  t.same(ids(expectStatus(await api('GET', `/api/emails/company/${second.id}?type=IMAP`), 200, 'second imap')), []);
  t.same(ids(expectStatus(await api('GET', `/api/emails/company/${second.id}?sort=-createdAt&page=1&size=1000`), 200, 'sorted')), [other.id]);
  expectProblem(t, await api('GET', `/api/emails/company/${UNKNOWN_ID}`), 404, 'NOT_FOUND', 'no such company');
  expectProblem(t, await api('GET', '/api/emails/company/not-a-uuid'), 400, 'VALIDATION_FAILED', 'malformed company id');
  for (const url of ['/api/emails?type=POP3', '/api/emails?type=smtp', `/api/emails/company/${second.id}?type=X`, '/api/emails?password=x', '/api/emails?sort=password']) {
    expectProblem(t, await api('GET', url), 400, 'VALIDATION_FAILED', url);
  }
  expectProblem(t, await api('POST', `/api/emails/company/${second.id}`, {}), 405, 'METHOD_NOT_ALLOWED');
});

t.test('other tenants see nothing', async (t) => {
  const a = await account({ password: SECRET });
  const other = await ctx.tenant();
  const theirs = apiAs(ctx, other.adminToken);
  expectProblem(t, await theirs('GET', `/api/emails/${a.id}`), 404, 'NOT_FOUND');
  expectProblem(t, await theirs('PATCH', `/api/emails/${a.id}`, { port: 1 }), 404, 'NOT_FOUND');
  expectProblem(t, await theirs('DELETE', `/api/emails/${a.id}`), 404, 'NOT_FOUND');
  expectProblem(t, await theirs('GET', `/api/emails/company/${tenant.companyId}`), 404, 'NOT_FOUND', "another tenant's company");
  t.equal(expectStatus(await theirs('GET', '/api/emails'), 200, 'their list').total, 0);
  expectProblem(t, await theirs('POST', '/api/emails', { companyId: tenant.companyId, type: 'SMTP', name: 'x', host: 'h', port: 25 }), 400, 'VALIDATION_FAILED', "naming another tenant's company");
});

t.test('bad input', async (t) => {
  const good = { companyId: tenant.companyId, type: 'SMTP', name: 'x', host: 'smtp.example.test', port: 25, password: SECRET };
  const bodies: [string, Record<string, unknown>, string][] = [
    ['companyId missing', { ...good, companyId: undefined }, '/companyId'],
    ['company that does not exist', { ...good, companyId: UNKNOWN_ID }, '/companyId'],
    ['type not SMTP or IMAP', { ...good, type: 'POP3' }, '/type'],
    ['port 0', { ...good, port: 0 }, '/port'],
    ['port 65536', { ...good, port: 65536 }, '/port'],
    ['port as a string', { ...good, port: '25' }, '/port'],
    ['host with a space', { ...good, host: 'smtp example' }, '/host'],
    ['password as a number', { ...good, password: 1234 }, '/password'],
    ['password of 1025 characters', { ...good, password: 'p'.repeat(1025) }, '/password'],
    ['password with NUL', { ...good, password: `${SECRET}\u0000` }, '/password'],
    ['unknown field next to the password', { ...good, passphrase: SECRET }, '/passphrase'],
    ['huge name', { ...good, name: 'n'.repeat(100_000) }, '/name'],
    ['version is not writable', { ...good, version: 1 }, '/version'],
  ];
  for (const [what, body, path] of bodies) {
    const res = await api('POST', '/api/emails', body);
    expectProblem(t, res, 400, 'VALIDATION_FAILED', what);
    t.ok(
      res.json().errors?.some((e: { path: string }) => e.path === path),
      `${what} names ${path}: ${res.body.slice(0, 300)}`,
    );
    t.notOk(res.body.includes(SECRET), `${what}: the problem does not echo the password`);
  }
});

t.test('the OpenAPI document: the password is write-only', async (t) => {
  const doc = (await ctx.app.inject({ method: 'GET', url: '/api-docs/json' })).json();
  const s = doc.components.schemas;
  t.notOk('password' in s.CoreEmailAccount.properties, 'not in the response shape');
  t.equal(s.CoreEmailAccountCreate.properties.password.anyOf?.[0]?.writeOnly ?? s.CoreEmailAccountCreate.properties.password.writeOnly, true);
  t.notOk(s.CoreEmailAccountReplace.required.includes('password'), 'a PUT may omit it');
  t.ok(doc.paths['/api/emails/company/{companyId}'].get, 'the company list is documented');
});

// last: every line the app logged while the tests above ran
t.test('no log line carries a password or its ciphertext', async (t) => {
  t.ok(lines.length > 20, `${lines.length} log lines`);
  t.same(
    lines.filter((l) => l.includes(SECRET) || l.includes('never-shown') || l.includes('another one')),
    [],
  );
});
