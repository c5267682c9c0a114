// Which tables of a tenant changed since a result was read from them, for
// caches of derived results (analytics). Every committed write bumps its
// table's generation in this process at once and, batched a few milliseconds
// later, in every other process through NOTIFY. A cached result is stored
// under the generations read before its query ran, so a write committed while
// it ran makes it unreachable. Notifications lost while the LISTEN connection
// was down, or generations dropped to keep the map bounded, bump the epoch,
// which ends every stamp at once.
import { randomUUID } from 'node:crypto';
import type { Databases } from '../db/databases.ts';
import type { PgListener } from '../db/pg-listener.ts';

/** generations kept before the map is dropped (and the epoch bumped): bounds memory with thousands of tenants */
const MAX_TRACKED = 100_000;
/** how long writes are gathered before one NOTIFY tells the other processes */
const BROADCAST_DELAY_MS = 10;

export class DataChanges {
  #dbs: Databases;
  #channel: string;
  #origin = randomUUID();
  #generations = new Map<string, number>();
  #epoch = 0;
  #pending = new Map<string, Set<string>>();
  #timer: NodeJS.Timeout | undefined;
  #onChange: (() => void)[] = [];

  constructor(dbs: Databases, registrySchema: string) {
    this.#dbs = dbs;
    this.#channel = `plinth_changes_${registrySchema}`;
  }

  listenOn(listener: PgListener): void {
    listener.on(this.#channel, (payload) => {
      const [origin, tenantId, tables] = payload.split('\n');
      if (origin !== this.#origin && tables) this.#bump(tenantId, tables.split(','));
    });
    // notifications sent while the connection was down are lost: forget every stamp
    listener.onReconnect(() => {
      this.#reset();
      for (const fn of this.#onChange) fn();
    });
  }

  /** `fn` runs when a write committed, in this process or (PostgreSQL) another, and when announcements were lost. */
  onChange(fn: () => void): void {
    this.#onChange.push(fn);
  }

  /** The state of `tables` of a tenant, as a string that differs once any of them changed. */
  stamp(tenantId: string, tables: Iterable<string>): string {
    const parts = [...new Set(tables)].sort().map((e) => `${e}:${this.#generations.get(keyOf(tenantId, e)) ?? 0}`);
    return `${this.#epoch}|${parts.join(',')}`;
  }

  /** A transaction that wrote `tables` committed. */
  changed(tenantId: string, tables: Iterable<string>): void {
    const list = [...tables];
    this.#bump(tenantId, list);
    if (this.#dbs.embedded) return;
    let set = this.#pending.get(tenantId);
    if (!set) this.#pending.set(tenantId, (set = new Set()));
    for (const e of list) set.add(e);
    if (!this.#timer) this.#timer = setTimeout(() => void this.#broadcast(), BROADCAST_DELAY_MS).unref();
  }

  #bump(tenantId: string, tables: string[]): void {
    if (this.#generations.size + tables.length > MAX_TRACKED) this.#reset();
    for (const e of tables) {
      const key = keyOf(tenantId, e);
      this.#generations.set(key, (this.#generations.get(key) ?? 0) + 1);
    }
    for (const fn of this.#onChange) fn();
  }

  #reset(): void {
    this.#generations.clear();
    this.#epoch++;
  }

  async #broadcast(): Promise<void> {
    this.#timer = undefined;
    const batch = [...this.#pending].map(([tenantId, set]) => `${this.#origin}\n${tenantId}\n${[...set].join(',')}`);
    this.#pending.clear();
    for (let i = 0; i < batch.length; i += 100) {
      const part = batch.slice(i, i + 100);
      try {
        const sql = `select ${part.map(() => 'pg_notify(?, ?)').join(', ')}`;
        await this.#dbs.main.em.getConnection().execute(
          sql,
          part.flatMap((p) => [this.#channel, p]),
        );
      } catch {
        // the others miss these changes until their listener reconnects (which resets them) or a cache's time limit
      }
    }
  }
}

// a table name and a tenant id hold no newline or comma
const keyOf = (tenantId: string, table: string) => `${tenantId}\n${table}`;
