// Input PostgreSQL cannot take answers 400 VALIDATION_FAILED naming the field,
// on every route (generated, custom, public) and in every part of a request:
// dates outside 0001..9999 or off the calendar, text with NUL or a lone surrogate.
import t, { type Test } from 'tap';
import { build } from '../../helper.ts';
import { apiAs, expectProblem, expectStatus } from '../../plugins/core/core-api.ts';
import { isDate, isDateTime } from '../../../core/http/date-formats.ts';
import { unstorableErrors } from '../../../core/http/input-guard.ts';

// a kernel and app of its own: it counts the validators the app compiles, which a shared app compiled before
const ctx = await build(t, { own: true });
const tenant = await ctx.tenant();
const api = apiAs(ctx, tenant.adminToken);
let seq = 0;
const product = (body: Record<string, unknown>) => api('POST', '/api/products', { sku: `G-${++seq}`, name: `Guarded ${seq}`, price: '1.00', ...body });

/** A 400 VALIDATION_FAILED problem whose errors name `path`. */
function expectInvalid(t: Test, res: Awaited<ReturnType<typeof api>>, path: string, what: string) {
  expectProblem(t, res, 400, 'VALIDATION_FAILED', what);
  t.ok(
    res.json().errors?.some((e: { path: string }) => e.path === path),
    `${what}: errors name ${path}: ${res.body}`,
  );
}

t.test('date formats accept exactly the values PostgreSQL and Date round-trip', async (t) => {
  for (const s of ['0001-01-01', '9999-12-31', '2024-02-29', '2000-02-29']) t.ok(isDate(s), s);
  for (const s of ['0000-01-01', '0000-12-31', '10000-01-01', '2023-02-29', '1900-02-29', '2024-04-31', '2024-13-01', '2024-00-10', '2024-1-01', '2024-01-01T00:00:00Z']) t.notOk(isDate(s), s);
  for (const s of [
    '0001-01-01T00:00:00Z',
    '0001-01-01T00:30:00-01:00',
    '9999-12-31T23:59:59.999Z',
    '9999-12-31T23:59:59.9990Z',
    '9999-12-31T23:30:00+01:00',
    '2020-01-01t00:00:00z',
    '2020-01-01 12:00:00.123456+15:59',
    '2020-06-30T23:59:59-12:00',
  ])
    t.ok(isDateTime(s), s);
  for (const s of [
    '0000-01-01T00:00:00Z',
    '0001-01-01T00:30:00+01:00',
    '9999-12-31T23:59:59.9991Z',
    '9999-12-31T23:30:00-01:00',
    '2020-01-01T23:59:60Z',
    '2020-01-01T24:00:00Z',
    '2020-01-01T00:60:00Z',
    '2020-01-01T00:00:00',
    '2020-01-01T00:00Z',
    '2020-01-01T00:00:00+16:00',
    '2020-01-01T00:00:00+01:60',
    '2023-02-29T00:00:00Z',
    '+010000-01-01T00:00:00.000Z',
  ])
    t.notOk(isDateTime(s), s);
  // every instant Date can write in range is accepted
  const lo = Date.parse('0001-01-01T00:00:00Z');
  const hi = Date.parse('9999-12-31T23:59:59.999Z');
  for (let i = 0; i <= 1000; i++) {
    const iso = new Date(lo + Math.floor((hi - lo) * (i / 1000))).toISOString();
    if (!isDateTime(iso) || !isDate(iso.slice(0, 10))) t.fail(`refused ${iso}`);
  }
});

