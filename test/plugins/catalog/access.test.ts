// Who may use the catalog routes: authentication, permission codes, the
// company context and isolation between companies and tenants.
import t from 'tap';
import { createSigner } from 'fast-jwt';
import { build, PASSWORD } from '../../helper.ts';
import { expectProblem, expectStatus, UNKNOWN_ID, type Method } from './catalog-api.ts';

const ctx = await build(t);
const tenant = await ctx.tenant();
const other = await ctx.tenant();
const admin = tenant.adminToken;

/** A request as `token`; null sends none. */
const call = (token: string | null, method: Method, url: string, payload?: object, headers: Record<string, string> = {}) =>
  ctx.app.inject({ method, url, headers: token === null ? headers : { authorization: `Bearer ${token}`, ...headers }, ...(payload ? { payload } : {}) });
let seq = 0;
const createProduct = async (token: string, headers: Record<string, string> = {}, body: Record<string, unknown> = {}) =>
  expectStatus(await call(token, 'POST', '/api/products', { sku: `A-${++seq}`, name: `access ${seq}`, price: '1.00', ...body }, headers), 201, 'create product');
const createCategory = async (token: string, headers: Record<string, string> = {}) =>
  expectStatus(await call(token, 'POST', '/api/categories', { name: `access ${++seq}` }, headers), 201, 'create category');
/**
 * ctx.user writes the role straight to the database, past the kernel's role
 * cache (30 s per tenant): forget it, or the new role holds no codes yet.
 */
const newUser = async (opts: Parameters<typeof ctx.user>[1]) => {
  const user = await ctx.user(tenant, opts);
  ctx.app.abilities.invalidate(tenant.id);
  return user;
};
const meOf = async (token: string) => expectStatus(await call(token, 'GET', '/api/auth/me'), 200, 'me');
const tokenOf = async (tenantId: string, email: string) => expectStatus(await ctx.login(tenantId, email, PASSWORD), 200, 'login').accessToken as string;

const product = await createProduct(admin);
const categoryRow = await createCategory(admin);

/** Every generated catalog route, for the row ids given. */
const routes = (productId: string, categoryId: string): [Method, string, object?][] => [
  ['GET', '/api/products'],
  ['GET', `/api/products/${productId}`],
  ['POST', '/api/products', { sku: `R-${++seq}`, name: 'x', price: '1.00' }],
  [
    'PUT',
    `/api/products/${productId}`,
    {
      sku: 'R-PUT',
      name: 'x',
      description: null,
      price: '1.00',
      currency: 'EUR',
      unit: 'piece',
      stock: 0,
      categoryId: null,
      isActive: true,
      availableFrom: null,
      discontinuedAt: null,
      attributes: null,
    },
  ],
  ['PATCH', `/api/products/${productId}`, { stock: 1 }],
  ['DELETE', `/api/products/${productId}`],
  ['GET', '/api/categories'],
  ['GET', `/api/categories/${categoryId}`],
  ['POST', '/api/categories', { name: 'x' }],
  ['PUT', `/api/categories/${categoryId}`, { name: 'x', description: null, parentId: null, isActive: true }],
  ['PATCH', `/api/categories/${categoryId}`, { isActive: false }],
  ['DELETE', `/api/categories/${categoryId}`],
];

