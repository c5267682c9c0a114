// Provisioning a tenant: registry row, schema, built-in roles, first company
// and admin. Idempotent, refuses bad ids, and safe to run concurrently.
import t from 'tap';
import pg from '../../../core/db/pg.ts';
import type { Kernel } from '../../../core/kernel.ts';
import { provisionTenant, type ProvisionInput } from '../../../core/tenancy/provision.ts';
import { TenantError } from '../../../core/tenancy/errors.ts';
import { VERSION_TABLE } from '../../../core/db/schema-versions.ts';
import { pendingStatements } from '../../../core/db/migrator.ts';
import { verifyPassword } from '../../../core/auth/passwords.ts';
import { ADMIN_ROLE, MEMBER_ROLE } from '../../../core/access/role-directory.ts';
import { kernelKit, randomId } from '../../fixtures/kernels.ts';
import { onPglite, TEST_DATABASE_URL } from '../../helper.ts';
import { schemaFor } from '../../../core/tenancy/registry.ts';

type Row = Record<string, any>;

const input = (id: string, more: Partial<ProvisionInput> = {}): ProvisionInput => ({
  id,
  name: `Tenant ${id}`,
  company: { code: 'HQ', name: 'Headquarters' },
  admin: { email: `Boss@${id}.Test `, name: 'Boss', password: 'first password 123' },
  ...more,
});

async function contents(kernel: Kernel, schema: string) {
  const em = kernel.dbs.main.em.fork({ schema });
  const all = async (entity: string) => (await em.find(kernel.model(entity).ormEntity, {}, { orderBy: { createdAt: 'asc' } as never })) as Row[];
  return {
    roles: await all('Role'),
    companies: await all('Company'),
    users: await all('User'),
    userRoles: await all('UserRole'),
    userCompanies: await all('UserCompany'),
  };
}

const plain = (rows: Row[]) => rows.map((r) => ({ ...r }));

