// The transactional outbox: every generated write and every domain event a
// module emits is a row here, inserted in the transaction of the change (a
// rollback leaves none). The dispatcher (core/events/) hands committed rows to
// subscribers and webhooks. One table per database, in the registry schema
// beside the tenant registry, so one indexed query finds what is pending for
// every tenant of that database, however many there are.
import { v7 as uuidv7 } from 'uuid';
import type { EntityManager } from '@mikro-orm/core';
import type { Databases } from '../db/databases.ts';
import type { Principal } from '../access/principal.ts';
import { Params, run } from './sql.ts';

/** An event as subscribers and webhooks receive it. */
export interface PlinthEvent {
  /** UUIDv7: time-ordered, the idempotency key of every delivery */
  id: string;
  /** `<module>.<entity>.<action>`, e.g. catalog.product.updated */
  type: string;
  /** the tenant whose data changed */
  tenantId: string;
  /** the row's company (else the writer's); null for tenant-wide data */
  companyId: string | null;
  /** the entity the event is about (Lead); null for a domain event that names none */
  entity: string | null;
  /** the row the event is about; null when there is none */
  entityId: string | null;
  /** who caused it: a user's or client's id, null for the system */
  actor: { kind: Principal['kind']; id: string | null };
  /** when its transaction ran, ISO 8601 */
  occurredAt: string;
  /** a write's: { row (the API shape, every translation), changes ({ field: { before, after } }) }; a domain event's as its manifest declares */
  payload: Record<string, unknown>;
  /** the version of the payload's schema (the manifest's `version`, default 1) */
  payloadVersion: number;
}

export type NewEvent = Pick<PlinthEvent, 'type' | 'entity' | 'entityId' | 'payload'> & { payloadVersion?: number };

/** Where events are written: a statement's tenant, company and actor. */
export interface EventSource {
  em: EntityManager;
  tenantId: string;
  companyId: string | null;
  principal: Principal;
}

export class Outbox {
  readonly table: string;
  readonly receiptTable: string;
  #schema: string;
  #onWrite: (() => void)[] = [];

  constructor(schema: string) {
    this.#schema = schema;
    this.table = `"${schema}".events`;
    this.receiptTable = `"${schema}".event_receipts`;
  }

  /** Creates the tables on every database once; the advisory lock keeps parallel starts from racing. */
  async ensure(dbs: Databases): Promise<void> {
    for (const orm of dbs.orms.values()) {
      await orm.em.fork().transactional(async (tem) => {
        const ctx = tem.getTransactionContext();
        const conn = tem.getConnection();
        await conn.execute('select pg_advisory_xact_lock(hashtext(?))', [`plinth:outbox:${this.#schema}`], 'all', ctx);
        for (const sql of this.#ddl()) await conn.execute(sql, [], 'run', ctx);
      });
    }
  }

  #ddl(): string[] {
    return [
      `create schema if not exists "${this.#schema}"`,
      // payload json, not jsonb: written on every write, read once by the dispatcher, never queried inside; kept as sent costs least
      `create table if not exists ${this.table} (
        id uuid primary key,
        tenant_id text not null,
        company_id uuid,
        type text not null,
        entity text,
        entity_id text,
        actor_kind text not null,
        actor_id text,
        occurred_at timestamptz not null default now(),
        payload json not null,
        payload_version integer not null default 1,
        dispatched_at timestamptz)`,
      // the dispatcher's queue: only what is not yet handed on, by tenant (taken in turn), oldest first
      `create index if not exists events_pending_tenant on ${this.table} (tenant_id, id) where dispatched_at is null`,
      // every index costs each write: the primary key (reads by id) and the pending one are all the runtime uses
      `drop index if exists "${this.#schema}".events_tenant`,
      `drop index if exists "${this.#schema}".events_pending`,
      // (event, subscriber) pairs handled, written in the handler's transaction: a redelivered event is skipped
      `create table if not exists ${this.receiptTable} (
        event_id uuid not null,
        subscriber text not null,
        handled_at timestamptz not null default now(),
        primary key (event_id, subscriber))`,
    ];
  }

  /** `fn` runs whenever events are written, before they commit: the dispatcher of this process looks out for them. */
  onWrite(fn: () => void): void {
    this.#onWrite.push(fn);
  }

  /** Writes events in `src`'s transaction (or as one statement outside one). */
  async record(src: EventSource, events: NewEvent[]): Promise<void> {
    if (!events.length) return;
    const p = new Params('', src.companyId);
    await run(src.em, this.insert(p, src, events), p.values);
  }

  /**
   * The insert of `events` as SQL binding its values to `p`: a generated write
   * sends it as a CTE of its own statement (data/table.ts), so recording its
   * event costs no extra round trip.
   */
  insert(p: Params, src: Omit<EventSource, 'em'>, events: NewEvent[]): string {
    for (const fn of this.#onWrite) fn();
    const rows = events.map((e) => {
      const values = [uuidv7(), src.tenantId, src.companyId, e.type, e.entity, e.entityId, src.principal.kind, src.principal.id, JSON.stringify(e.payload), e.payloadVersion ?? 1];
      return `(${values.map((v) => p.add(v)).join(', ')})`;
    });
    return `insert into ${this.table} (id, tenant_id, company_id, type, entity, entity_id, actor_kind, actor_id, payload, payload_version) values ${rows.join(', ')}`;
  }

  /** Event `id` of `src`'s tenant, while it is kept. */
  async read(src: EventSource, id: string): Promise<PlinthEvent | null> {
    if (!/^[0-9a-f-]{36}$/i.test(id)) return null;
    const [row] = await run(src.em, `select * from ${this.table} where id = $1 and tenant_id = $2`, [id, src.tenantId]);
    return row ? eventOf(row) : null;
  }

  /**
   * Marks (event, subscriber) handled in `em`'s transaction for each event id;
   * returns the ids that were not yet (a redelivered one was: its work must not run again).
   */
  async receipts(em: EntityManager, eventIds: string[], subscriber: string): Promise<string[]> {
    const rows = await run(em, `insert into ${this.receiptTable} (event_id, subscriber) select unnest($1::uuid[]), $2 on conflict do nothing returning event_id as "id"`, [eventIds, subscriber]);
    return rows.map((r) => r.id as string);
  }
}

/** An outbox row as a PlinthEvent. */
export function eventOf(r: Record<string, any>): PlinthEvent {
  return {
    id: r.id,
    type: r.type,
    tenantId: r.tenant_id,
    companyId: r.company_id,
    entity: r.entity,
    entityId: r.entity_id,
    actor: { kind: r.actor_kind, id: r.actor_id },
    occurredAt: r.occurred_at instanceof Date ? r.occurred_at.toISOString() : new Date(r.occurred_at).toISOString(),
    payload: r.payload,
    payloadVersion: r.payload_version,
  };
}