t.test('authentication', async (t) => {
  const foreignSecret = createSigner({ key: 'another-secret-another-secret-0123456789', algorithm: 'HS256', iss: 'plinth', expiresIn: 60_000 });
  const claims = { sub: '01900000-0000-7000-8000-000000000001', tid: tenant.id, rol: ['admin'], cid: [tenant.companyId], pc: tenant.companyId };
  const expiredSigner = createSigner({ key: 'test-secret-test-secret-test-secret-0123456789', algorithm: 'HS256', iss: 'plinth', clockTimestamp: Date.now() - 3_600_000, expiresIn: 60_000 });
  const headers: [string, Record<string, string>][] = [
    ['no Authorization header', {}],
    ['a garbage bearer token', { authorization: 'Bearer garbage' }],
    ['a token of three garbage parts', { authorization: 'Bearer a.b.c' }],
    ['another scheme', { authorization: `Basic ${Buffer.from('admin:pw').toString('base64')}` }],
    ['a bare token', { authorization: admin }],
    ['a token signed with another key', { authorization: `Bearer ${foreignSecret(claims)}` }],
    ['an expired token', { authorization: `Bearer ${expiredSigner(claims)}` }],
    ['an unsigned token', { authorization: `Bearer ${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.` }],
  ];
  for (const [what, h] of headers) {
    t.test(`401 UNAUTHENTICATED with ${what}`, async (t) => {
      for (const [method, url, payload] of routes(product.id, categoryRow.id)) {
        const res = await ctx.app.inject({ method, url, headers: h, ...(payload ? { payload } : {}) });
        expectProblem(t, res, 401, 'UNAUTHENTICATED', `${method} ${url}`);
      }
    });
  }
  t.test('a token naming an unknown tenant is 401', async (t) => {
    const signer = createSigner({ key: 'test-secret-test-secret-test-secret-0123456789', algorithm: 'HS256', iss: 'plinth', expiresIn: 60_000 });
    expectProblem(t, await call(signer({ ...claims, tid: 'no-such-tenant' }), 'GET', '/api/products'), 401, 'UNAUTHENTICATED');
  });
});

t.test('permission codes', async (t) => {
  const viewer = await newUser({ codes: ['erp:catalog:view'] });
  const nobody = await newUser({ codes: [] });
  const unrelated = await newUser({ codes: ['core:dashboard:view'] });
  const manager = await newUser({ codes: ['erp:catalog:manage'] });

  t.test('erp:catalog:view may list and read, not write', async (t) => {
    for (const url of ['/api/products', `/api/products/${product.id}`, '/api/categories', `/api/categories/${categoryRow.id}`]) {
      t.equal((await call(viewer.token, 'GET', url)).statusCode, 200, url);
    }
    t.ok(expectStatus(await call(viewer.token, 'GET', '/api/products'), 200, 'list').items.some((p: { id: string }) => p.id === product.id));
    for (const [method, url, payload] of routes(product.id, categoryRow.id).filter(([m]) => m !== 'GET')) {
      expectProblem(t, await call(viewer.token, method, url, payload), 403, 'FORBIDDEN', `${method} ${url}`);
    }
    const read = expectStatus(await call(admin, 'GET', `/api/products/${product.id}`), 200, 'read');
    t.equal(read.version, product.version, 'nothing changed');
    t.equal((await call(admin, 'GET', `/api/categories/${categoryRow.id}`)).statusCode, 200, 'nothing deleted');
  });

  t.test('no codes, or only unrelated ones: 403 everywhere', async (t) => {
    for (const user of [nobody, unrelated]) {
      for (const [method, url, payload] of routes(product.id, categoryRow.id)) {
        expectProblem(t, await call(user.token, method, url, payload), 403, 'FORBIDDEN', `${method} ${url}`);
      }
    }
  });

  t.test('the permission check comes before validation and existence', async (t) => {
    expectProblem(t, await call(viewer.token, 'POST', '/api/products', { bogus: true }), 403, 'FORBIDDEN');
    expectProblem(t, await call(nobody.token, 'GET', `/api/products/${UNKNOWN_ID}`), 403, 'FORBIDDEN');
    expectProblem(t, await call(nobody.token, 'GET', '/api/products?colour=red'), 403, 'FORBIDDEN');
  });

  t.test('erp:catalog:manage may do everything', async (t) => {
    const p = await createProduct(manager.token);
    const c = await createCategory(manager.token);
    for (const [method, url, payload] of routes(p.id, c.id)) {
      const res = await call(manager.token, method, url, payload);
      t.ok([200, 201, 204].includes(res.statusCode), `${method} ${url}: ${res.statusCode} ${res.body}`);
    }
  });
});

