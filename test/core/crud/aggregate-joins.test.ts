// Aggregates along references (crud/aggregate-fields.ts): a referenced row is
// read in the caller's own scope of its entity, so one they could not GET
// reads as null (as include= embeds it) and an entity they may not read at all
// is a 403; filters with their fixed operators; analyze() (read-only, row
// cap, columns, the statement without values); ctx.model(), ctx.storage()
// and ctx.transactionState.
import t from 'tap';
import { build } from '../../helper.ts';
import { manifestsWith } from '../../support/manifests.ts';
import { SYSTEM, type Principal } from '../../../core/plugin-api.ts';
import type { ModuleContext } from '../../../core/context/module-context.ts';

const mine = { $exists: { entity: 'ShopMember', on: { shopId: 'id' }, where: { userId: '${user.id}' } } };
const manifestsDir = manifestsWith(t, {
  'shop.json': {
    id: 'shop',
    name: 'Shop',
    version: '1.0.0',
    dependsOn: ['core'],
    permissions: [
      { code: 'app:shop:admin', description: 'everything', grants: [{ action: ['read', 'create', 'update', 'delete'], subject: ['ShopRegion', 'Shop', 'ShopMember', 'ShopSale'] }] },
      {
        code: 'app:shop:member',
        description: 'every sale; the shops one belongs to; regions without their code',
        grants: [
          { action: 'read', subject: 'ShopSale' },
          { action: 'read', subject: 'Shop', conditions: mine },
          { action: 'read', subject: 'ShopRegion', fields: ['name'] },
        ],
      },
      { code: 'app:shop:sales', description: 'sales only', grants: [{ action: 'read', subject: 'ShopSale' }] },
    ],
    entities: [
      { name: 'ShopRegion', label: 'Region', scope: 'company', fields: { name: { type: 'string', label: 'Name', required: true, maxLength: 40 }, code: { type: 'string', maxLength: 5 } } },
      {
        name: 'Shop',
        scope: 'company',
        fields: { name: { type: 'string', label: 'Name', required: true, maxLength: 40 }, regionId: { type: 'ref', entity: 'ShopRegion', label: 'Region' } },
      },
      {
        name: 'ShopMember',
        scope: 'company',
        fields: { shopId: { type: 'ref', entity: 'Shop', required: true, onDelete: 'cascade' }, userId: { type: 'ref', entity: 'User', required: true, onDelete: 'cascade' } },
      },
      {
        name: 'ShopSale',
        scope: 'company',
        fields: {
          shopId: { type: 'ref', entity: 'Shop', required: true, label: 'Shop' },
          total: { type: 'decimal', precision: 10, scale: 2, label: 'Total' },
          day: { type: 'date' },
          kind: { type: 'enum', values: ['cash', 'card'] },
        },
      },
    ],
  },
});

const ctx = await build(t, { config: { manifestsDir } });
const tenant = await ctx.tenant();
const system = await ctx.kernel.contextFor({ tenant: tenant.id, principal: SYSTEM, companyId: tenant.companyId });
const north = (await system.data('ShopRegion').create({ name: 'North', code: 'N' })).id as string;
const a = (await system.data('Shop').create({ name: 'A', regionId: north })).id as string;
const b = (await system.data('Shop').create({ name: 'B', regionId: north })).id as string;
for (const [shopId, total, kind] of [
  [a, '10.00', 'cash'],
  [a, '5.50', 'card'],
  [b, '100.00', 'card'],
] as const) {
  await system.data('ShopSale').create({ shopId, total, day: '2026-03-01', kind });
}

const userContext = async (codes: string[]): Promise<{ ctx: ModuleContext; id: string }> => {
  const role = `r-${Math.random().toString(36).slice(2, 10)}`;
  const user = await ctx.user(tenant, { codes, role });
  const principal: Principal = { kind: 'user', id: user.id, roles: [role], companyIds: [tenant.companyId] };
  return { ctx: await ctx.kernel.contextFor({ tenant: tenant.id, principal, companyId: tenant.companyId }), id: user.id };
};
const member = await userContext(['app:shop:member']);
await system.data('ShopMember').create({ shopId: a, userId: member.id });
const sales = await userContext(['app:shop:sales']);

t.test('a referenced row the caller cannot read reads as null; its rows still count', async (t) => {
  const rows = await member.ctx.data('ShopSale').aggregate({ groupBy: ['shopId.name', 'shopId.regionId.name'], measures: { n: { count: true }, sum: { sum: 'total' } } });
  t.same(rows, [
    { 'shopId.name': 'A', 'shopId.regionId.name': 'North', n: 2, sum: '15.50' },
    { 'shopId.name': null, 'shopId.regionId.name': null, n: 1, sum: '100.00' },
  ]);
  // a filter sees the null, never the hidden name
  t.same(await member.ctx.data('ShopSale').aggregate({ measures: { n: { count: true } }, filters: [{ field: 'shopId.name', op: 'equals', value: 'B' }] }), [{ n: 0 }]);
  t.same(await system.data('ShopSale').aggregate({ measures: { n: { count: true } }, filters: [{ field: 'shopId.name', op: 'equals', value: 'B' }] }), [{ n: 1 }]);
});