t.test('provisioning', async (t) => {
  const kit = await kernelKit(t);
  const kernel = await kit.open();

  await t.test('creates roles, the first company and its admin', async (t) => {
    const id = randomId('p');
    const r = await provisionTenant(kernel, input(id, { defaultLanguage: 'de' }));
    t.equal(r.created, true);
    t.equal(r.tenant.id, id);
    t.equal(r.tenant.schema, `tenant_${id.replace(/-/g, '_')}`);
    t.equal(r.tenant.schemaDigest, kernel.digest, 'the schema is at the loaded modules');
    t.equal(r.tenant.defaultLanguage, 'de');
    const c = await contents(kernel, r.tenant.schema);
    t.same(
      c.roles.map((x) => [x.name, x.builtIn]).sort(),
      [
        [ADMIN_ROLE, true],
        [MEMBER_ROLE, true],
      ],
      'built-in roles admin and member',
    );
    t.equal(c.companies.length, 1);
    t.equal(c.companies[0].id, r.companyId);
    t.same(c.companies[0].code, 'HQ');
    t.same(c.companies[0].name, { de: 'Headquarters' }, 'the name is stored under the tenant language');
    t.equal(c.users.length, 1);
    const admin = c.users[0];
    t.equal(admin.id, r.adminUserId);
    t.equal(admin.email, `boss@${id}.test`, 'e-mail trimmed and lower-cased');
    t.equal(admin.primaryCompanyId, r.companyId);
    t.equal(admin.isActive, true);
    t.ok(await verifyPassword('first password 123', admin.passwordHash));
    const adminRole = c.roles.find((x) => x.name === ADMIN_ROLE)!;
    t.same(
      c.userRoles.map((x) => [x.userId, x.roleId]),
      [[admin.id, adminRole.id]],
      'the admin holds the admin role',
    );
    t.same(
      c.userCompanies.map((x) => [x.userId, x.companyId]),
      [[admin.id, r.companyId]],
      'and belongs to the company',
    );
    await kernel.tenants.reload();
    t.equal(kernel.tenants.cached(id)?.schemaDigest, kernel.digest, 'the registry row records the digest');
  });

  await t.test('is idempotent: a second run creates nothing and keeps the password', async (t) => {
    const id = randomId('p');
    const first = await provisionTenant(kernel, input(id));
    const before = await contents(kernel, first.tenant.schema);
    const versions = async () => kernel.dbs.main.em.getConnection().execute(`select module, digest, applied_at::text from "${first.tenant.schema}"."${VERSION_TABLE}" order by module`);
    const versionsBefore = await versions();
    const second = await provisionTenant(kernel, input(id, { name: 'Renamed', admin: { email: `boss@${id}.test`, name: 'Other', password: 'second password 456' } }));
    t.equal(second.created, false);
    t.equal(second.companyId, first.companyId);
    t.equal(second.adminUserId, first.adminUserId);
    t.equal(second.tenant.name, `Tenant ${id}`, 'the registry row is left as it was');
    const after = await contents(kernel, first.tenant.schema);
    for (const key of Object.keys(before) as (keyof typeof before)[]) t.same(plain(after[key]), plain(before[key]), `${key} unchanged`);
    t.ok(await verifyPassword('first password 123', after.users[0].passwordHash), 'the admin keeps the first password');
    t.notOk(await verifyPassword('second password 456', after.users[0].passwordHash));
    t.same(await versions(), versionsBefore, 'the schema is not migrated again');
  });

  await t.test('refuses an invalid tenant id and registers nothing', async (t) => {
    const registered = async () => (await kernel.dbs.main.em.getConnection().execute(`select count(*)::int as n from "${kit.config.registrySchema}".tenants`))[0].n as number;
    const count = await registered();
    for (const id of ['A', 'x', 'Acme', '1acme', 'acme_corp', 'acme corp', '-acme', 'a'.repeat(41), '../../acme', 'acme;drop', '']) {
      const err = await provisionTenant(kernel, input(id)).then(
        () => undefined,
        (e: unknown) => e,
      );
      t.ok(err instanceof TenantError, JSON.stringify(id));
      t.equal((err as TenantError).code, 'INVALID_TENANT_ID');
    }
    t.equal(await registered(), count);
  });

  await t.test('refuses an unknown connection key', async (t) => {
    const id = randomId('p');
    const err = await provisionTenant(kernel, input(id, { connectionKey: 'nowhere' })).then(
      () => undefined,
      (e: unknown) => e,
    );
    t.equal((err as TenantError).code, 'UNKNOWN_CONNECTION');
    t.equal(await kernel.tenants.find(id), undefined);
  });

  await t.test('two tenants provisioned at once both succeed', async (t) => {
    const [a, b] = [randomId('c1'), randomId('c2')];
    const [ra, rb] = await Promise.all([provisionTenant(kernel, input(a)), provisionTenant(kernel, input(b))]);
    for (const r of [ra, rb]) {
      t.equal(r.created, true);
      const c = await contents(kernel, r.tenant.schema);
      t.equal(c.roles.length, 2);
      t.equal(c.users.length, 1);
      t.equal(c.userCompanies.length, 1);
      t.same(await pendingStatements(kernel.dbs.main, r.tenant.schema), [], `${r.tenant.id} has every table`);
    }
  });

  await t.test('one tenant provisioned twice at once: one creates, both succeed, nothing doubled', async (t) => {
    const id = randomId('same');
    const results = await Promise.all([provisionTenant(kernel, input(id)), provisionTenant(kernel, input(id))]);
    t.same(results.map((r) => r.created).sort(), [false, true]);
    t.equal(results[0].adminUserId, results[1].adminUserId);
    t.equal(results[0].companyId, results[1].companyId);
    const c = await contents(kernel, results[0].tenant.schema);
    t.same([c.roles.length, c.companies.length, c.users.length, c.userRoles.length, c.userCompanies.length], [2, 1, 1, 1, 1]);
  });

  const q = (sql: string, params: unknown[] = []) => kernel.dbs.main.em.getConnection().execute(sql, params) as Promise<Row[]>;
  const schemaExists = async (name: string) => (await q('select 1 from pg_namespace where nspname = ?', [name])).length > 0;
  const spareNames = async () => (await q(`select schema_name as name from "${kit.config.registrySchema}".spare_schemas order by created_at`)).map((r) => r.name as string);

  await t.test('a spare schema built ahead becomes the new tenant: renamed, not created', async (t) => {
    t.equal(kernel.config.provisionSpares, 2, 'PROVISION_SPARES by default');
    t.equal(await kernel.spares.refill(), 2, 'two spares built');
    t.equal(await kernel.spares.refill(), 0, 'a second refill builds none');
    const [oldest, next] = await spareNames();
    t.same(await pendingStatements(kernel.dbs.main, oldest), [], 'a spare holds every table of the modules');
    const id = randomId('sp');
    const r = await provisionTenant(kernel, input(id));
    t.equal(r.created, true);
    t.notOk(await schemaExists(oldest), 'the oldest spare was taken: renamed to the tenant schema');
    t.ok(await schemaExists(next), 'the other one is still ready');
    t.same(await pendingStatements(kernel.dbs.main, r.tenant.schema), [], 'the tenant has every table');
    const c = await contents(kernel, r.tenant.schema);
    t.same([c.roles.length, c.companies.length, c.users.length, c.userRoles.length, c.userCompanies.length], [2, 1, 1, 1, 1]);
    t.equal(r.tenant.schemaDigest, kernel.digest, 'registered at the loaded digest');
    await kernel.spares.idle();
    t.equal(await kernel.spares.ready(), 2, 'the taken spare is replaced in the background');
  });

  await t.test('spares of other modules are dropped and built again; never taken', async (t) => {
    const [stale] = await spareNames();
    await q(`update "${kit.config.registrySchema}".spare_schemas set digest = 'modules-of-before' where schema_name = ?`, [stale]);
    t.equal(await kernel.spares.ready(), 1);
    t.equal(await kernel.spares.refill(), 1, 'one built');
    t.notOk(await schemaExists(stale), 'the stale spare is dropped');
    t.notOk((await spareNames()).includes(stale));
  });

  await t.test(
    'a provisioning cut by a lost connection leaves no half tenant, and a retry makes it whole',
    { skip: onPglite && 'embedded PGlite has one connection: no second session to hold a row or end a backend' },
    async (t) => {
      for (const spare of [true, false]) {
        if (spare) await kernel.spares.refill();
        else await kernel.spares.dropAll();
        const id = randomId('cut');
        const sparesBefore = await spareNames();
        // another session registers the same id and does not commit: the provisioning makes the schema, its
        // tables and rows, then waits on that row (the registry row comes last), and its connection is ended there
        const other = new pg.Client({ connectionString: TEST_DATABASE_URL });
        await other.connect();
        t.teardown(() => other.end().catch(() => undefined));
        await other.query('begin');
        await other.query(`insert into "${kit.config.registrySchema}".tenants (id, name, schema_name) values ($1, 'held', $2)`, [id, schemaFor(id)]);
        const attempt = provisionTenant(kernel, input(id)).then(
          () => undefined,
          (e: Error) => e,
        );
        // watched from outside that transaction: inside it, pg_stat_activity stays as first read
        const watcher = new pg.Client({ connectionString: TEST_DATABASE_URL });
        await watcher.connect();
        t.teardown(() => watcher.end().catch(() => undefined));
        let pid: number | undefined;
        for (let i = 0; i < 400 && !pid; i++) {
          const { rows } = await watcher.query(`select pid from pg_stat_activity where wait_event_type = 'Lock' and query like $1 and pid <> pg_backend_pid()`, [`insert into %${id}%`]);
          pid = rows[0]?.pid;
          if (!pid) await new Promise((r) => setTimeout(r, 25));
        }
        t.ok(pid, `${spare ? 'with' : 'without'} a spare: the provisioning waits on the held registry row`);
        await watcher.query('select pg_terminate_backend($1)', [pid]);
        t.ok(await attempt, 'the provisioning failed');
        await other.query('rollback');
        t.equal(await kernel.tenants.find(id), undefined, 'not registered');
        t.notOk(await schemaExists(schemaFor(id)), 'no schema');
        t.same(await spareNames(), sparesBefore, spare ? 'the spare it took is a spare again' : 'no spare');
        const r = await provisionTenant(kernel, input(id));
        t.equal(r.created, true, 'the retry provisions it');
        const c = await contents(kernel, r.tenant.schema);
        t.same([c.roles.length, c.companies.length, c.users.length], [2, 1, 1]);
        await kernel.spares.idle();
      }
    },
  );
});