t.test('company context', async (t) => {
  const companyB = await ctx.company(tenant, `B${++seq}`);
  const both = await newUser({ codes: ['erp:catalog:manage'], companies: [tenant.companyId, companyB] });
  const onlyA = await newUser({ codes: ['erp:catalog:manage'] });
  const inB = { 'x-company-id': companyB };
  const productB = await createProduct(both.token, inB, { sku: 'B-ONLY' });
  const categoryB = await createCategory(both.token, inB);
  t.equal(productB.companyId, companyB, 'the row belongs to the company of the request');

  t.test('X-Company-Id of a company the caller does not belong to is 403', async (t) => {
    const foreignCompany = other.companyId;
    for (const [method, url, payload] of routes(product.id, categoryRow.id)) {
      expectProblem(t, await call(onlyA.token, method, url, payload, inB), 403, 'COMPANY_FORBIDDEN', `${method} ${url}`);
      expectProblem(t, await call(admin, method, url, payload, { 'x-company-id': foreignCompany }), 403, 'COMPANY_FORBIDDEN', `another tenant's company: ${method} ${url}`);
    }
  });

  t.test('a malformed X-Company-Id is 400', async (t) => {
    for (const value of ['abc', `${companyB}x`, '', ' ', "'; drop table x; --"]) {
      expectProblem(t, await call(both.token, 'GET', '/api/products', undefined, { 'x-company-id': value }), 400, 'VALIDATION_FAILED', JSON.stringify(value));
    }
    const upper = await call(both.token, 'GET', `/api/products/${productB.id}`, undefined, { 'x-company-id': companyB.toUpperCase() });
    t.equal(upper.statusCode, 200, 'upper-case UUIDs name the same company');
  });

  t.test('a user of no company gets 403 on company data', async (t) => {
    const homeless = await newUser({ codes: ['erp:catalog:manage'], companies: [] });
    expectProblem(t, await call(homeless.token, 'GET', '/api/products'), 403, 'COMPANY_REQUIRED');
    expectProblem(t, await call(homeless.token, 'POST', '/api/products', { sku: 'H-1', name: 'x', price: '1.00' }), 403, 'COMPANY_REQUIRED');
  });

  t.test('rows of company B are invisible when working in company A', async (t) => {
    for (const token of [both.token, onlyA.token, admin]) {
      const listA = expectStatus(await call(token, 'GET', '/api/products?size=1000'), 200, 'list');
      t.notOk(
        listA.items.some((p: { companyId: string }) => p.companyId !== tenant.companyId),
        'only company A rows',
      );
      t.equal(listA.total, listA.items.length, 'total excludes B');
      t.equal(expectStatus(await call(token, 'GET', '/api/products?search=B-ONLY'), 200, 'search').total, 0);
      t.equal(expectStatus(await call(token, 'GET', `/api/categories?size=1000`), 200, 'list').items.filter((c: { id: string }) => c.id === categoryB.id).length, 0);
      expectProblem(t, await call(token, 'GET', `/api/products/${productB.id}`), 404, 'NOT_FOUND');
      expectProblem(t, await call(token, 'PATCH', `/api/products/${productB.id}`, { stock: 9 }), 404, 'NOT_FOUND');
      expectProblem(t, await call(token, 'PUT', `/api/categories/${categoryB.id}`, { name: 'x', description: null, parentId: null, isActive: true }), 404, 'NOT_FOUND');
      expectProblem(t, await call(token, 'DELETE', `/api/products/${productB.id}`), 404, 'NOT_FOUND');
      expectProblem(t, await call(token, 'DELETE', `/api/categories/${categoryB.id}`), 404, 'NOT_FOUND');
      expectProblem(t, await call(token, 'POST', '/api/products', { sku: `X-${++seq}`, name: 'x', price: '1.00', categoryId: categoryB.id }), 400, 'VALIDATION_FAILED', 'a category of company B');
      expectProblem(t, await call(token, 'PATCH', `/api/products/${product.id}`, { categoryId: categoryB.id }), 400, 'VALIDATION_FAILED', 'moving into a category of B');
      expectProblem(t, await call(token, 'POST', '/api/categories', { name: 'x', parentId: categoryB.id }), 400, 'VALIDATION_FAILED', 'a parent of company B');
    }
    const inBList = expectStatus(await call(both.token, 'GET', '/api/products?size=1000', undefined, inB), 200, 'list B');
    t.same(
      inBList.items.map((p: { id: string }) => p.id),
      [productB.id],
      'working in B shows only B',
    );
    t.equal(inBList.total, 1);
    expectProblem(t, await call(both.token, 'GET', `/api/products/${product.id}`, undefined, inB), 404, 'NOT_FOUND', 'A is invisible from B');
    t.equal(expectStatus(await call(both.token, 'GET', `/api/products/${productB.id}`, undefined, inB), 200, 'read in B').version, 1, 'B rows unchanged');
  });

  t.test('an admin switching X-Company-Id sees only the chosen company', async (t) => {
    const me = await meOf(admin);
    const companyC = await ctx.company(tenant, `C${++seq}`, [me.id]);
    const token = await tokenOf(tenant.id, tenant.adminEmail);
    const inC = { 'x-company-id': companyC };
    const productC = await createProduct(token, inC);
    const listC = expectStatus(await call(token, 'GET', '/api/products?size=1000', undefined, inC), 200, 'list C');
    t.same(
      listC.items.map((p: { id: string }) => p.id),
      [productC.id],
    );
    t.equal(listC.total, 1);
    expectProblem(t, await call(token, 'GET', `/api/products/${product.id}`, undefined, inC), 404, 'NOT_FOUND', 'A from C');
    expectProblem(t, await call(token, 'GET', `/api/products/${productB.id}`, undefined, inC), 404, 'NOT_FOUND', 'B from C (the admin is not in B)');
    expectProblem(t, await call(token, 'GET', `/api/products/${productB.id}`, undefined, inB), 403, 'COMPANY_FORBIDDEN');
    const listA = expectStatus(await call(token, 'GET', '/api/products?size=1000'), 200, 'list A');
    t.notOk(
      listA.items.some((p: { id: string }) => p.id === productC.id),
      'C rows invisible from A',
    );
    // the same SKU may exist once per company
    expectStatus(await call(token, 'POST', '/api/products', { sku: productC.sku, name: 'x', price: '1.00' }), 201, 'same sku in A');
    expectProblem(t, await call(token, 'POST', '/api/products', { sku: productC.sku, name: 'x', price: '1.00' }, inC), 409, 'CONFLICT');
  });
});

