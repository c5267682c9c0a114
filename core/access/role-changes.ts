// A change of a tenant's roles reaches every process at once, as tenant status
// and revocations do: the process that wrote it drops its cached copies and
// announces the tenant with NOTIFY, every other process drops its copies on
// LISTEN. Notifications sent while the listening connection was down are lost:
// after it reconnects, every tenant's roles are dropped (subscribers get null).
// Embedded PGlite serves one process only.
import type { Databases } from '../db/databases.ts';
import type { PgListener } from '../db/pg-listener.ts';

/** the tenant whose roles changed, or null: any tenant's may have (notifications were lost) */
type Subscriber = (tenantId: string | null) => void;

export class RoleChanges {
  #dbs: Databases;
  #channel: string;
  #subscribers = new Set<Subscriber>();

  constructor(dbs: Databases, registrySchema: string) {
    this.#dbs = dbs;
    this.#channel = `plinth_roles_${registrySchema}`;
  }

  /** Called with the tenant whose roles changed, here or in another process; returns an unsubscribe. */
  subscribe(fn: Subscriber): () => void {
    this.#subscribers.add(fn);
    return () => {
      this.#subscribers.delete(fn);
    };
  }

  listenOn(listener: PgListener): void {
    listener.on(this.#channel, (tenantId) => this.#deliver(tenantId));
    listener.onReconnect(() => this.#deliver(null));
  }

  /** After a write to the tenant's roles (or who holds them) committed. */
  async announce(tenantId: string): Promise<void> {
    this.#deliver(tenantId);
    if (!this.#dbs.embedded) await this.#dbs.main.em.getConnection().execute('select pg_notify(?, ?)', [this.#channel, tenantId]);
  }

  #deliver(tenantId: string | null): void {
    for (const fn of this.#subscribers) fn(tenantId);
  }
}
