// Tenants on several PostgreSQL databases (DATABASE_URL_<KEY>): a tenant provisioned
// on another connection key has its schema there and its registry row on main, signs
// in and is served from there; TENANT_PLACEMENT=fewest sends a tenant without a key
// to the database holding the fewest tenants.
import t from 'tap';
import { buildApp } from '../../../core/app.ts';
import { loadConfig } from '../../../core/config.ts';
import { pendingStatements } from '../../../core/db/migrator.ts';
import { provisionTenant } from '../../../core/tenancy/provision.ts';
import { kernelKit, randomId } from '../../fixtures/kernels.ts';
import { secondDatabase } from '../../fixtures/second-database.ts';
import { onPglite, PASSWORD, TEST_DATABASE_URL } from '../../helper.ts';

t.test('TENANT_PLACEMENT is "main" or "fewest"', async (t) => {
  t.equal(loadConfig({}).tenantPlacement, 'main', 'main by default');
  t.equal(loadConfig({ TENANT_PLACEMENT: 'fewest' }).tenantPlacement, 'fewest');
  t.throws(() => loadConfig({ TENANT_PLACEMENT: 'random' }), /TENANT_PLACEMENT must be "main" or "fewest"/);
});

t.test('tenants on a second database', { skip: onPglite && 'embedded PGlite is one database: a second connection key needs PostgreSQL' }, async (t) => {
  const second = await secondDatabase(t);
  const secondUrl = second.url;
  const kit = await kernelKit(t);
  const kernel = await kit.open({ databases: { main: TEST_DATABASE_URL, second: secondUrl }, tenantPlacement: 'fewest' });
  const app = await buildApp(kernel, { logger: false });
  await t.test('a tenant provisioned on "second" lives there and is served from there', async (t) => {
    const far = await provisionTenant(kernel, {
      id: randomId('far'),
      name: 'Far',
      connectionKey: 'second',
      company: { code: 'HQ', name: 'HQ' },
      admin: { email: 'boss@far.test', name: 'Boss', password: PASSWORD },
    });
    t.equal(far.created, true);
    t.equal(far.tenant.connectionKey, 'second');
    t.ok(await second.hasSchema(far.tenant.schema), 'its schema is on the second database');
    t.notOk((await kernel.dbs.main.em.getConnection().execute('select 1 from pg_namespace where nspname = ?', [far.tenant.schema])).length, 'not on main');
    t.same(await pendingStatements(kernel.dbs.get('second'), far.tenant.schema), [], 'with every table');
    const login = await app.inject({ method: 'POST', url: '/api/auth/login', payload: { tenant: far.tenant.id, email: 'boss@far.test', password: PASSWORD } });
    t.equal(login.statusCode, 200, 'its admin signs in');
    const me = await app.inject({ method: 'GET', url: '/api/companies', headers: { authorization: `Bearer ${login.json().accessToken}` } });
    t.same([me.statusCode, me.json().items?.map((c: { code: string }) => c.code)], [200, ['HQ']], 'and reads its rows from there');
    const again = await provisionTenant(kernel, {
      id: far.tenant.id,
      name: 'Far',
      connectionKey: 'second',
      company: { code: 'HQ', name: 'HQ' },
      admin: { email: 'boss@far.test', name: 'Boss', password: 'another password' },
    });
    t.same([again.created, again.companyId, again.adminUserId], [false, far.companyId, far.adminUserId], 'a second provisioning changes nothing');
  });

  await t.test('TENANT_PLACEMENT=fewest: each new tenant goes to the database holding the fewest', async (t) => {
    const counts = async () => Object.fromEntries(await kernel.tenants.countsByConnection());
    const before = await counts();
    const placed: string[] = [];
    for (let i = 0; i < 4; i++) placed.push((await kit.provision(kernel, randomId('place'))).tenant.connectionKey);
    const after = await counts();
    t.equal((after.main ?? 0) + (after.second ?? 0), (before.main ?? 0) + (before.second ?? 0) + 4);
    t.ok(Math.abs((after.main ?? 0) - (after.second ?? 0)) <= 1, `balanced: ${JSON.stringify(after)} after ${placed.join(', ')}`);
  });

  await app.close();
  // the kit's teardown drops main's schemas; the second database goes whole (secondDatabase)
  const tenantsOnSecond = kernel.tenants.list().filter((x) => x.connectionKey === 'second');
  await kernel.close();
  t.ok(tenantsOnSecond.length >= 2);
});