t.test('an entity the caller may not read, or a field hidden from them, is a 403', async (t) => {
  await t.rejects(sales.ctx.data('ShopSale').aggregate({ groupBy: ['shopId.name'], measures: { n: { count: true } } }), { code: 'FORBIDDEN' });
  await t.rejects(member.ctx.data('ShopSale').aggregate({ groupBy: ['shopId.regionId.code'], measures: { n: { count: true } } }), { code: 'FORBIDDEN' });
  await t.rejects(member.ctx.data('ShopSale').aggregate({ measures: { n: { count: true } }, filters: [{ field: 'shopId.regionId.code', op: 'set' }] }), { code: 'FORBIDDEN' });
  await t.rejects(member.ctx.data('ShopSale').aggregate({ groupBy: ['total.name'], measures: { n: { count: true } } }), { code: 'VALIDATION_FAILED' });
  await t.rejects(member.ctx.data('ShopSale').aggregate({ groupBy: ['shopId.nope'], measures: { n: { count: true } } }), { code: 'VALIDATION_FAILED' });
  await t.rejects(member.ctx.data('ShopSale').aggregate({ groupBy: ['a.b.c.d.e'], measures: { n: { count: true } } }), { code: 'VALIDATION_FAILED' });
});

t.test('filters check their values against the field', async (t) => {
  const n = (filters: unknown[]) => system.data('ShopSale').aggregate({ measures: { n: { count: true } }, filters: filters as never });
  t.same(await n([{ field: 'kind', op: 'in', values: ['card'] }]), [{ n: 2 }]);
  t.same(
    await n([
      { field: 'total', op: 'gte', value: '10' },
      { field: 'day', op: 'equals', value: '2026-03-01' },
    ]),
    [{ n: 2 }],
  );
  t.same(await n([{ field: 'createdAt', op: 'gt', value: '2000-01-01' }]), [{ n: 3 }]);
  for (const bad of [
    { field: 'kind', op: 'equals', value: 'cheque' },
    { field: 'total', op: 'gt', value: 'ten' },
    { field: 'day', op: 'lt', value: '2026-02-30' },
    { field: 'createdAt', op: 'lt', value: 'yesterday' },
    { field: 'shopId', op: 'equals', value: 'not-a-uuid' },
    { field: 'kind', op: 'between', value: 'a' },
    { field: 'total', op: 'startsWith', value: '1' },
    { field: 'kind', op: 'in', values: [] },
  ]) {
    await t.rejects(n([bad]), { code: 'VALIDATION_FAILED' }, JSON.stringify(bad));
  }
});

t.test('analyze: columns, the statement without values, the row cap, read-only', async (t) => {
  const r = await member.ctx.data('ShopSale').analyze({ groupBy: ['kind', { field: 'day', by: 'quarter' }], measures: { n: { count: true } }, limit: 1 }, { timeoutMs: 5000, maxRows: 10 });
  t.same(r.rows, [{ kind: 'card', day: '2026-01-01', n: 2 }]);
  t.equal(r.truncated, true);
  t.same(
    r.columns.map((c) => [c.key, c.type]),
    [
      ['kind', 'enum'],
      ['day', 'date'],
      ['n', 'integer'],
    ],
  );
  t.notMatch(r.sql, new RegExp(tenant.schema), 'no schema');
  t.notMatch(r.sql, new RegExp(member.id), 'no bound value');
  await t.rejects(member.ctx.data('ShopSale').analyze({ measures: { n: { count: true } }, limit: 11 }, { timeoutMs: 5000, maxRows: 10 }), { code: 'VALIDATION_FAILED' });
  await t.rejects(
    system.transaction((tx) => tx.data('ShopSale').analyze({ measures: { n: { count: true } } }, { timeoutMs: 5000, maxRows: 10 })),
    /read-only transaction of its own/,
  );
});

t.test('ctx.model(): entities, fields and what the caller may read', async (t) => {
  const byName = new Map(member.ctx.model().map((e) => [e.name, e]));
  t.equal(byName.get('ShopSale')!.readable, true);
  t.equal(byName.get('ShopMember')!.readable, false);
  const region = byName.get('ShopRegion')!;
  t.same(
    region.fields.filter((f) => !f.kernel).map((f) => [f.name, f.readable]),
    [
      ['name', true],
      ['code', false],
    ],
  );
  t.match(
    byName.get('ShopSale')!.fields.find((f) => f.name === 'shopId'),
    { type: 'ref', ref: 'Shop', label: 'Shop', readable: true },
  );
  t.match(
    byName.get('ShopSale')!.fields.find((f) => f.name === 'kind'),
    { type: 'enum', values: ['cash', 'card'] },
  );
  t.notOk(
    byName.get('User')!.fields.some((f) => f.name === 'passwordHash'),
    'internal fields never',
  );
});

t.test('ctx.storage(): the server version and sizes of readable tables only', async (t) => {
  const s = await sales.ctx.storage();
  t.match(s.serverVersion, /^\d+/);
  t.same(
    s.entities.map((e) => e.entity),
    ['ShopSale'],
  );
  t.ok(s.entities[0].bytes > 0);
});

t.test('ctx.transactionState: one map per transaction, seen by nested contexts', async (t) => {
  t.equal(system.transactionState, undefined);
  await system.transaction(async (tx) => {
    tx.transactionState!.set('k', 1);
    await tx.transaction(async (inner) => t.equal(inner.transactionState!.get('k'), 1));
  });
  await system.transaction(async (tx) => t.equal(tx.transactionState!.has('k'), false, 'a new transaction starts empty'));
});
