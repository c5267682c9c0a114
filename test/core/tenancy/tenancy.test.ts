// Tenants never see each other's rows, companies of one tenant never see each
// other's company-scoped rows, and the tenant a request works on comes from the
// token alone.
import t from 'tap';
import { build, onPglite, uniqueId, type TestContext } from '../../helper.ts';

const createProduct = (ctx: TestContext, token: string, sku: string, headers: Record<string, string> = {}) =>
  ctx.as(token, { method: 'POST', url: '/api/products', headers, payload: { sku, name: `Product ${sku}`, price: '10.00' } });
const skus = async (ctx: TestContext, token: string, headers: Record<string, string> = {}) => {
  const res = await ctx.as(token, { method: 'GET', url: '/api/products?size=1000', headers });
  if (res.statusCode !== 200) throw new Error(res.body);
  return (res.json().items as { sku: string }[]).map((p) => p.sku).sort();
};

t.test("two tenants never see each other's rows", async (t) => {
  const ctx = await build(t);
  const [a, b] = await Promise.all([ctx.tenant(), ctx.tenant()]);
  t.not(a.schema, b.schema, 'one schema each');
  const pa = await createProduct(ctx, a.adminToken, 'A-1');
  const pb = await createProduct(ctx, b.adminToken, 'B-1');
  t.equal(pa.statusCode, 201, pa.body);
  t.equal(pb.statusCode, 201, pb.body);
  t.equal((await createProduct(ctx, b.adminToken, 'A-1')).statusCode, 201, 'a unique value is unique per tenant only');
  t.same(await skus(ctx, a.adminToken), ['A-1']);
  t.same(await skus(ctx, b.adminToken), ['A-1', 'B-1']);

  const foreign = pb.headers.location as string;
  for (const [method, payload] of [['GET'], ['PATCH', { name: 'stolen' }], ['DELETE']] as const) {
    const res = await ctx.as(a.adminToken, { method, url: foreign, ...(payload ? { payload } : {}) });
    t.equal(res.statusCode, 404, `${method} of another tenant's row`);
    t.equal(res.json().code, 'NOT_FOUND');
  }
  const still = await ctx.as(b.adminToken, { method: 'GET', url: foreign });
  t.equal(still.json().name, 'Product B-1', 'untouched');

  const foreignCompany = await ctx.as(a.adminToken, { method: 'GET', url: '/api/products', headers: { 'x-company-id': b.companyId } });
  t.equal(foreignCompany.statusCode, 403, "another tenant's company");
  t.equal(foreignCompany.json().code, 'COMPANY_FORBIDDEN');
});

t.test("companies of one tenant never see each other's rows", async (t) => {
  const ctx = await build(t);
  const tenant = await ctx.tenant();
  const user = await ctx.user(tenant, { codes: ['erp:catalog:manage'] });
  const second = await ctx.company(tenant, uniqueId('C'), [user.id]);
  const { accessToken } = (await ctx.login(tenant.id, user.email, 'correct horse battery staple')).json();
  t.equal((await createProduct(ctx, accessToken, 'HQ-1')).statusCode, 201);
  const inSecond = await createProduct(ctx, accessToken, 'C2-1', { 'x-company-id': second });
  t.equal(inSecond.statusCode, 201, inSecond.body);
  t.equal(inSecond.json().companyId, second);
  t.same(await skus(ctx, accessToken), ['HQ-1']);
  t.same(await skus(ctx, accessToken, { 'x-company-id': second }), ['C2-1']);
  const cross = await ctx.as(accessToken, { method: 'GET', url: inSecond.headers.location as string });
  t.equal(cross.statusCode, 404, 'not from the primary company');
  const forged = await ctx.as(accessToken, { method: 'POST', url: '/api/products', payload: { sku: 'X-1', name: 'X', price: '1.00', companyId: second } });
  t.equal(forged.statusCode, 400, 'companyId never comes from a body');
});

t.test('a token names its tenant; nothing in the request can switch it', async (t) => {
  const ctx = await build(t);
  const [a, b] = await Promise.all([ctx.tenant(), ctx.tenant()]);
  await createProduct(ctx, b.adminToken, 'B-ONLY');
  const attempts: Record<string, string>[] = [{ 'x-tenant-id': b.id }, { 'x-tenant': b.id }, { host: `${b.id}.example.test` }];
  for (const headers of attempts) {
    t.same(await skus(ctx, a.adminToken, headers), [], JSON.stringify(headers));
  }
  const query = await ctx.as(a.adminToken, { method: 'GET', url: `/api/products?tenant=${b.id}` });
  t.equal(query.statusCode, 400, 'an unknown query parameter');
});

t.test('a suspension reaches every process at once', { skip: onPglite && 'needs two processes on one server database' }, async (t) => {
  const one = await build(t);
  const two = await build(t);
  const tenant = await one.tenant();
  const me = (ctx: TestContext) => ctx.as(tenant.adminToken, { method: 'GET', url: '/api/auth/me' });
  t.equal((await me(two)).statusCode, 200, 'the second process serves the tenant');
  await one.kernel.tenants.setStatus(tenant.id, 'suspended');
  t.equal((await me(one)).json().code, 'TENANT_UNAVAILABLE', 'in the process that suspended it');
  t.test('in another process, as soon as the notification arrives', async (t) => {
    // NOTIFY is delivered asynchronously: give it a moment, never more than a second
    let res = await me(two);
    for (let i = 0; i < 20 && res.statusCode === 200; i++) {
      await new Promise((r) => setTimeout(r, 50));
      res = await me(two);
    }
    t.equal(res.statusCode, 403);
    t.equal(res.json().code, 'TENANT_UNAVAILABLE');
  });
});
