// Aggregates through the scope compiler (crud/aggregate.ts, ctx.data(e).aggregate):
// exact counts, sums, averages, minima and maxima, grouped by fields and by
// periods of dates, filtered measures; always inside the caller's read scope
// (company, a relational grant condition) and field rules; field names from
// the model only, values bound, so names and values built to inject SQL are a
// 400 or plain data.
import t from 'tap';
import { build, PASSWORD, uniqueId } from '../../helper.ts';
import { provisionTenant } from '../../../core/tenancy/provision.ts';
import { manifestsWith } from '../../support/manifests.ts';
import { SYSTEM, type Principal } from '../../../core/plugin-api.ts';
import type { AggregateQuery } from '../../../core/plugin-api.ts';
import type { ModuleContext } from '../../../core/context/module-context.ts';

const member = { $exists: { entity: 'LedgerMember', on: { teamId: 'teamId' }, where: { userId: '${user.id}' } } };
const manifestsDir = manifestsWith(t, {
  'ledger.json': {
    id: 'ledger',
    name: 'Ledger',
    version: '1.0.0',
    dependsOn: ['core'],
    permissions: [
      { code: 'app:ledger:admin', description: 'everything', grants: [{ action: ['read', 'create', 'update', 'delete'], subject: ['LedgerTeam', 'LedgerMember', 'LedgerEntry'] }] },
      { code: 'app:ledger:member', description: "the entries of one's teams", grants: [{ action: 'read', subject: 'LedgerEntry', conditions: member }] },
      {
        code: 'app:ledger:no-cost',
        description: 'every entry, but never its cost',
        grants: [{ action: 'read', subject: 'LedgerEntry', fields: ['teamId', 'kind', 'amount', 'hours', 'day', 'at', 'label', 'memo'] }],
      },
      {
        code: 'app:ledger:partial',
        description: 'amounts of kind a only',
        grants: [
          { action: 'read', subject: 'LedgerEntry', fields: ['teamId', 'kind', 'hours', 'day'] },
          { action: 'read', subject: 'LedgerEntry', conditions: { kind: 'a' } },
        ],
      },
    ],
    entities: [
      { name: 'LedgerTeam', scope: 'company', fields: { name: { type: 'string', required: true, maxLength: 80 } } },
      {
        name: 'LedgerMember',
        scope: 'company',
        fields: {
          teamId: { type: 'ref', entity: 'LedgerTeam', required: true, onDelete: 'cascade' },
          userId: { type: 'ref', entity: 'User', required: true, onDelete: 'cascade' },
        },
      },
      {
        name: 'LedgerEntry',
        scope: 'company',
        fields: {
          teamId: { type: 'ref', entity: 'LedgerTeam', required: true },
          kind: { type: 'enum', values: ['a', 'b', 'c'], required: true },
          amount: { type: 'decimal', precision: 10, scale: 2 },
          cost: { type: 'decimal', precision: 10, scale: 2 },
          hours: { type: 'integer' },
          day: { type: 'date' },
          at: { type: 'datetime' },
          label: { type: 'string', maxLength: 80 },
          memo: { type: 'json' },
          token: { type: 'string', maxLength: 80, internal: true },
        },
      },
    ],
    routes: [{ entity: 'LedgerEntry', path: '/api/ledger/entries' }],
  },
});

const ctx = await build(t, { config: { manifestsDir } });
const tenant = await ctx.tenant();
const other = await ctx.company(tenant, 'C2');
const system = await ctx.kernel.contextFor({ tenant: tenant.id, principal: SYSTEM, companyId: tenant.companyId });
const elsewhere = await ctx.kernel.contextFor({ tenant: tenant.id, principal: SYSTEM, companyId: other });

