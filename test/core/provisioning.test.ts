// Provisioning a tenant: registry row, schema, built-in roles, first company
// and admin. Idempotent, refuses bad ids, and safe to run concurrently.
import t from 'tap';
import type { Kernel } from '../../core/kernel.ts';
import { provisionTenant, type ProvisionInput } from '../../core/tenancy/provision.ts';
import { TenantError } from '../../core/tenancy/errors.ts';
import { VERSION_TABLE } from '../../core/db/schema-versions.ts';
import { pendingStatements } from '../../core/db/migrator.ts';
import { verifyPassword } from '../../core/auth/passwords.ts';
import { ADMIN_ROLE, MEMBER_ROLE } from '../../core/access/role-directory.ts';
import { kernelKit, randomId } from '../fixtures/kernels.ts';

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
    for (const id of ['A', 'x', 'Acme', '1acme', 'acme_corp', 'acme corp', '-acme', 'a'.repeat(41), '../acme', 'acme;drop', '']) {
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
});
