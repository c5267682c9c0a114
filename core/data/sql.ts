// The data layer's few SQL primitives: identifier quoting, bind parameters
// collected while a statement is built, and running a statement on the
// request's connection (inside its transaction, when there is one).
import { CompiledQuery } from 'kysely';
import type { EntityManager } from '@mikro-orm/core';
import type { CallerValues } from '../access/permission-catalog.ts';
import type { Principal } from '../access/principal.ts';
import { onLane } from '../db/lane-pool.ts';

export type Row = Record<string, any>;

/** Identifiers come from validated manifests ([a-z0-9_]); quoting keeps SQL words usable as names. */
export const q = (name: string) => `"${name}"`;

/** timestamptz as Date#toISOString() spells it, so reads and writes answer alike */
export const iso = (col: string) => `to_char(${col} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * Bind parameters of one statement, with what compiled scopes read while the
 * statement is built: the tenant's schema, the company and the caller's values.
 */
export class Params {
  readonly values: unknown[] = [];
  readonly schema: string;
  readonly companyId: string | null;
  readonly #principal: Principal | undefined;
  /** the tenant's IANA time zone: whose day "${today}" is */
  readonly timeZone: string;
  constructor(schema: string, companyId: string | null, principal?: Principal, timeZone = 'UTC') {
    this.schema = schema;
    this.companyId = companyId;
    this.#principal = principal;
    this.timeZone = timeZone;
  }
  /** The values grant placeholders name ("${user.id}"), from the principal and company; made only when a statement binds one. */
  get caller(): CallerValues | undefined {
    const p = this.#principal;
    return p && { user: { id: p.id ?? '', companyIds: p.companyIds }, company: { id: this.companyId } };
  }
  add(v: unknown): string {
    this.values.push(v);
    return `$${this.values.length}`;
  }
  #tables: Set<string> | undefined;
  /** `"schema"."table"` of the statement's tenant */
  table(name: string): string {
    (this.#tables ??= new Set()).add(name);
    return `${q(this.schema)}.${q(name)}`;
  }
  /** the tables the statement reads or writes (what a cached result of it depends on) */
  get tables(): ReadonlySet<string> {
    return this.#tables ?? new Set();
  }
}

interface Executor {
  executeQuery(query: CompiledQuery): Promise<{ rows: Row[]; numAffectedRows?: bigint }>;
}

/** A statement on `em`: in its open transaction, else on a pooled connection of its tenant's lane (db/lane-pool.ts). */
export async function run(em: EntityManager, sql: string, params: unknown[]): Promise<Row[]> {
  const query = CompiledQuery.raw(sql, params);
  const trx = em.getTransactionContext() as Executor | undefined;
  if (trx) return (await trx.executeQuery(query)).rows;
  const client = (em.getConnection() as unknown as { getClient(): Executor }).getClient();
  return (await onLane(em.schema, () => client.executeQuery(query))).rows;
}
