// Provisioning a tenant: registry row, schema and tables, built-in roles, first
// company and first admin user. Idempotent: running it again changes nothing
// that exists (an existing admin keeps their password).
import type { Config } from '../config.ts';
import type { Databases } from '../db/databases.ts';
import type { EntityModel } from '../model/entity-model.ts';
import type { TenantRegistry } from './registry.ts';
import type { TenantMigrateDeps } from './migrate-tenants.ts';
import { hashPassword } from '../auth/passwords.ts';
import { ADMIN_ROLE, MEMBER_ROLE } from '../access/role-directory.ts';
import { migrateTenant } from './migrate-tenants.ts';
import { isTenantId, type Tenant } from './registry.ts';
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

/** What provisioning needs of the kernel. */
export interface ProvisionDeps extends TenantMigrateDeps {
  dbs: Pick<Databases, 'get' | 'orms'>;
  tenants: Pick<TenantRegistry, 'setDigest' | 'outdated' | 'insert' | 'setMigrationError'>;
  config: Pick<Config, 'defaultLanguage'>;
  model(name: string): EntityModel;
}

export async function provisionTenant(kernel: ProvisionDeps, input: ProvisionInput): Promise<ProvisionResult> {
  if (!isTenantId(input.id)) throw new TenantError('INVALID_TENANT_ID', `invalid tenant id "${input.id}": lower-case letters, digits and dashes, 2 to 40, starting with a letter`);
  const connectionKey = input.connectionKey ?? 'main';
  if (input.timeZone !== undefined && !isTimeZone(input.timeZone)) throw new TenantError('INVALID_TIME_ZONE', `"${input.timeZone}" is no IANA time zone (e.g. Europe/Berlin)`);
  if (!kernel.dbs.orms.has(connectionKey)) throw new TenantError('UNKNOWN_CONNECTION', `no database connection "${connectionKey}" is configured`);
  const { tenant, created } = await kernel.tenants.insert({
    id: input.id,
    name: input.name,
    connectionKey,
    defaultLanguage: input.defaultLanguage ?? kernel.config.defaultLanguage,
    timeZone: input.timeZone ?? 'UTC',
  });
  if (tenant.schemaDigest !== kernel.digest) await migrateTenant(kernel, tenant);
  const em = kernel.dbs.get(tenant.connectionKey).em.fork({ schema: tenant.schema });
  const E = (n: string) => kernel.model(n).ormEntity;
  const passwordHash = await hashPassword(input.admin.password);
  return em.transactional(async (tem) => {
    // Two provisionings of one tenant at once: the second waits, then finds every row.
    await tem.getConnection().execute('select pg_advisory_xact_lock(hashtext(?))', [`plinth:provision:${tenant.schema}`], 'all', tem.getTransactionContext());
    const upsert = async (entity: string, where: Row, data: Row): Promise<Row> =>
      ((await tem.findOne(E(entity), where)) as Row | null) ?? (tem.create(E(entity), { ...where, ...data } as never) as Row);
    const admin = await upsert('Role', { name: ADMIN_ROLE }, { description: 'Full access: every permission, passes requireAdmin', builtIn: true, permissions: [] });
    await upsert('Role', { name: MEMBER_ROLE }, { description: 'Signed-in member; holds no permission until given', builtIn: true, permissions: [] });
    const company = await upsert('Company', { code: input.company.code }, { name: { [tenant.defaultLanguage]: input.company.name }, isActive: true });
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
    return { tenant, companyId: company.id, adminUserId: user.id, created };
  });
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
