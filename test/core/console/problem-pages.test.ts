// The API's real problem answers, in words: bad product bodies, a unique clash,
// a stale edit and a missing row, as the API answers them, each become
// sentences naming the fields by the labels GET /api/meta gives, with no route,
// method, validator phrase, SQL or code. And the console's pages showing them.

import t, { type Test } from 'tap';
import { build, PASSWORD } from '../../helper.ts';
import { ConsoleSession } from '../../support/console-session.ts';
import type { Problem } from '../../../core/console/api-client.ts';
import type { MetaEntity } from '../../../core/console/fields.ts';
import { formProblem, labelsOf, problemAlert } from '../../../core/console/problem-texts.ts';
import { CONSOLE_TEXTS, sayFrom } from '../../../core/console/texts.ts';

const ctx = await build(t);
const tenant = await ctx.tenant();
const say = sayFrom();
const api = (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: unknown, headers: Record<string, string> = {}) =>
  ctx.as(tenant.adminToken, { method, url, headers, ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }) });
const meta = (await api('GET', '/api/meta')).json() as { entities: MetaEntity[] };
const product = meta.entities.find((e) => e.name === 'Product')!;
const labelOf = labelsOf(product.fields);
const label = (field: string) => product.fields.find((f) => f.name === field)!.label;

const FORBIDDEN = ['/api/', 'POST', 'GET', 'PATCH', 'must ', 'SQL', 'additional properties', 'constraint', 'VALIDATION_FAILED', 'CONFLICT', '{', '}'];
function clean(t: Test, texts: string[]) {
  for (const text of texts) for (const bad of FORBIDDEN) t.notOk(text.includes(bad), `"${text}" holds no "${bad}"`);
}

/** The form's view of the API's answer to a product body. */
async function refused(t: Test, body: Record<string, unknown>, status = 400) {
  const res = await api('POST', '/api/products', body);
  t.equal(res.statusCode, status, JSON.stringify(body));
  const problem = res.json() as Problem;
  const { alert, byField } = formProblem(problem, say, labelOf);
  clean(t, [alert!.title, ...(alert!.detail ? [alert!.detail] : []), ...alert!.items, ...[...byField.values()].flat()]);
  return { problem, alert: alert!, byField };
}

const valid = { sku: 'SKU-1', name: 'Spade', price: '12.50', currency: 'EUR' };

t.test("the API's validation faults become sentences beside their fields", async (t) => {
  const { alert, byField } = await refused(t, {
    sku: 'x'.repeat(65),
    name: 5,
    price: '1.234',
    currency: 'EUR',
    unit: 'bag',
    stock: 1.5,
    categoryId: 'nope',
    availableFrom: '2026-02-30',
    bogus: true,
  });
  t.equal(alert.title, CONSOLE_TEXTS['problem.VALIDATION_FAILED']);
  t.same(alert.items, ['One value cannot be set here.'], 'the unknown field, in the alert');
  const only = (field: string) => byField.get(field)?.join(' ') ?? '';
  t.equal(only('sku'), `${label('sku')} can have at most 64 characters.`);
  t.equal(only('name'), `Enter text for ${label('name')}.`);
  t.match(only('price'), new RegExp(`^Enter a number of zero or more for ${label('price')}, with at most 10 digits before the point and 2 after it\\.$`));
  t.equal(only('unit'), `Choose one of the offered values for ${label('unit')}.`);
  t.equal(only('stock'), `Enter a whole number for ${label('stock')}.`);
  t.equal(only('categoryId'), `Choose a valid entry for ${label('categoryId')}.`);
  t.equal(only('availableFrom'), `Enter a valid date for ${label('availableFrom')}.`);
});

t.test('required fields left out', async (t) => {
  const noSku = await refused(t, { name: 'Hoe', price: '1', currency: 'EUR' });
  t.same(noSku.byField.get('sku'), [`${label('sku')} is required.`]);
  const noName = await refused(t, { sku: 'SKU-R', price: '1', currency: 'EUR' });
  t.same(noName.byField.get('name'), [`Fill in ${label('name')} in at least one language.`], 'a translatable one');
});

t.test('a unique value used twice is a conflict beside its field', async (t) => {
  t.equal((await api('POST', '/api/products', valid)).statusCode, 201);
  const { alert, byField } = await refused(t, { ...valid, name: 'Another spade' }, 409);
  t.same(byField.get('sku'), [`${label('sku')} is already used by another record. Choose another value.`]);
  t.equal(alert.title, CONSOLE_TEXTS['problem.CONFLICT.unique']);
});

t.test('a stale edit and a missing row', async (t) => {
  const created = (await api('POST', '/api/products', { ...valid, sku: 'SKU-2' })).json() as { id: string; version: number };
  t.equal((await api('PATCH', `/api/products/${created.id}`, { name: 'First' }, { 'if-match': `"${created.version}"` })).statusCode, 200);
  const stale = await api('PATCH', `/api/products/${created.id}`, { name: 'Second' }, { 'if-match': `"${created.version}"` });
  t.equal(stale.statusCode, 412);
  const staleAlert = problemAlert(stale.json() as Problem, say, labelOf);
  t.equal(staleAlert.title, CONSOLE_TEXTS['problem.PRECONDITION_FAILED']);
  const missing = await api('GET', '/api/products/00000000-0000-4000-8000-000000000000');
  t.equal(missing.statusCode, 404);
  const missingAlert = problemAlert(missing.json() as Problem, say, labelOf);
  t.same(missingAlert, { title: CONSOLE_TEXTS['problem.NOT_FOUND'], items: [] }, 'the API detail (an id) is not shown');
  const noRoute = problemAlert((await api('GET', '/api/no-such-thing')).json() as Problem, say);
  t.same(noRoute, { title: CONSOLE_TEXTS['problem.NOT_FOUND'], items: [] }, 'nor a route');
  clean(t, [staleAlert.title, missingAlert.title]);
});

/** The page's alert, as a screen reader announces it. */
const alertOf = (html: string) => /<div class="alert" role="alert"[^>]*>([\s\S]*?)<\/div>/.exec(html)?.[1] ?? '';

t.test('the console pages show the sentences', async (t) => {
  const s = new ConsoleSession(ctx.app);
  t.equal((await s.login(tenant.id, tenant.adminEmail, PASSWORD)).statusCode, 303);
  await s.get('/catalog/products/new');
  const res = await s.post('/catalog/products', { sku: 'x'.repeat(65), name: 'Rake', price: '3', currency: 'EUR' });
  t.equal(res.statusCode, 400);
  t.match(res.body, new RegExp(`id="field-sku-error"[^>]*>${label('sku')} can have at most 64 characters\\.`));
  t.notMatch(res.body, /must be|characters long/);
  t.match(alertOf(res.body), CONSOLE_TEXTS['problem.VALIDATION_FAILED'], 'the alert says what went wrong');
  const missing = await s.get('/catalog/products/00000000-0000-4000-8000-000000000000');
  t.equal(missing.statusCode, 404);
  const shown = alertOf(missing.body);
  t.match(shown, CONSOLE_TEXTS['problem.NOT_FOUND']);
  t.notMatch(shown, /0000-4000|\/api\/|>Not found</, "not the API's title or detail");
});
