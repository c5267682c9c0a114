// The dispatcher: committed outbox rows become subscriber jobs, in the
// transaction that marks the rows dispatched. Every process may run it: each
// row is taken by one (SKIP LOCKED), and a crash before the commit leaves it
// pending for the next. Tenants are served in turn, so a tenant's burst waits
// its turn like everyone else's events.
import type { JobInsert, PgBoss } from 'pg-boss';
import type { Config } from '../config.ts';
import type { Databases } from '../db/databases.ts';
import { eventOf, type Outbox, type PlinthEvent } from '../data/outbox.ts';
import type { DataChanges } from '../data/changes.ts';
import { run, type Row } from '../data/sql.ts';
import type { Subscriber } from '../context/plugin-module.ts';
import { matchesPattern } from '../manifest/events.ts';
import { txDb, type JobQueues } from './job-queues.ts';
import { SCAN_MS as IDLE_MS } from './wake-ups.ts';

export interface Log {
  error(obj: unknown, msg?: string): void;
  warn(obj: unknown, msg?: string): void;
}

export interface NamedSubscriber {
  /** "<module>.<name>" */
  name: string;
  def: Subscriber;
}

/** Events of one tenant and company for one subscriber, oldest first. */
export interface SubscriberJob {
  tenantId: string;
  companyId: string | null;
  subscriber: string;
  events: PlinthEvent[];
}

/** events one subscriber job carries at most */
const EVENTS_PER_JOB = 100;
/** after events were written, how long the dispatcher looks every pollMs (for them to commit, and more to come) */
const WRITE_WINDOW_MS = 5000;
/**
 * How often an idle dispatcher looks on PostgreSQL: a write committed in another process wakes it
 * (data/changes.ts announces every one), so this bounds only an event emitted there without a write.
 */
const SHARED_IDLE_MS = 2000;

interface DispatcherDeps {
  dbs: Databases;
  outbox: Outbox;
  changes?: DataChanges;
  queues: JobQueues;
  subscribers: NamedSubscriber[];
  queue: string;
  options: Pick<Config['events'], 'pollMs' | 'batchSize' | 'perTenant'>;
}

export class Dispatcher {
  #deps: DispatcherDeps;
  #running = false;
  #loops: Promise<void>[] = [];
  #wake: (() => void)[] = [];
  /** loops sleeping while idle: a write wakes them */
  #idle = new Set<() => void>();
  #lastWrite = -Infinity;
  /** how long an idle loop sleeps */
  #idleMs: number;
  /** per database: the tenant the last batch ended with */
  #cursor = new Map<string, string>();

