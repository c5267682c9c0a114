// One way to make a context, for a request or without one: the tenant's
// connection and schema, the principal's ability, the company and languages.
// The HTTP pipeline, jobs, event subscribers, scripts and demo data all come
// through here, so each sees the same scoped data access.
import type { EntityManager } from '@mikro-orm/core';
import type { CrudContext } from '../crud/crud-service.ts';
import type { Ability } from '../access/abilities.ts';
import type { Principal } from '../access/principal.ts';
import type { Tenant } from '../tenancy/registry.ts';
import type { ReadOptions } from '../crud/row-mapper.ts';

export interface ContextInput {
  tenant: Tenant;
  principal: Principal;
  ability: Ability;
  /** the company the work is in; company-scoped entities need one */
  companyId: string | null;
  /** an EntityManager forked for the tenant's connection and schema */
  em: EntityManager;
  read: ReadOptions;
  writeLanguage: string;
}

export function crudContextOf(input: ContextInput): CrudContext {
  const { tenant, principal, companyId } = input;
  return {
    em: input.em,
    tenantId: tenant.id,
    schema: tenant.schema,
    principal,
    ability: input.ability,
    companyId,
    read: input.read,
    writeLanguage: input.writeLanguage,
    timeZone: tenant.timeZone,
    userId: principal.kind === 'user' ? principal.id : null,
  };
}
