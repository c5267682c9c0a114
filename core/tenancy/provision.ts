// Provisioning a tenant: schema and tables, built-in roles, first company, first
// admin user and registry row, in one transaction when the tenant's database is
// the registry's: a provisioning cut by an outage leaves no half tenant, only a
// retry. The tables come from a spare schema built ahead (spare-schemas.ts) or
// from the create script, never from a diff. Idempotent: running it again
// changes nothing that exists (an existing admin keeps their password).
import type { Config } from '../config.ts';
import type { Databases } from '../db/databases.ts';
import type { EntityModel } from '../model/entity-model.ts';
import type { TenantRegistry } from './registry.ts';
import type { TenantMigrateDeps } from './migrate-tenants.ts';
import type { SpareSchemas } from './spare-schemas.ts';
import { hashPassword } from '../auth/passwords.ts';
import { ADMIN_ROLE, MEMBER_ROLE } from '../access/role-directory.ts';
import { buildSchema, migrateSchema, type Run } from '../db/migrator.ts';
import { migrateTenant } from './migrate-tenants.ts';
import { isTenantId, schemaFor, type NewTenant, type Tenant } from './registry.ts';
import { TenantError } from './errors.ts';

export interface ProvisionInput {
  id: string;
  name: string;
  connectionKey?: string;
  defaultLanguage?: string;
  /** IANA time zone of the tenant's scheduled work (default UTC) */
  timeZone?: string;
  company: { code: string; name: string };
  admin: { email: string; name: string; password: string };
}

export interface ProvisionResult {
  tenant: Tenant;
  companyId: string;
  adminUserId: string;
  created: boolean;
}

type Row = Record<string, any>;
type Em = ReturnType<Databases['main']['em']['fork']>;

/** What provisioning needs of the kernel. */
export interface ProvisionDeps extends TenantMigrateDeps {
  dbs: Pick<Databases, 'get' | 'orms' | 'main'>;
  tenants: Pick<TenantRegistry, 'setDigest' | 'outdated' | 'register' | 'exists' | 'find' | 'setMigrationError' | 'countsByConnection'>;
  spares: Pick<SpareSchemas, 'claim' | 'refillSoon'>;
  config: Pick<Config, 'defaultLanguage' | 'tenantPlacement'>;
  model(name: string): EntityModel;
}

export async function provisionTenant(kernel: ProvisionDeps, input: ProvisionInput): Promise<ProvisionResult> {
  if (!isTenantId(input.id)) throw new TenantError('INVALID_TENANT_ID', `invalid tenant id "${input.id}": lower-case letters, digits and dashes, 2 to 40, starting with a letter`);
  if (input.timeZone !== undefined && !isTimeZone(input.timeZone)) throw new TenantError('INVALID_TIME_ZONE', `"${input.timeZone}" is no IANA time zone (e.g. Europe/Berlin)`);
  if (input.connectionKey !== undefined && !kernel.dbs.orms.has(input.connectionKey)) {
    throw new TenantError('UNKNOWN_CONNECTION', `no database connection "${input.connectionKey}" is configured`);
  }
  // scrypt runs in libuv's thread pool while the schema is made
  const passwordHash = hashPassword(input.admin.password);
  passwordHash.catch(() => undefined);
  const existing = await kernel.tenants.find(input.id);
  if (existing) return complete(kernel, existing, input, await passwordHash);
  const made = await create(kernel, input, input.connectionKey ?? (await placement(kernel)), passwordHash);
  const tenant = (await kernel.tenants.find(input.id))!;
  // a concurrent call registered it first: this one found every row there
  return made ? { tenant, ...made.ids, created: made.registered } : complete(kernel, tenant, input, await passwordHash);
}

