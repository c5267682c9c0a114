// The attack suites hold every 2xx answer to the document (test/support/api/responses.ts):
// a real answer passes, and a body outside its schema, a media type or a status the
// operation does not document, or a body where it promises none, is reported.
import t from 'tap';
import { build } from '../helper.ts';
import { loadApi } from '../support/api/describe.ts';
import { ResponseWatch, type Reply } from '../support/api/responses.ts';

const ctx = await build(t);
const api = await loadApi(ctx.app, ctx.kernel);
const tenant = await ctx.tenant();
const watch = new ResponseWatch(api).watch(ctx.app);
const op = (id: string) => api.ops.find((o) => o.id === id)!;

const made = await ctx.as(tenant.adminToken, { method: 'POST', url: '/api/crm/customers', payload: { name: 'Schema check' } });
const read = await ctx.as(tenant.adminToken, { method: 'GET', url: `/api/crm/customers/${made.json().id}` });
const list = await ctx.as(tenant.adminToken, { method: 'GET', url: '/api/crm/customers' });
const reply = (body: unknown, o: Partial<Reply> = {}): Reply => ({ statusCode: 200, headers: { 'content-type': 'application/json; charset=utf-8' }, body: JSON.stringify(body), ...o });

t.test('real answers keep to the document, and the watch saw them', async (t) => {
  t.equal(read.statusCode, 200);
  t.equal(watch.checked, 3, 'the create, the read and the list went through the watched inject');
  t.same([...watch.breaches.keys()], []);
});

t.test('a body outside its schema is a breach, wherever it breaks it', async (t) => {
  const getCustomer = op('crmGetCustomer');
  const row = read.json();
  const check = (body: unknown) => watch.schemas.breach(getCustomer, 'GET', reply(body))?.message;
  t.equal(check(row), undefined, 'the row as read');
  const { name: _name, ...unnamed } = row;
  for (const [what, body, where] of [
    ['a required field missing', unnamed, '/'],
    ['a field the schema lacks', { ...row, secret: 'x' }, '/'],
    ['a uuid that is none', { ...row, id: 'not-a-uuid' }, '/id'],
    ['a date-time that is none', { ...row, createdAt: 'yesterday' }, '/createdAt'],
    ['a value outside its enum', { ...row, status: 'lost' }, '/status'],
    ['a number as a string', { ...row, version: '1' }, '/version'],
    ['null where none is allowed', { ...row, name: null }, '/name'],
  ] as const) {
    const breach = check(body);
    t.match(breach, `crmGetCustomer answered 200 outside its response schema at ${where}: `, what);
  }
});

t.test('a list with the same fault in two items is one breach, seen twice', async (t) => {
  const before = watch.breaches.size;
  const page = list.json();
  const bad = { ...page.items[0], id: 'x' };
  watch.see('GET', '/api/crm/customers?size=5', undefined, reply({ ...page, items: [bad, bad] }));
  watch.see('GET', '/api/crm/customers', undefined, reply({ ...page, items: [page.items[0], bad] }));
  t.equal(watch.breaches.size, before + 1);
  t.equal([...watch.breaches.values()].at(-1)!.count, 2);
  watch.breaches.clear();
});

t.test('media types, statuses and empty answers as documented', async (t) => {
  const b = (id: string, res: Reply, method = 'GET') => watch.schemas.breach(op(id), method, res)?.message;
  t.match(b('crmGetCustomer', { ...reply(read.json()), headers: { 'content-type': 'text/html' } }), 'as text/html, not application/json');
  t.match(b('crmGetCustomer', { ...reply(read.json()), body: '{"id":' }), 'that is not JSON');
  t.match(b('crmGetCustomer', reply(read.json(), { statusCode: 201 })), 'crmGetCustomer answered 201, a status it does not document');
  // a CSV is held to its media type only
  t.equal(b('biGetAnalyticsCsv', { statusCode: 200, headers: { 'content-type': 'text/csv; charset=utf-8' }, body: 'a,b\n1,2\n' }), undefined);
  t.match(b('biGetAnalyticsCsv', reply({ a: 1 })), 'as application/json, not text/csv');
  t.equal(b('crmDeleteCustomer', { statusCode: 204, headers: {}, body: '' }, 'DELETE'), undefined);
  t.match(b('crmDeleteCustomer', { statusCode: 204, headers: {}, body: '{}' }, 'DELETE'), 'with a body where the document promises none');
  // a HEAD answers its GET's headers without the body
  t.equal(b('crmGetCustomer', { ...reply(read.json()), body: '' }, 'HEAD'), undefined);
  t.equal(watch.schemas.operationOf('GET', '/api/translations/catalog?lang=de')?.id, 'coreGetTranslationCatalog', 'a literal segment before a parameter');
  t.equal(watch.schemas.operationOf('HEAD', `/api/translations/${made.json().id}`)?.id, 'coreGetTranslation');
  t.equal(watch.schemas.operationOf('GET', '/api/users/../companies')?.id, 'coreListCompanies', 'dot segments resolved as the server resolves them');
});
