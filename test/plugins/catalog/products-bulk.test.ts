// POST /api/products/bulk: creates, updates and deletes in one transaction,
// all or nothing; a failure names every failed row with its own status and
// problem, and leaves no row and no event behind.
import t from 'tap';
import { build } from '../../helper.ts';
import { catalogApi, expectProblem, expectStatus, UNKNOWN_ID } from './catalog-api.ts';

const ctx = await build(t);
const tenant = await ctx.tenant();
const { api, product } = catalogApi(ctx, tenant.adminToken);
const bulk = (payload: unknown, token = tenant.adminToken) => ctx.as(token, { method: 'POST', url: '/api/products/bulk', payload: payload as object });
const read = async (id: string) => api('GET', `/api/products/${id}`);
const tt = ctx.kernel.tenants.cached(tenant.id)!;
const conn = ctx.kernel.dbs.get(tt.connectionKey).em.getConnection();
const events = async () => Number((await conn.execute(`select count(*)::int as n from "${ctx.kernel.config.registrySchema}".events where tenant_id = ?`, [tenant.id]))[0].n);
const count = async () => expectStatus(await api('GET', '/api/products?search=B-'), 200, 'count').total as number;

t.test('creates, updates and deletes in one request', async (t) => {
  const a = await product({ sku: 'B-A', price: '1.00' });
  const b = await product({ sku: 'B-B' });
  const before = await events();
  const res = await bulk({
    create: [
      { sku: 'B-1', name: 'One', price: '1.10' },
      { sku: 'B-2', name: 'Two', price: '2.20', unit: 'kg' },
    ],
    update: [{ id: a.id, version: 1, price: '3.30' }],
    delete: [{ id: b.id, version: 1 }],
  });
  const body = expectStatus(res, 200, 'bulk');
  t.same(
    body.created.map((p: { sku: string }) => p.sku),
    ['B-1', 'B-2'],
  );
  t.match(body.updated, [{ id: a.id, price: '3.30', version: 2 }]);
  t.same(body.deleted, [{ id: b.id }]);
  t.same(expectStatus(await read(body.created[1].id), 200, 'read created'), body.created[1], 'a created row reads as answered');
  t.equal((await read(b.id)).statusCode, 404, 'deleted');
  t.equal((await events()) - before, 4, 'one event per row, as single writes send');
});

t.test('any failed row: nothing written, every failure listed', async (t) => {
  const a = await product({ sku: 'B-C', price: '1.00' });
  const b = await product({ sku: 'B-D' });
  const rowsBefore = await count();
  const before = await events();
  const res = await bulk({
    create: [
      { sku: 'B-NEW', name: 'New', price: '1.00' },
      { sku: 'B-C', name: 'Duplicate SKU', price: '1.00' },
      { sku: 'B-NEW2', name: 'Bad category', price: '1.00', categoryId: UNKNOWN_ID },
    ],
    update: [
      { id: a.id, price: '9.99' },
      { id: b.id, version: 7, price: '1.00' },
      { id: UNKNOWN_ID, price: '1.00' },
    ],
    delete: [{ id: a.id, version: 2 }, { id: UNKNOWN_ID }],
  });
  expectProblem(t, res, 422, 'BULK_FAILED');
  const failures = res.json().failures as { op: string; index: number; id?: string; status: number; problem: { code: string } }[];
  t.same(
    failures.map((f) => [f.op, f.index, f.status, f.problem.code]),
    [
      ['create', 1, 409, 'CONFLICT'],
      ['create', 2, 400, 'VALIDATION_FAILED'],
      ['update', 1, 412, 'PRECONDITION_FAILED'],
      ['update', 2, 404, 'NOT_FOUND'],
      ['delete', 1, 404, 'NOT_FOUND'],
    ],
    'each failed row with its own status, the rows after a database error ran too',
  );
  t.equal(failures[2].id, b.id);
  t.equal(await count(), rowsBefore, 'no row created or deleted');
  t.match(expectStatus(await read(a.id), 200, 'read a'), { price: '1.00', version: 1 }, 'the update that worked was rolled back');
  t.equal(await events(), before, 'no event left behind');
  t.equal(expectStatus(await api('GET', '/api/products?search=B-NEW'), 200, 'search').total, 0, 'the created rows are gone');
});