/** A new tenant: schema, tables, rows and registry row in one transaction on its database; null when a concurrent call registered it first. */
async function create(kernel: ProvisionDeps, input: ProvisionInput, connectionKey: string, passwordHash: Promise<string>) {
  const orm = kernel.dbs.get(connectionKey);
  const schema = schemaFor(input.id);
  // the registry's own database: the registry row commits with the schema
  const together = orm === kernel.dbs.main;
  const registration: NewTenant = {
    id: input.id,
    name: input.name,
    connectionKey,
    defaultLanguage: input.defaultLanguage ?? kernel.config.defaultLanguage,
    timeZone: input.timeZone ?? 'UTC',
    schemaDigest: kernel.digest,
  };
  // A schema of this name without a registry row (made by hand, or left on another database by a cut
  // provisioning): brought to the loaded modules first, by a diff in its own transactions.
  const leftOver = ((await orm.em.getConnection().execute('select 1 from pg_namespace where nspname = ?', [schema])) as unknown[]).length > 0;
  if (leftOver) await migrateSchema(orm, schema, kernel.versions, undefined, connectionKey);
  let spareTaken = false;
  const made = await orm.em
    .fork({ schema })
    .transactional(async (tem) => {
      const ctx = tem.getTransactionContext();
      const run: Run = (sql, params = []) => tem.getConnection().execute(sql, params as unknown[], 'all', ctx);
      // Two provisionings of one tenant at once: the second waits, then finds it registered (or its rows).
      await run('select pg_advisory_xact_lock(hashtext(?))', [`plinth:provision:${schema}`]);
      if (together && (await kernel.tenants.exists(input.id, run))) return null;
      await run('select pg_advisory_xact_lock(hashtext(?))', [`plinth:migrate:${schema}`]);
      const fresh = !((await run('select 1 from pg_namespace where nspname = ?', [schema])) as unknown[]).length;
      if (fresh) {
        spareTaken = together && (await kernel.spares.claim(run, schema));
        if (!spareTaken) await buildSchema(run, orm, schema, kernel.versions);
      }
      const ids = await seed(kernel, tem, input, await passwordHash, registration.defaultLanguage, fresh);
      // last: a concurrent registration of this id (not through provisioning) makes this one wait here, then give way
      const registered = together ? await kernel.tenants.register(registration, run) : false;
      if (together && !registered) throw new RegisteredMeanwhile();
      return { ids, registered };
    })
    .catch((err) => {
      if (err instanceof RegisteredMeanwhile) return null;
      throw err;
    });
  if (spareTaken) kernel.spares.refillSoon();
  if (made && !together) made.registered = await kernel.tenants.register(registration);
  return made;
}

class RegisteredMeanwhile extends Error {}

/** The database a new tenant goes to when the caller names none (TENANT_PLACEMENT). */
async function placement(kernel: ProvisionDeps): Promise<string> {
  const keys = [...kernel.dbs.orms.keys()];
  if (kernel.config.tenantPlacement === 'main' || keys.length === 1) return 'main';
  const counts = await kernel.tenants.countsByConnection();
  // the fewest tenants; on a tie, main first, then by name
  const rank = (key: string) => [counts.get(key) ?? 0, key === 'main' ? 0 : 1, key] as const;
  return keys.sort((a, b) => {
    const [x, y] = [rank(a), rank(b)];
    return x[0] - y[0] || x[1] - y[1] || x[2].localeCompare(y[2]);
  })[0];
}

/** A registered tenant provisioned again: migrated if it is behind, and any missing role, company or admin added. */
async function complete(kernel: ProvisionDeps, tenant: Tenant, input: ProvisionInput, passwordHash: string): Promise<ProvisionResult> {
  if (tenant.schemaDigest !== kernel.digest) await migrateTenant(kernel, tenant);
  const em = kernel.dbs.get(tenant.connectionKey).em.fork({ schema: tenant.schema });
  return em.transactional(async (tem) => {
    await tem.getConnection().execute('select pg_advisory_xact_lock(hashtext(?))', [`plinth:provision:${tenant.schema}`], 'all', tem.getTransactionContext());
    const ids = await seed(kernel, tem, input, passwordHash, tenant.defaultLanguage, false);
    return { tenant, ...ids, created: false };
  });
}

/** The built-in roles, the first company and its admin; in a schema that may hold them (not fresh), only those missing. */
async function seed(kernel: ProvisionDeps, tem: Em, input: ProvisionInput, passwordHash: string, language: string, fresh: boolean) {
  const E = (n: string) => kernel.model(n).ormEntity;
  const upsert = async (entity: string, where: Row, data: Row): Promise<Row> =>
    ((!fresh && ((await tem.findOne(E(entity), where)) as Row | null)) || tem.create(E(entity), { ...where, ...data } as never)) as Row;
  const admin = await upsert('Role', { name: ADMIN_ROLE }, { description: 'Full access: every permission, passes requireAdmin', builtIn: true, permissions: [] });
  await upsert('Role', { name: MEMBER_ROLE }, { description: 'Signed-in member; holds no permission until given', builtIn: true, permissions: [] });
  const company = await upsert('Company', { code: input.company.code }, { name: { [language]: input.company.name }, isActive: true });
  const user = await upsert(
    'User',
    { email: input.admin.email.trim().toLowerCase() },
    {
      name: input.admin.name,
      passwordHash,
      isActive: true,
      primaryCompanyId: company.id,
    },
  );
  await upsert('UserRole', { userId: user.id, roleId: admin.id }, {});
  await upsert('UserCompany', { userId: user.id, companyId: company.id }, {});
  await tem.flush();
  return { companyId: company.id as string, adminUserId: user.id as string };
}

/** Whether `tz` is a time zone this runtime knows (the cron scheduler uses the same database). */
export function isTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}