t.test('tenant isolation', async (t) => {
  const otherProduct = await createProduct(other.adminToken);
  const otherCategory = await createCategory(other.adminToken);
  t.test("another tenant's ids are unknown", async (t) => {
    for (const [method, url, payload] of routes(otherProduct.id, otherCategory.id).filter(([, u]) => u.split('/').length > 3)) {
      expectProblem(t, await call(admin, method, url, payload), 404, 'NOT_FOUND', `${method} ${url}`);
    }
    expectProblem(t, await call(admin, 'POST', '/api/products', { sku: `T-${++seq}`, name: 'x', price: '1.00', categoryId: otherCategory.id }), 400, 'VALIDATION_FAILED');
    t.equal(expectStatus(await call(admin, 'GET', `/api/products?search=${otherProduct.sku}`), 200, 'search').total, 0);
    t.equal(expectStatus(await call(other.adminToken, 'GET', `/api/products/${otherProduct.id}`), 200, 'still there').version, 1, 'untouched');
    t.equal(expectStatus(await call(other.adminToken, 'GET', `/api/categories/${otherCategory.id}`), 200, 'still there').version, 1, 'untouched');
  });
  t.test('the same SKU in another tenant is fine', async (t) => {
    const res = await call(other.adminToken, 'POST', '/api/products', { sku: product.sku, name: 'x', price: '1.00' });
    t.equal(res.statusCode, 201, res.body);
  });
});