t.test('bodies: dates outside the range are 400 naming the field, the bounds themselves are stored and read back', async (t) => {
  for (const [field, value] of [
    ['availableFrom', '0000-01-01'],
    ['availableFrom', '2023-02-29'],
    ['availableFrom', '10000-01-01'],
    ['discontinuedAt', '0000-01-01T00:00:00Z'],
    ['discontinuedAt', '0001-01-01T00:30:00+01:00'],
    ['discontinuedAt', '9999-12-31T23:30:00-01:00'],
    ['discontinuedAt', '2020-01-01T23:59:60Z'],
    ['discontinuedAt', '2020-01-01T00:00:00+16:00'],
  ]) {
    expectInvalid(t, await product({ [field]: value }), `/${field}`, `${field} ${value}`);
  }
  const low = expectStatus(await product({ availableFrom: '0001-01-01', discontinuedAt: '0001-01-01T00:00:00Z' }), 201, 'lowest');
  t.match(low, { availableFrom: '0001-01-01', discontinuedAt: '0001-01-01T00:00:00.000Z' });
  const high = expectStatus(await product({ availableFrom: '9999-12-31', discontinuedAt: '9999-12-31T23:59:59.999Z' }), 201, 'highest');
  t.match(high, { availableFrom: '9999-12-31', discontinuedAt: '9999-12-31T23:59:59.999Z' });
  const shifted = expectStatus(await product({ discontinuedAt: '0001-01-01T00:30:00-01:00' }), 201, 'offset inside the range');
  t.equal(shifted.discontinuedAt, '0001-01-01T01:30:00.000Z');
  t.same(expectStatus(await api('GET', `/api/products/${high.id}`), 200, 'read').discontinuedAt, '9999-12-31T23:59:59.999Z');

  const lead = expectStatus(await api('POST', '/api/crm/leads', { title: 'Lead', companyName: 'Prospect', lastName: 'Doe' }), 201, 'lead');
  expectInvalid(t, await api('POST', `/api/crm/leads/${lead.id}/convert`, { opportunity: { expectedCloseDate: '0000-01-01' } }), '/opportunity/expectedCloseDate', 'a custom route');
});

t.test('query filters and their ranges: dates outside the range are 400 naming the parameter', async (t) => {
  const cases: [string, string][] = [
    ['/api/products', 'availableFrom'],
    ['/api/products', 'availableFromFrom'],
    ['/api/products', 'availableFromTo'],
    ['/api/crm/quotes', 'issueDate'],
    ['/api/crm/quotes', 'issueDateFrom'],
    ['/api/crm/quotes', 'validUntilTo'],
    ['/api/crm/opportunities', 'expectedCloseDateFrom'],
    ['/api/crm/activities', 'dueDate'],
  ];
  for (const [url, param] of cases) {
    expectInvalid(t, await api('GET', `${url}?${param}=0000-01-01`), `/${param}`, `${url} ${param}`);
    expectStatus(await api('GET', `${url}?${param}=0001-01-01`), 200, `${url} ${param} lowest`);
    expectStatus(await api('GET', `${url}?${param}=9999-12-31`), 200, `${url} ${param} highest`);
  }
  for (const param of ['at', 'atFrom', 'atTo']) {
    for (const value of ['0000-01-01T00:00:00Z', '0001-01-01T00:30:00+01:00', '9999-12-31T23:30:00-01:00', '2020-01-01T00:00:00+16:00']) {
      expectInvalid(t, await api('GET', `/api/crm/activity-logs?${param}=${encodeURIComponent(value)}`), `/${param}`, `${param} ${value}`);
    }
    expectStatus(await api('GET', `/api/crm/activity-logs?${param}=0001-01-01T00:00:00Z`), 200, `${param} lowest`);
    expectStatus(await api('GET', `/api/crm/activity-logs?${param}=9999-12-31T23:59:59.999Z`), 200, `${param} highest`);
  }
  expectInvalid(t, await api('GET', '/api/crm/leads?convertedAtFrom=0000-01-01T00:00:00Z'), '/convertedAtFrom', 'a lead filter');
});