const t1 = (await system.data('LedgerTeam').create({ name: 'One' })).id as string;
const t2 = (await system.data('LedgerTeam').create({ name: 'Two' })).id as string;
const entries = system.data('LedgerEntry');
await entries.create({ teamId: t1, kind: 'a', amount: '10.50', cost: '1.00', hours: 2, day: '2026-01-05', at: '2026-01-05T23:30:00Z', label: 'x' });
await entries.create({ teamId: t1, kind: 'b', amount: '4.25', cost: '2.00', hours: 3, day: '2026-01-07', at: '2026-01-06T10:00:00Z', label: 'y' });
await entries.create({ teamId: t1, kind: 'a', amount: null, cost: '3.00', hours: 5, day: '2026-02-10', at: '2026-02-10T12:00:00Z' });
await entries.create({ teamId: t2, kind: 'a', amount: '100.00', cost: '4.00', hours: 1, day: '2026-01-06', at: '2026-01-06T12:00:00Z', label: "x' or '1'='1" });
await entries.create({ teamId: t2, kind: 'c', amount: '0.01', cost: '5.00' });
// another company's entry: never in this company's numbers
const t3 = (await elsewhere.data('LedgerTeam').create({ name: 'Three' })).id as string;
await elsewhere.data('LedgerEntry').create({ teamId: t3, kind: 'a', amount: '999.00', hours: 99, day: '2026-01-05' });

const contextOf = async (codes: string[]): Promise<{ ctx: ModuleContext; id: string }> => {
  const role = `r-${codes.join('-').replace(/:/g, '-')}-${Math.random().toString(36).slice(2, 8)}`;
  const user = await ctx.user(tenant, { codes, role });
  const principal: Principal = { kind: 'user', id: user.id, roles: [role], companyIds: [tenant.companyId] };
  return { ctx: await ctx.kernel.contextFor({ tenant: tenant.id, principal, companyId: tenant.companyId }), id: user.id };
};
const agg = (c: ModuleContext, q: AggregateQuery) => c.data('LedgerEntry').aggregate(q);
const totals: AggregateQuery = {
  measures: {
    n: { count: true },
    amount: { sum: 'amount' },
    hours: { sum: 'hours' },
    avgAmount: { avg: 'amount' },
    avgHours: { avg: 'hours' },
    first: { min: 'day' },
    last: { max: 'day' },
    latest: { max: 'at' },
    most: { max: 'amount' },
    teams: { countDistinct: 'teamId' },
    kindA: { count: true, where: { kind: 'a' } },
    amountA: { sum: 'amount', where: { kind: 'a' } },
  },
};

t.test('measures over every row in scope, one row without groups', async (t) => {
  t.same(await agg(system, totals), [
    {
      n: 5,
      amount: '114.76',
      hours: 11,
      avgAmount: '28.69',
      avgHours: '2.75',
      first: '2026-01-05',
      last: '2026-02-10',
      latest: '2026-02-10T12:00:00.000Z',
      most: '100.00',
      teams: 2,
      kindA: 3,
      amountA: '110.50',
    },
  ]);
  t.same(
    await agg(system, { ...totals, where: { kind: 'b', hours: { $gt: 100 } } }),
    [{ n: 0, amount: '0.00', hours: 0, avgAmount: null, avgHours: null, first: null, last: null, latest: null, most: null, teams: 0, kindA: 0, amountA: '0.00' }],
    'no rows: counts and sums 0, the rest null',
  );
  t.same(await agg(elsewhere, { measures: { n: { count: true }, amount: { sum: 'amount' } } }), [{ n: 1, amount: '999.00' }], 'the other company counts its own');
});

