// Wake-ups between processes: module code that waits for something (a client
// long-polling for work) sleeps on a topic of its tenant, and the code that
// made it happen signals the topic once its transaction committed. The
// signalling process wakes its own waiters at once and tells the others with
// NOTIFY (their LISTEN connection delivers it); embedded PGlite serves one
// process only. A signal is a hint, never the data: a waiter looks again, and
// waits with a timeout, since a notification sent while a listener was down
// is lost.
import type { Databases } from './databases.ts';
import { randomUUID } from 'node:crypto';
import type { PgListener } from './pg-listener.ts';

type Waiter = () => void;

export class Signals {
  #dbs: Databases;
  #channel: string;
  #waiters = new Map<string, Set<Waiter>>();
  /** this process's mark on its notifications: it woke its own waiters already */
  #origin = randomUUID();

  constructor(dbs: Databases, registrySchema: string) {
    this.#dbs = dbs;
    this.#channel = `plinth_signals_${registrySchema}`;
  }

  listenOn(listener: PgListener): void {
    listener.on(this.#channel, (payload) => {
      const cut = payload.indexOf('\n');
      if (payload.slice(0, cut) !== this.#origin) this.#wake(payload.slice(cut + 1));
    });
  }

  /** Wakes every waiter on the tenant's topic, in every process. */
  async signal(tenantId: string, topic: string): Promise<void> {
    const key = keyOf(tenantId, topic);
    this.#wake(key);
    if (!this.#dbs.embedded) await this.#dbs.main.em.getConnection().execute('select pg_notify(?, ?)', [this.#channel, `${this.#origin}\n${key}`]);
  }

  /** Resolves true when the topic is signalled within `ms`, false when the time ran out or `abort` fired. */
  wait(tenantId: string, topic: string, ms: number, abort?: AbortSignal): Promise<boolean> {
    const key = keyOf(tenantId, topic);
    return new Promise((resolve) => {
      let set = this.#waiters.get(key);
      if (!set) this.#waiters.set(key, (set = new Set()));
      const done = (woken: boolean) => {
        clearTimeout(timer);
        abort?.removeEventListener('abort', onAbort);
        set.delete(waiter);
        if (!set.size && this.#waiters.get(key) === set) this.#waiters.delete(key);
        resolve(woken);
      };
      const waiter = () => done(true);
      const onAbort = () => done(false);
      const timer = setTimeout(() => done(false), Math.max(0, ms));
      set.add(waiter);
      if (abort?.aborted) done(false);
      else abort?.addEventListener('abort', onAbort, { once: true });
    });
  }

  #wake(key: string): void {
    for (const waiter of [...(this.#waiters.get(key) ?? [])]) waiter();
  }
}

// a tenant id holds no newline (TENANT_ID_PATTERN), so the pair splits back unambiguously
const keyOf = (tenantId: string, topic: string) => `${tenantId}\n${topic}`;
