// Error messages a person understands: one entry per fault (not one per schema
// branch of a nullable field), decimals described by their places and digits,
// every fault of a body in one answer, and unique clashes naming their field.
import t from 'tap';
import { Ajv } from 'ajv';
import { build, PASSWORD } from '../../helper.ts';
import { fieldErrors, MAX_FIELD_ERRORS } from '../../../core/http/validation-messages.ts';
import { crmApi, expectProblem, expectStatus } from '../../plugins/crm/crm-api.ts';
import { catalogApi } from '../../plugins/catalog/catalog-api.ts';

const ctx = await build(t);
const tenant = await ctx.tenant();
const { api } = catalogApi(ctx, tenant.adminToken);
const crm = crmApi(ctx, tenant.adminToken);

type Entry = { path: string; message: string };
const errorsOf = (res: { json(): { errors?: Entry[] } }) => res.json().errors ?? [];

t.test('a nullable field that is wrong says so once', async (t) => {
  const lead = { title: 'L', companyName: 'Acme', lastName: 'Doe' };
  for (const [what, value, says] of [
    ['too many places', '10.005', /at most 2 places/],
    ['a number, not a string', 12.5, /written as a string/],
    ['too many digits', '1234567890123.00', /at most 12 digits before the point/],
    ['negative', '-1.00', /non-negative/],
  ] as const) {
    const res = await crm.api('POST', '/api/crm/leads', { ...lead, estimatedValue: value });
    expectProblem(t, res, 400, 'VALIDATION_FAILED', what);
    const errors = errorsOf(res);
    t.equal(errors.length, 1, `${what}: one entry, not one per anyOf branch (${JSON.stringify(errors)})`);
    t.equal(errors[0]?.path, '/estimatedValue');
    t.match(errors[0]?.message, says, what);
    t.notMatch(errors[0]?.message, /anyOf|null|\^|\\d/, `${what}: no schema talk, no regex`);
  }
  expectStatus(await crm.api('POST', '/api/crm/leads', { ...lead, estimatedValue: null }), 201, 'null is fine');

  const ref = await api('POST', '/api/products', { sku: 'N-1', name: 'n', price: '1.00', categoryId: 'not-a-uuid' });
  t.same(errorsOf(ref), [{ path: '/categoryId', message: 'must be a UUID' }], 'a nullable ref');
  const wrongType = await api('POST', '/api/products', { sku: 'N-1', name: 'n', price: '1.00', categoryId: 7 });
  t.same(errorsOf(wrongType), [{ path: '/categoryId', message: 'must be a UUID' }], 'a nullable ref sent as a number');
  const unit = await api('POST', '/api/products', { sku: 'N-1', name: 'n', price: '1.00', unit: 5 });
  t.same(errorsOf(unit), [{ path: '/unit', message: 'must be one of "piece", "kg", "litre", "metre", "hour"' }], 'an enum lists its values once');
});

t.test('a required decimal names its places and digits, not its pattern', async (t) => {
  const res = await api('POST', '/api/products', { sku: 'D-1', name: 'd', price: '1.234' });
  expectProblem(t, res, 400, 'VALIDATION_FAILED');
  t.same(errorsOf(res), [{ path: '/price', message: 'must be a non-negative decimal with at most 2 places and at most 10 digits before the point, written as a string such as "12.50"' }]);
  t.match(res.json().detail, /^invalid body: \/price must be a non-negative decimal with at most 2 places/);
  const quote = await crm.quote({ customerId: (await crm.customer()).id });
  const qty = await crm.api('POST', `/api/crm/quotes/${quote.id}/lines`, { description: 'x', quantity: '1.23456', unitPrice: '1.00' });
  t.match(errorsOf(qty), [{ path: '/quantity', message: /at most 3 places and at most 9 digits before the point/ }], 'a scale of 3');
});

t.test('every fault of a body in one answer, deduplicated and capped', async (t) => {
  const res = await api('POST', '/api/products', { name: 7, price: 'cheap', stock: -1, availableFrom: '2026-13-01', bogus: true });
  expectProblem(t, res, 400, 'VALIDATION_FAILED');
  const byPath = Object.fromEntries(errorsOf(res).map((e) => [e.path, e.message]));
  t.same(Object.keys(byPath).sort(), ['/availableFrom', '/bogus', '/name', '/price', '/sku', '/stock'], 'each fault, each once');
  t.match(byPath, { '/sku': 'is required', '/bogus': 'is not a known field', '/stock': 'must be at least 0', '/availableFrom': /a date as YYYY-MM-DD/ });

  const many = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`extra${i}`, i]));
  const capped = await api('POST', '/api/products', { sku: 'C-1', name: 'c', price: '1.00', ...many });
  expectProblem(t, capped, 400, 'VALIDATION_FAILED');
  t.equal(errorsOf(capped).length, MAX_FIELD_ERRORS, 'at most the cap');
  t.match(capped.json().detail, /\(and 10 more\)$/, 'the detail counts the rest');

  const empty = await api('PATCH', `/api/products/${expectStatus(await api('POST', '/api/products', { sku: 'E-1', name: 'e', price: '1.00' }), 201, 'product').id}`, {});
  t.same(errorsOf(empty), [{ path: '/', message: 'must name at least one field' }], 'an empty PATCH');
});

