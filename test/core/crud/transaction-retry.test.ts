// A transaction PostgreSQL rolls back for a deadlock (40P01) or a serialization
// conflict (40001) runs again from its start, up to TRANSACTION_TRIES times,
// before it answers 503: generated routes, bulk and ctx.transaction alike. A
// try that failed leaves no row, outbox event or audit record behind, its
// after-commit work runs once, after the try that committed, and a nested
// transaction is never retried alone. The conflicts are PostgreSQL's own: two
// transactions locking two rows in opposite orders, and a trigger raising the
// SQLSTATE on the tries a non-transactional sequence counts.
import t from 'tap';
import { build, onPglite } from '../../helper.ts';
import { SYSTEM } from '../../../core/access/principal.ts';
import { TRANSACTION_TRIES } from '../../../core/crud/crud-service.ts';
import { run } from '../../../core/data/sql.ts';
import { mapError } from '../../../core/http/problem.ts';
import { ERRORS } from '../../../core/errors.ts';
import type { ModuleContext } from '../../../core/plugin-api.ts';
import { UNKNOWN_ID } from '../../plugins/catalog/catalog-api.ts';

const ctx = await build(t);
const tenant = await ctx.tenant();
const system = await ctx.kernel.contextFor({ tenant: tenant.id, principal: SYSTEM, companyId: tenant.companyId });
const api = (method: 'GET' | 'POST', url: string, payload?: object) => ctx.as(tenant.adminToken, { method, url, payload });
const conn = ctx.kernel.dbs.get(ctx.kernel.tenants.cached(tenant.id)!.connectionKey).em.getConnection();
const s = `"${tenant.schema}"`;

// a customer named "once:…" fails its first insert with 40001, one named "always:…" every insert with 40P01;
// the sequences count the tries (a rollback does not take a nextval back)
await conn.execute(`create sequence ${s}.tries_once`);
await conn.execute(`create sequence ${s}.tries_always`);
await conn.execute(`create function ${s}.conflict_probe() returns trigger language plpgsql as $$
  begin
    if new.name like 'once:%' and nextval('${s}.tries_once') = 1 then raise exception 'lost once' using errcode = '40001'; end if;
    if new.name like 'always:%' and nextval('${s}.tries_always') > 0 then raise exception 'lost again' using errcode = '40P01'; end if;
    return new;
  end $$`);
await conn.execute(`create trigger conflict_probe before insert on ${s}."${ctx.kernel.model('Customer').table}" for each row execute function ${s}.conflict_probe()`);
const tries = async (which: 'once' | 'always') => {
  const [row] = await conn.execute(`select case when is_called then last_value else 0 end::int as n from ${s}.tries_${which}`);
  return row.n as number;
};
const reset = async () => {
  for (const which of ['once', 'always']) await conn.execute(`select setval('${s}.tries_${which}', 1, false)`);
};
const events = async (entityId: string) =>
  Number((await conn.execute(`select count(*)::int as n from "${ctx.kernel.config.registrySchema}".events where tenant_id = ? and entity_id = ?`, [tenant.id, entityId]))[0].n);
const audits = (entityId: string) => system.data('ActivityLog').count({ entityId });
const named = async (name: string) => (await system.data('Customer').find({ name })).map((r) => r.id as string);

t.test('a generated create that loses once: runs again and answers 201, with one row, event and audit record', async (t) => {
  await reset();
  const res = await api('POST', '/api/crm/customers', { name: 'once:route' });
  t.equal(res.statusCode, 201);
  t.equal(await tries('once'), 2, 'the second try committed');
  const ids = await named('once:route');
  t.equal(ids.length, 1);
  t.equal(await events(ids[0]), 1, 'one outbox event');
  t.equal(await audits(ids[0]), 1, 'one audit record');
});

t.test('a generated create that keeps losing: tried TRANSACTION_TRIES times, then 503', async (t) => {
  await reset();
  const res = await api('POST', '/api/crm/customers', { name: 'always:route' });
  t.equal(res.statusCode, 503);
  t.equal(res.json().code, 'DATABASE_UNAVAILABLE');
  t.ok(res.headers['retry-after']);
  t.equal(await tries('always'), TRANSACTION_TRIES);
  t.same(await named('always:route'), [], 'nothing written');
});