t.test('bad bodies are a 400 naming the row', async (t) => {
  const a = await product({ sku: 'B-E' });
  const rowsBefore = await count();
  for (const [payload, path] of [
    [
      {
        create: [
          { sku: 'B-X', name: 'x', price: '1.00' },
          { sku: 'B-Y', name: 'y', price: 'abc' },
        ],
      },
      '/create/1/price',
    ],
    [{ create: [{ sku: 'B-X', name: 'x', price: '1.00', bogus: 1 }] }, '/create/0/bogus'],
    [{ update: [{ price: '1.00' }] }, '/update/0/id'],
    [{ update: [{ id: a.id, version: 'x' }] }, '/update/0/version'],
    [{ update: [{ id: a.id, sku: 5 }] }, '/update/0/sku'],
    [{ delete: [{ id: 'nope' }] }, '/delete/0/id'],
    [{ delete: [{ id: a.id, name: 'x' }] }, '/delete/0/name'],
    [{ upsert: [] }, '/upsert'],
    [{}, '/'],
    [{ create: [] }, '/'],
    [{ delete: Array.from({ length: 101 }, () => ({ id: UNKNOWN_ID })) }, '/delete'],
    [{ create: Array.from({ length: 60 }, (_, i) => ({ sku: `B-M${i}`, name: 'm', price: '1.00' })), delete: Array.from({ length: 41 }, () => ({ id: UNKNOWN_ID })) }, '/'],
    [[], '/'],
  ] as const) {
    const res = await bulk(payload);
    expectProblem(t, res, 400, 'VALIDATION_FAILED', JSON.stringify(payload).slice(0, 60));
    t.ok(
      res.json().errors?.some((e: { path: string }) => e.path === path),
      `names ${path}: ${res.body.slice(0, 300)}`,
    );
  }
  t.equal(await count(), rowsBefore, 'nothing written');
  expectProblem(t, await api('GET', '/api/products/bulk'), 405, 'METHOD_NOT_ALLOWED');
});

t.test('permissions: each list needs its action', async (t) => {
  const a = await product({ sku: 'B-F' });
  const viewer = await ctx.user(tenant, { codes: ['erp:catalog:view'] });
  expectProblem(t, await bulk({ update: [{ id: a.id, price: '2.00' }] }, viewer.token), 403, 'FORBIDDEN');
  expectProblem(t, await bulk({ delete: [{ id: a.id }] }, viewer.token), 403, 'FORBIDDEN');
  expectProblem(t, await bulk({ create: [{ sku: 'B-V', name: 'v', price: '1.00' }] }, viewer.token), 403, 'FORBIDDEN');
  expectProblem(t, await bulk({ create: [{ sku: 'B-V', name: 'v', price: '1.00' }] }, 'forged'), 401, 'UNAUTHENTICATED');
  t.equal((await read(a.id)).json().version, 1, 'unchanged');
});

t.test('another tenant or company cannot reach the rows', async (t) => {
  const a = await product({ sku: 'B-G', price: '1.00' });
  const stranger = await ctx.tenant();
  const res = await bulk({ update: [{ id: a.id, price: '0.01' }], delete: [{ id: a.id }] }, stranger.adminToken);
  expectProblem(t, res, 422, 'BULK_FAILED');
  t.same(
    res.json().failures.map((f: { status: number }) => f.status),
    [404, 404],
  );
  const other = await ctx.company(tenant, 'BULK2');
  const member = await ctx.user(tenant, { codes: ['erp:catalog:manage'], companies: [other] });
  const fromOther = await bulk({ delete: [{ id: a.id }] }, member.token);
  expectProblem(t, fromOther, 422, 'BULK_FAILED');
  const notMine = await ctx.as(member.token, { method: 'POST', url: '/api/products/bulk', headers: { 'x-company-id': tenant.companyId }, payload: { delete: [{ id: a.id }] } });
  expectProblem(t, notMine, 403, 'COMPANY_FORBIDDEN');
  t.match((await read(a.id)).json(), { price: '1.00', version: 1 }, 'unchanged');
});
