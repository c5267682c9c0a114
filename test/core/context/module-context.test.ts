// The module SDK without a request: kernel.contextFor gives the same scoped data
// access a request gets; transactions commit or roll back whole, after-commit work
// runs only after a commit; find/count take grant-condition syntax ($exists too);
// audit records (their action one the audit log's enum allows) join the transaction; a user's context sees only their rows, the
// system() escape hatch every row.
import t from 'tap';
import { build } from '../../helper.ts';
import { SYSTEM } from '../../../core/access/principal.ts';

const ctx = await build(t);
const tenant = await ctx.tenant();
const system = await ctx.kernel.contextFor({ tenant: tenant.id, principal: SYSTEM, companyId: tenant.companyId });
const leads = system.data('Lead');
const lead = (lastName: string) => ({ title: `Lead ${lastName}`, companyName: `${lastName} Ltd`, lastName, currency: 'EUR' });

t.test('scoped data access without a request', async (t) => {
  const a = await leads.create(lead('Ames'));
  t.equal((await leads.read(a.id)).lastName, 'Ames');
  t.equal(await leads.count({ lastName: 'Ames' }), 1);
  t.same(
    (await leads.find({ lastName: { $in: ['Ames', 'Nobody'] } })).map((r) => r.id),
    [a.id],
  );
  t.match(leads.toDto(a), { id: a.id, lastName: 'Ames', status: 'new' });
  const updated = await leads.update(a.id, { phone: '+49 30 1234' });
  t.equal(updated.version, 2, 'a write bumps the version');
  await t.rejects(leads.lock(a.id), /needs a transaction/, 'lock() outside a transaction is a programming error');
});

t.test('a transaction commits or rolls back whole; after-commit work waits for the commit', async (t) => {
  const done: string[] = [];
  await t.rejects(
    system.transaction(async (tx) => {
      await tx.data('Lead').create(lead('Rollback'));
      tx.afterCommit(async () => {
        done.push('rolled back');
      });
      throw new Error('changed my mind');
    }),
    /changed my mind/,
  );
  t.equal(await leads.count({ lastName: 'Rollback' }), 0, 'nothing of it is left');
  t.same(done, [], 'after-commit work of a rolled-back transaction never runs');
  const row = await system.transaction(async (tx) => {
    const created = await tx.data('Lead').create(lead('Commit'));
    tx.afterCommit(async () => {
      done.push(`committed ${created.id}`);
    });
    t.same(done, [], 'not before the commit');
    return created;
  });
  t.same(done, [`committed ${row.id}`]);
});

t.test('audit records join the transaction', async (t) => {
  const a = await leads.create(lead('Audited'));
  const logs = system.data('ActivityLog');
  await system.audit('Lead', a.id, 'convert', { phone: { before: null, after: 'rang' } });
  t.match(await logs.find({ entityId: a.id, action: 'convert' }), [{ entity: 'Lead', action: 'convert', changes: { phone: { before: null, after: 'rang' } } }]);
  await t.rejects(
    system.transaction(async (tx) => {
      await tx.audit('Lead', a.id, 'update');
      throw new Error('no');
    }),
  );
  t.equal(await logs.count({ entityId: a.id, action: 'update' }), 0, 'a rolled-back audit record is gone');
});

t.test('a user context sees their rows only; system() every row', async (t) => {
  const user = await ctx.user(tenant, { codes: ['erp:crm:view'] });
  const other = await ctx.company(tenant, 'OTHER', [user.id]);
  const elsewhere = await (await ctx.kernel.contextFor({ tenant: tenant.id, principal: SYSTEM, companyId: other })).data('Lead').create(lead('Elsewhere'));
  const mine = await ctx.kernel.contextFor({ tenant: tenant.id, principal: { kind: 'user', id: user.id, roles: [], companyIds: [tenant.companyId] }, companyId: tenant.companyId });
  t.equal(await mine.data('Lead').count(), 0, 'no role, no rows');
  await t.rejects(mine.data('Lead').read(elsewhere.id), { code: 'NOT_FOUND' });
  t.ok((await mine.system().data('Lead').count()) > 0, "system() sees the company's rows");
  t.equal(mine.system().principal.kind, 'system');
});

t.test("ctx.timeZone: the tenant's clock (UTC unless provisioned otherwise)", async (t) => {
  t.equal(system.timeZone, 'UTC');
  const zoned = await ctx.tenant();
  await ctx.kernel.dbs.main.em.getConnection().execute(`update "${ctx.kernel.config.registrySchema}".tenants set time_zone = 'Asia/Tokyo' where id = ?`, [zoned.id]);
  ctx.kernel.tenants.forget(zoned.id);
  t.equal((await ctx.kernel.contextFor({ tenant: zoned.id, principal: SYSTEM })).timeZone, 'Asia/Tokyo');
});