t.test('grouped by fields and by periods, ordered', async (t) => {
  t.same(await agg(system, { groupBy: ['teamId'], measures: { n: { count: true }, amount: { sum: 'amount' }, hours: { sum: 'hours' } } }), [
    { teamId: t1 < t2 ? t1 : t2, ...(t1 < t2 ? { n: 3, amount: '14.75', hours: 10 } : { n: 2, amount: '100.01', hours: 1 }) },
    { teamId: t1 < t2 ? t2 : t1, ...(t1 < t2 ? { n: 2, amount: '100.01', hours: 1 } : { n: 3, amount: '14.75', hours: 10 }) },
  ]);
  t.same(await agg(system, { groupBy: ['kind'], measures: { n: { count: true } }, orderBy: '-n' }), [
    { kind: 'a', n: 3 },
    { kind: 'b', n: 1 },
    { kind: 'c', n: 1 },
  ]);
  t.same(
    await agg(system, { groupBy: ['teamId', 'kind'], measures: { n: { count: true } }, where: { teamId: t1 } }),
    [
      { teamId: t1, kind: 'a', n: 2 },
      { teamId: t1, kind: 'b', n: 1 },
    ],
    'two keys',
  );
  t.same(
    await agg(system, { groupBy: [{ field: 'day', by: 'week' }], measures: { n: { count: true }, hours: { sum: 'hours' } } }),
    [
      { day: '2026-01-05', n: 3, hours: 6 },
      { day: '2026-02-09', n: 1, hours: 5 },
      { day: null, n: 1, hours: 0 },
    ],
    'weeks start on Monday; rows without a date group as null, last',
  );
  t.same(await agg(system, { groupBy: [{ field: 'day', by: 'month', as: 'month' }], measures: { n: { count: true } }, orderBy: '-month' }), [
    { month: '2026-02-01', n: 1 },
    { month: '2026-01-01', n: 3 },
    { month: null, n: 1 },
  ]);
  t.same(
    await agg(system, { groupBy: [{ field: 'at', by: 'day' }], measures: { n: { count: true } }, where: { at: { $ne: null } } }),
    [
      { at: '2026-01-05', n: 1 },
      { at: '2026-01-06', n: 2 },
      { at: '2026-02-10', n: 1 },
    ],
    'instants by their UTC day',
  );
  t.same(
    await agg(system, { groupBy: [{ field: 'at', by: 'day', timeZone: 'Europe/Berlin' }], measures: { n: { count: true } }, where: { at: { $ne: null } } }),
    [
      { at: '2026-01-06', n: 3 },
      { at: '2026-02-10', n: 1 },
    ],
    "or by another zone's day: 23:30 UTC is the next day in Berlin",
  );
  t.same(await agg(system, { groupBy: ['kind'], orderBy: '-kind', limit: 2 }), [{ kind: 'c' }, { kind: 'b' }], 'distinct values, limited');
  t.same(
    await agg(system, { groupBy: ['amount'], measures: { n: { count: true } }, orderBy: '-amount', limit: 2 }),
    [
      { amount: '100.00', n: 1 },
      { amount: '10.50', n: 1 },
    ],
    'decimals order as numbers (100.00 before 10.50), shown as exact text',
  );
});

t.test('the read scope always applies: a relational grant, no grant, the company', async (t) => {
  const { ctx: inOne, id } = await contextOf(['app:ledger:member']);
  t.same(
    await agg(inOne, totals),
    [{ n: 0, amount: '0.00', hours: 0, avgAmount: null, avgHours: null, first: null, last: null, latest: null, most: null, teams: 0, kindA: 0, amountA: '0.00' }],
    'a member of no team counts nothing',
  );
  t.same(await agg(inOne, { groupBy: ['teamId'], measures: { n: { count: true } } }), [], 'and has no groups');
  await system.data('LedgerMember').create({ teamId: t1, userId: id });
  t.same(await agg(inOne, { groupBy: ['teamId'], measures: { n: { count: true }, amount: { sum: 'amount' } } }), [{ teamId: t1, n: 3, amount: '14.75' }], "a member counts their team's rows only");
  t.same(await agg(inOne, { measures: { n: { count: true } }, where: { teamId: t2 } }), [{ n: 0 }], 'a condition narrows the scope, never widens it');
  t.same(await agg(inOne, { measures: { n: { count: true } }, where: { $or: [{ teamId: t2 }, { kind: 'a' }] } }), [{ n: 2 }], 'an $or stays inside the scope');
  const { ctx: none } = await contextOf(['app:ledger:admin']);
  t.same(await agg(none, { measures: { n: { count: true } } }), [{ n: 5 }], 'a grant without conditions: the company');
  const { ctx: nothing } = await contextOf([]);
  t.same(await agg(nothing, { measures: { n: { count: true }, amount: { sum: 'amount' } } }), [{ n: 0, amount: '0.00' }], 'no read grant: nothing');
  t.same(await agg(nothing, { groupBy: ['kind'], measures: { n: { count: true } } }), []);
  t.same(
    await agg(system, { measures: { n: { count: true, where: { $exists: { entity: 'LedgerMember', on: { teamId: 'teamId' }, where: { userId: id } } } } } }),
    [{ n: 3 }],
    'a measure filtered by a relational condition',
  );
});