  constructor(deps: DispatcherDeps) {
    this.#deps = deps;
    // embedded PGlite serves this process alone: every event is written here, so it need not poll while none is
    this.#idleMs = deps.dbs.embedded ? IDLE_MS : Math.max(deps.options.pollMs, SHARED_IDLE_MS);
    const written = () => {
      this.#lastWrite = Date.now();
      for (const wake of this.#idle) wake();
    };
    // events being written here (before they commit), and writes committed here or in another process
    deps.outbox.onWrite(written);
    deps.changes?.onChange(written);
  }

  /**
   * Dispatches on database `key` until stopped: at once while batches come back full, else every
   * pollMs for a while after a write, else every SHARED_IDLE_MS (PostgreSQL) or IDLE_MS (PGlite).
   */
  start(key: string, log: Log): void {
    this.#running = true;
    this.#loops.push(this.#loop(key, log));
  }

  async stop(): Promise<void> {
    this.#running = false;
    this.#wake.splice(0).forEach((w) => w());
    await Promise.all(this.#loops.splice(0));
  }

  /** Dispatches every database's pending rows now; resolves when the outboxes are drained. */
  async drain(): Promise<number> {
    let total = 0;
    for (const key of this.#deps.queues.keys) {
      for (let n = -1; n !== 0;) total += n = await this.#dispatch(key, this.#deps.queues.boss(key));
    }
    return total;
  }

  async #loop(key: string, log: Log): Promise<void> {
    const boss = this.#deps.queues.boss(key);
    let failures = 0;
    while (this.#running) {
      let handed = 0;
      try {
        handed = await this.#dispatch(key, boss);
        failures = 0;
      } catch (err) {
        // the database is gone or restarting: back off, then try again (the rows stay pending)
        failures++;
        if (this.#running) log.error({ err, database: key }, 'event dispatch failed');
      }
      if (failures) await this.#sleep(Math.min(30_000, 250 * 2 ** failures));
      else if (handed < this.#deps.options.batchSize) {
        const writing = Date.now() - this.#lastWrite < WRITE_WINDOW_MS;
        await this.#sleep(writing ? this.#deps.options.pollMs : this.#idleMs, !writing);
      }
    }
  }

  #sleep(ms: number, idle = false): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#wake = this.#wake.filter((w) => w !== done);
        this.#idle.delete(done);
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, ms));
      this.#wake.push(done);
      if (idle) this.#idle.add(done);
    });
  }

  /** One batch: pending rows, fairly across tenants, become subscriber jobs in the transaction that marks them. */
  async #dispatch(key: string, boss: PgBoss): Promise<number> {
    const em = this.#deps.dbs.get(key).em.fork();
    return em.transactional(async (tx) => {
      const rows = await this.#claim(tx, key);
      if (!rows.length) return 0;
      // one job per (tenant, company, subscriber) and up to EVENTS_PER_JOB events: a burst costs a job per
      // hundred events, not per event
      const groups = new Map<string, SubscriberJob>();
      for (const row of rows) {
        const event = eventOf(row);
        for (const s of this.#deps.subscribers) {
          if (!s.def.events.some((p) => matchesPattern(p, event.type))) continue;
          const key = `${event.tenantId}\u0000${event.companyId ?? ''}\u0000${s.name}`;
          let group = groups.get(key);
          if (!group) groups.set(key, (group = { tenantId: event.tenantId, companyId: event.companyId, subscriber: s.name, events: [] }));
          group.events.push(event);
        }
      }
      const jobs: JobInsert<SubscriberJob>[] = [];
      for (const g of groups.values()) {
        for (let i = 0; i < g.events.length; i += EVENTS_PER_JOB) jobs.push({ data: { ...g, events: g.events.slice(i, i + EVENTS_PER_JOB) }, group: { id: g.tenantId } });
      }
      if (jobs.length) await boss.insert(this.#deps.queue, jobs, { db: txDb(tx) });
      await run(tx, `update ${this.#deps.outbox.table} set dispatched_at = now() where id = any($1::uuid[])`, [rows.map((r) => r.id)]);
      return rows.length;
    });
  }

  /**
   * Locks up to batchSize pending rows, at most perTenant of each tenant, the
   * tenants taken in turn from where the last batch stopped (a skip scan of
   * the pending index: one probe per tenant, however long a tenant's backlog),
   * so a tenant's burst waits its turn like everyone else.
   */
  async #claim(tx: Parameters<typeof run>[0], key: string): Promise<Row[]> {
    const { outbox, options } = this.#deps;
    const t = outbox.table;
    const after = this.#cursor.get(key) ?? '';
    const pass = (from: string, upTo: string | null, limit: number) =>
      run(
        tx,
        `with recursive tenants(id) as (
           (select tenant_id from ${t} where dispatched_at is null and tenant_id > $1 order by tenant_id limit 1)
           union all
           select (select e.tenant_id from ${t} e where e.dispatched_at is null and e.tenant_id > tenants.id order by e.tenant_id limit 1) from tenants where tenants.id is not null)
         select x.* from tenants cross join lateral (
           select * from ${t} where dispatched_at is null and tenant_id = tenants.id order by id limit $2 for update skip locked) x
         where tenants.id is not null${upTo === null ? '' : ' and tenants.id <= $4'}
         limit $3`,
        upTo === null ? [from, options.perTenant, limit] : [from, options.perTenant, limit, upTo],
      );
    const rows = await pass(after, null, options.batchSize);
    // wrapped around: the tenants up to where the last batch stopped
    if (rows.length < options.batchSize && after) rows.push(...(await pass('', after, options.batchSize - rows.length)));
    if (rows.length) this.#cursor.set(key, rows[rows.length - 1].tenant_id);
    return rows;
  }
}