t.test('bulk: the whole request runs again, and a failed row is listed once', async (t) => {
  await reset();
  const ok = await api('POST', '/api/crm/customers/bulk', { create: [{ name: 'bulk:a' }, { name: 'once:bulk' }] });
  t.equal(ok.statusCode, 200);
  t.same(
    ok.json().created.map((r: { name: string }) => r.name),
    ['bulk:a', 'once:bulk'],
  );
  t.equal(await tries('once'), 2);
  t.equal((await named('bulk:a')).length, 1, 'the row before the conflict is written once');
  await reset();
  // the first row fails on its own (400) before the conflict; the second try lists it once, not once per try
  const failed = await api('POST', '/api/crm/customers/bulk', { create: [{ name: 'bulk:bad', ownerId: UNKNOWN_ID }, { name: 'once:bulk2' }] });
  t.equal(failed.statusCode, 422);
  t.equal(failed.json().code, 'BULK_FAILED');
  t.same(
    failed.json().failures.map((f: { index: number }) => f.index),
    [0],
  );
  t.equal(await tries('once'), 2);
});

t.test('ctx.transaction: the whole body runs again, after-commit work runs once', async (t) => {
  await reset();
  let body = 0;
  let nested = 0;
  let afterCommit = 0;
  const id = await system.transaction(async (tx) => {
    body++;
    tx.afterCommit(async () => {
      afterCommit++;
    });
    const before = await tx.data('Customer').create({ name: `plain:${body}` });
    await tx.transaction(async (inner) => {
      nested++;
      await inner.data('Customer').create({ name: 'once:ctx' });
    });
    return before.id as string;
  });
  t.same([body, nested, afterCommit], [2, 2, 1], 'body and nested transaction twice, after-commit work once');
  t.same(await named('plain:1'), [], 'the first try left nothing');
  t.same(await named('plain:2'), [id]);
  t.equal(await events(id), 1);
  t.equal(await audits(id), 1);
});

t.test('a nested transaction is never retried alone; the outermost gives up after the bound', async (t) => {
  await reset();
  let outer = 0;
  let inner = 0;
  const err = await system
    .transaction(async (tx) => {
      outer++;
      await tx.transaction(async (nested) => {
        inner++;
        await run(nested.crud.em, `do $$ begin raise exception 'lost' using errcode = '40P01'; end $$`, []);
      });
    })
    .catch((e: unknown) => e);
  t.same([outer, inner], [TRANSACTION_TRIES, TRANSACTION_TRIES]);
  t.equal(ERRORS[mapError(err as never).code][0], 503, 'answers 503');
  // anything else is not retried
  let once = 0;
  const other = await system
    .transaction(async (tx) => {
      once++;
      await run(tx.crud.em, `do $$ begin raise exception 'bad' using errcode = '23514'; end $$`, []);
    })
    .catch((e: unknown) => e);
  t.equal(once, 1);
  t.not(mapError(other as never).code, 'DATABASE_UNAVAILABLE');
});

t.test('two transactions locking two rows in opposite orders: the loser runs again and both succeed', { skip: onPglite && 'PGlite runs one transaction at a time' }, async (t) => {
  const a = await system.data('Customer').create({ name: 'deadlock:a' });
  const b = await system.data('Customer').create({ name: 'deadlock:b' });
  const runs = { first: 0, second: 0 };
  const committed = { first: 0, second: 0 };
  // each transaction tells when it holds its first row, and waits until the other holds its own
  const holding = { first: Promise.withResolvers<void>(), second: Promise.withResolvers<void>() };
  const write = (who: 'first' | 'second', other: 'first' | 'second', mine: string, theirs: string) =>
    system.transaction(async (tx: ModuleContext) => {
      runs[who]++;
      await tx.data('Customer').update(mine, { industry: who });
      holding[who].resolve();
      await holding[other].promise;
      await tx.data('Customer').update(theirs, { phone: who });
      tx.afterCommit(async () => {
        committed[who]++;
      });
    });
  const answers = await Promise.allSettled([write('first', 'second', a.id as string, b.id as string), write('second', 'first', b.id as string, a.id as string)]);
  t.same(
    answers.map((r) => r.status),
    ['fulfilled', 'fulfilled'],
  );
  t.equal(runs.first + runs.second, 3, 'one of them ran twice');
  t.same(committed, { first: 1, second: 1 }, 'after-commit work once each');
  t.match(await system.data('Customer').read(a.id as string), { industry: 'first', phone: 'second', version: 3 });
  t.match(await system.data('Customer').read(b.id as string), { industry: 'second', phone: 'first', version: 3 });
  for (const id of [a.id, b.id] as string[]) {
    t.equal(await events(id), 3, 'created and two updates: no event of the lost try');
    t.equal(await audits(id), 3, 'created and two updates: no audit record of the lost try');
  }
});