t.test('NUL and lone surrogates are refused in every body, public routes first of all', async (t) => {
  const login = (payload: string) => ctx.app.inject({ method: 'POST', url: '/api/auth/login', headers: { 'content-type': 'application/json' }, payload });
  expectInvalid(t, await login(`{"tenant":"${tenant.id}","email":"a\\u0000b","password":"x"}`), '/email', 'login NUL');
  expectInvalid(t, await login(`{"tenant":"${tenant.id}","email":"a\\ud800","password":"x"}`), '/email', 'login lone surrogate');
  expectInvalid(t, await login(`{"tenant":"${tenant.id}\\u0000","email":"a@b.c","password":"x"}`), '/tenant', 'login tenant');

  const lead = expectStatus(await api('POST', '/api/crm/leads', { title: 'Lead', companyName: 'Prospect', lastName: 'Doe' }), 201, 'lead');
  expectInvalid(t, await api('POST', `/api/crm/leads/${lead.id}/convert`, { customer: { name: 'a\u0000b' } }), '/customer/name', 'a custom route');
  expectInvalid(t, await product({ attributes: { 'a/b\u0000': 1 } }), '/attributes/a~1b\u0000', 'a key, as a JSON pointer');
  expectInvalid(t, await product({ name: 'x', unknownField: '\udc00' }), '/unknownField', 'before schema validation');
  expectInvalid(
    t,
    await api('POST', '/api/products', `{"sku":"D-1","name":"x","price":"1.00","attributes":${'['.repeat(40)}${']'.repeat(40)}}`),
    `/attributes${'/0'.repeat(32)}`,
    'arrays nested too deep',
  );
  expectStatus(await product({ name: 'Grüße 😀 \u{10ffff}', attributes: { '😀': ['e\u0301'] } }), 201, 'surrogate pairs are characters');
  t.equal(expectStatus(await api('GET', `/api/products?search=Guarded`), 200, 'list').total, 3, 'nothing refused was stored');
});

t.test('NUL in query strings and path parameters is 400 naming the parameter', async (t) => {
  expectInvalid(t, await ctx.app.inject({ method: 'GET', url: '/health/live?x=a%00b' }), '/x', 'a route without a query schema');
  expectInvalid(t, await api('GET', '/api/products?search=a%00b'), '/search', 'a list search');
  expectInvalid(t, await api('GET', '/api/products?sku=a&sku=b%00'), '/sku/1', 'a repeated parameter');
  expectInvalid(t, await api('GET', '/api/products?a%00=1'), '/a\u0000', 'a parameter name');
  expectInvalid(t, await api('GET', '/api/products/a%00b'), '/id', 'a path parameter');
  expectInvalid(t, await api('GET', `/api/crm/customers/a%00/contacts`), '/customerId', 'a nested path parameter');
});

t.test('a path that has no such route is 404 or 405, whatever the request carries', async (t) => {
  expectProblem(t, await ctx.app.inject({ method: 'GET', url: '/nowhere?x=%00' }), 404, 'NOT_FOUND', 'no route');
  expectProblem(t, await ctx.app.inject({ method: 'POST', url: '/nowhere', payload: { a: '\u0000' } }), 404, 'NOT_FOUND', 'no route, a body');
  const wrong = await api('PUT', '/api/products?x=%00', { a: '\u0000' });
  expectProblem(t, wrong, 405, 'METHOD_NOT_ALLOWED', 'no such method');
  t.equal(wrong.headers.allow, 'GET, POST');
});

t.test('the walk stops at ten errors and at depth 32', async (t) => {
  t.equal(unstorableErrors(Array.from({ length: 50 }, () => '\u0000')).length, 10);
  let deep: unknown = 'leaf';
  for (let i = 0; i < 100_000; i++) deep = [deep];
  t.match(unstorableErrors(deep), [{ message: /deeper than 32/ }]);
  t.same(unstorableErrors({ a: ['x', 1, null, true, { b: 'é😀' }] }), []);
});

t.test('validators compile on first use; the server compiles the rest once it listens, and they validate the same', async (t) => {
  const before = await ctx.app.compilePendingValidators();
  t.ok(before > 100, `every route's schemas were still pending but those requests used (${before})`);
  t.equal(await ctx.app.compilePendingValidators(), 0, 'none is left');
  expectInvalid(t, await product({ price: 5 }), '/price', 'a validator compiled in the background still refuses a wrong type');
  t.ok(expectStatus(await product({}), 201, 'a good body').id, 'and accepts a good body');
});