t.test('field rules: a hidden field is refused, a partly hidden one counts where visible', async (t) => {
  const { ctx: noCost } = await contextOf(['app:ledger:no-cost']);
  t.same(await agg(noCost, { measures: { n: { count: true }, amount: { sum: 'amount' } } }), [{ n: 5, amount: '114.76' }]);
  for (const q of [
    { measures: { c: { sum: 'cost' } } },
    { groupBy: ['cost'] },
    { measures: { c: { max: 'cost' } } },
    { measures: { n: { count: true } }, where: { cost: { $gt: '2.00' } } },
    { measures: { n: { count: true, where: { $or: [{ cost: '1.00' }] } } } },
  ] as AggregateQuery[]) {
    await t.rejects(agg(noCost, q), { code: 'FORBIDDEN' }, JSON.stringify(q));
  }
  const { ctx: partial } = await contextOf(['app:ledger:partial']);
  t.same(await agg(partial, { measures: { n: { count: true }, amount: { sum: 'amount' }, hours: { sum: 'hours' } } }), [{ n: 5, amount: '110.50', hours: 11 }], 'amounts of kind a rows only');
  t.same(
    await agg(partial, { groupBy: ['label'], measures: { n: { count: true } }, where: { teamId: t1 } }),
    [
      { label: 'x', n: 1 },
      { label: null, n: 2 },
    ],
    'hidden labels group as null',
  );
});

t.test('names come from the model, values are bound: injection is a 400 or data', async (t) => {
  const bad: [string, AggregateQuery][] = [
    ['unknown group field', { groupBy: ['kind"; drop table x; --'] }],
    ['unknown measured field', { measures: { s: { sum: 'amount") from x; --' } } }],
    ['unknown condition field', { measures: { n: { count: true } }, where: { 'kind" or true or "': 'a' } }],
    ['unknown field in a measure condition', { measures: { n: { count: true, where: { nope: 1 } } } }],
    ['an order by something else', { groupBy: ['kind'], orderBy: 'kind; drop table x' }],
    ['a time zone that is not one', { groupBy: [{ field: 'at', by: 'day', timeZone: "UTC') from x; --" }] }],
    ['a period that is not one', { groupBy: [{ field: 'day', by: "week', t.id)::date --" as 'week' }] }],
    ['an internal field', { groupBy: ['token'] }],
    ['a document', { groupBy: ['memo'] }],
    ['a sum of text', { measures: { s: { sum: 'label' } } }],
    ['a period of a number', { groupBy: [{ field: 'hours', by: 'month' }] }],
    ['count not true', { measures: { n: { count: 'amount' as unknown as true } } }],
    ['two kinds in one measure', { measures: { n: { count: true, sum: 'amount' } as never } }],
    ['a key twice', { groupBy: ['kind'], measures: { kind: { count: true } } }],
    ['nothing asked', { measures: {} }],
    ['a limit too big', { groupBy: ['kind'], limit: 10_001 }],
    ['a misspelt kernel field', { groupBy: ['companyIdx'] }],
  ];
  for (const [why, q] of bad) await t.rejects(agg(system, q), { code: 'VALIDATION_FAILED' }, why);
  t.same(await agg(system, { measures: { n: { count: true } }, where: { label: "x' or '1'='1" } }), [{ n: 1 }], 'a value is data: it matches the one row holding it');
  t.same(await agg(system, { measures: { n: { count: true } }, where: { label: "' or 1=1 --" } }), [{ n: 0 }]);
  t.same(await agg(system, { measures: { '"; drop table x; --': { count: true } } }), [{ '"; drop table x; --': 5 }], 'a measure name is only a key of the result');
  t.same(await agg(system, { groupBy: ['companyId'], measures: { n: { count: true } } }), [{ companyId: tenant.companyId, n: 5 }], 'kernel fields group too');
  t.equal(await entries.count(), 5, 'every row still there');
});

t.test('the tenant calendar: ctx.today() and ctx.timeZone', async (t) => {
  t.equal(system.timeZone, 'UTC');
  t.equal(system.today(new Date('2026-03-01T23:30:00Z')), '2026-03-01');
  const id = uniqueId();
  await provisionTenant(ctx.kernel, { id, name: id, timeZone: 'Pacific/Kiritimati', company: { code: 'HQ', name: 'HQ' }, admin: { email: `admin@${id}.test`, name: 'Admin', password: PASSWORD } });
  const east = await ctx.kernel.contextFor({ tenant: id, principal: SYSTEM });
  t.equal(east.timeZone, 'Pacific/Kiritimati');
  t.equal(east.today(new Date('2026-03-01T10:30:00Z')), '2026-03-02', 'fourteen hours ahead: already tomorrow');
});