t.test('fieldErrors: branch noise dropped, duplicates merged, other anyOf described', async (t) => {
  const ajv = new Ajv({ allErrors: true, verbose: true, strict: false });
  const nullable = ajv.compile({ type: 'object', properties: { a: { anyOf: [{ type: 'string', maxLength: 2 }, { type: 'null' }] } } });
  nullable({ a: 'long' });
  t.same(fieldErrors(nullable.errors!).errors, [{ path: '/a', message: 'must be at most 2 characters long' }]);
  const either = ajv.compile({ anyOf: [{ type: 'string' }, { type: 'integer' }] });
  either(true);
  t.same(fieldErrors(either.errors!).errors, [{ path: '/', message: 'must be a string or a whole number' }], 'two type branches merge into one');
  const twice = [...nullable.errors!, ...nullable.errors!];
  t.equal(fieldErrors(twice).errors.length, 1, 'the same fault twice is listed once');
  const list = ajv.compile({ type: 'array', items: { type: 'integer' } });
  list(['a', 'b', 'c']);
  t.same(fieldErrors(list.errors!, 2), {
    errors: [
      { path: '/0', message: 'must be a whole number' },
      { path: '/1', message: 'must be a whole number' },
    ],
    more: 1,
  });
});

t.test('a unique clash is a 409 naming the field', async (t) => {
  expectStatus(await api('POST', '/api/products', { sku: 'U-1', name: 'u', price: '1.00' }), 201, 'first');
  const clash = await api('POST', '/api/products', { sku: 'U-1', name: 'u2', price: '1.00' });
  expectProblem(t, clash, 409, 'CONFLICT');
  t.same(errorsOf(clash), [{ path: '/sku', message: 'is already used by another row' }]);
  t.match(clash.json().detail, /sku/);
  t.notMatch(clash.body, /U-1|company_id|Key \(/, 'neither the value nor the column list leaks');

  const other = expectStatus(await api('POST', '/api/products', { sku: 'U-2', name: 'u', price: '1.00' }), 201, 'second');
  const patch = await api('PATCH', `/api/products/${other.id}`, { sku: 'U-1' });
  expectProblem(t, patch, 409, 'CONFLICT', 'PATCH');
  t.same(
    errorsOf(patch).map((e) => e.path),
    ['/sku'],
    'PATCH names it too',
  );

  // a key of two fields names both
  const group = expectStatus(await api('POST', '/api/groups', { name: 'g' }), 201, 'group');
  const me = expectStatus(await api('GET', '/api/auth/me'), 200, 'me');
  expectStatus(await api('POST', '/api/group-members', { groupId: group.id, userId: me.id }), 201, 'member');
  const again = await api('POST', '/api/group-members', { groupId: group.id, userId: me.id });
  expectProblem(t, again, 409, 'CONFLICT', 'twice a member');
  t.same(
    errorsOf(again).map((e) => e.path),
    ['/groupId', '/userId'],
  );
});

t.test('other tenants and companies hold their own keys; a missing permission is a 403 first', async (t) => {
  const other = await ctx.tenant();
  const res = await ctx.as(other.adminToken, { method: 'POST', url: '/api/products', payload: { sku: 'U-1', name: 'x', price: '1.00' } });
  t.equal(res.statusCode, 201, 'the same SKU in another tenant is no clash');
  // another company of the tenant may use the same SKU: the company is the scope, not the clash
  const me = expectStatus(await api('GET', '/api/auth/me'), 200, 'me');
  const second = await ctx.company(tenant, 'C2', [me.id]);
  const token = (await ctx.login(tenant.id, tenant.adminEmail, PASSWORD)).json().accessToken as string;
  const there = await ctx.as(token, { method: 'POST', url: '/api/products', headers: { 'x-company-id': second }, payload: { sku: 'U-1', name: 'x', price: '1.00' } });
  t.equal(there.statusCode, 201, 'the same SKU in another company is no clash');
  const viewer = await ctx.user(tenant, { codes: ['erp:catalog:view'] });
  const denied = await ctx.as(viewer.token, { method: 'POST', url: '/api/products', payload: { sku: 'U-1', name: 'x', price: '1.00' } });
  t.equal(denied.statusCode, 403, 'no permission: 403 before any clash');
});
