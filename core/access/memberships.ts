// Who a signed-in user is in their tenant right now: the roles they hold and
// the active companies they belong to, their primary company first. Requests
// and ctx.as() read it here, never from the access token (which names only the
// user and the session), so a role or company taken away, or a deactivation,
// stops the very next request. Cached per tenant: a committed write to a user's
// status, a role, the links or a company drops the tenant's entries in every
// process (context/membership-hooks.ts → access/role-changes.ts), and a lost
// notification drops them all.
import { LRUCache } from 'lru-cache';
import type { EntityManager } from '@mikro-orm/core';
import type { Databases } from '../db/databases.ts';
import type { EntityModel } from '../model/entity-model.ts';
import type { Principal } from './principal.ts';

/** What memberships are read with: the tenants' connections and the identity entities. */
export interface MembershipDeps {
  dbs: Pick<Databases, 'get'>;
  model(name: string): EntityModel;
}

interface TenantRef {
  id: string;
  schema: string;
  connectionKey: string;
}

/** a tenant's users, most recently loaded last; null: no such active user */
type Users = Map<string, Principal | null>;

// a tenant with more users than this active at once reads the oldest again
const USERS_PER_TENANT = 10_000;

export class Memberships {
  #deps: MembershipDeps;
  #byTenant: LRUCache<string, Users>;

  constructor(deps: MembershipDeps, opts: { tenants?: number } = {}) {
    this.#deps = deps;
    this.#byTenant = new LRUCache({ max: opts.tenants ?? 10_000 });
  }

  /**
   * The user as a principal with their current roles and companies (the
   * default company first); null when the user is gone or inactive. Cached
   * principals are shared: never change one, make a new one. `em`: a
   * transaction's, read on its connection when the user is not cached
   * (embedded PGlite has one connection, which the transaction holds); such
   * a read is not cached, as the transaction may not commit.
   */
  principal(tenant: TenantRef, userId: string, em?: EntityManager): Principal | null | Promise<Principal | null> {
    let users = this.#byTenant.get(tenant.id);
    const hit = users?.get(userId);
    if (hit !== undefined) return hit;
    if (em) return this.#read(em, tenant, userId);
    if (!users) this.#byTenant.set(tenant.id, (users = new Map()));
    return this.#load(tenant, userId, users);
  }

  /** Reads the user again at their next request (a login: what was written behind Plinth's back shows then). */
  forget(tenantId: string, userId: string): void {
    this.#byTenant.peek(tenantId)?.delete(userId);
  }

  invalidate(tenantId: string): void {
    this.#byTenant.delete(tenantId);
  }

  invalidateAll(): void {
    this.#byTenant.clear();
  }

  async #load(tenant: TenantRef, userId: string, users: Users): Promise<Principal | null> {
    const principal = await this.#read(this.#deps.dbs.get(tenant.connectionKey).em.fork({ schema: tenant.schema }), tenant, userId);
    // kept only if the tenant's entries were not dropped while this read ran: it may predate the change
    if (this.#byTenant.peek(tenant.id) === users) {
      if (users.size >= USERS_PER_TENANT) users.delete(users.keys().next().value!);
      users.set(userId, principal);
    }
    return principal;
  }

  async #read(em: EntityManager, tenant: TenantRef, userId: string): Promise<Principal | null> {
    const rows = (await em.getConnection().execute(this.#query(tenant.schema), [userId], 'all', em.getTransactionContext())) as { roles: string[] | string; companyIds: string[] | string }[];
    const row = rows[0];
    return row ? Object.freeze({ kind: 'user' as const, id: userId, roles: list(row.roles), companyIds: list(row.companyIds) }) : null;
  }

  /** One statement: the active user's role names and active companies (the primary one first, then by code). */
  #query(schema: string): string {
    const m = (name: string) => this.#deps.model(name);
    const col = (entity: string, field: string) => `"${m(entity).byName.get(field)!.column}"`;
    const t = (entity: string) => `"${schema}"."${m(entity).table}"`;
    return `select
      coalesce((select json_agg(r."name" order by r."name") from ${t('Role')} r
        join ${t('UserRole')} ur on ur.${col('UserRole', 'roleId')} = r."id"
        where ur.${col('UserRole', 'userId')} = u."id"), '[]') as "roles",
      coalesce((select json_agg(c."id" order by c."id" = u.${col('User', 'primaryCompanyId')} desc, c.${col('Company', 'code')})
        from ${t('Company')} c join ${t('UserCompany')} uc on uc.${col('UserCompany', 'companyId')} = c."id"
        where uc.${col('UserCompany', 'userId')} = u."id" and c.${col('Company', 'isActive')}), '[]') as "companyIds"
      from ${t('User')} u where u."id" = ? and u.${col('User', 'isActive')}`;
  }
}

/** json_agg comes back parsed on PostgreSQL and as text on some drivers */
const list = (v: string[] | string): string[] => (typeof v === 'string' ? (JSON.parse(v) as string[]) : v).map(String);
