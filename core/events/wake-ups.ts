// Waking this process's job workers instead of having them poll. On embedded
// PGlite every poll is a query of the WASM database inside this process (an
// idle server spent 13-70 % of a core on its workers' fetches). So the workers
// poll rarely and are woken:
//   - by pg-boss's NOTIFY when a job is sent, due at once (in a transaction,
//     once it commits), on PostgreSQL from any process, on PGlite in-process;
//   - when a batch is done: more may wait (a tenant's jobs past its concurrency,
//     a burst), so the worker fetches again at once, until a fetch finds none;
//   - when a job comes due later (a startAfter, a retry's backoff), which NOTIFY
//     does not tell: one query per database finds each queue's earliest waiting
//     job, wakes the queues with one due, and runs again by a timer when the
//     next comes due, soon after a failure, and every SCAN_MS at least.
import type { PgBoss } from 'pg-boss';

/** the longest a job sent without a wake-up (another process, pg-boss itself) waits for its worker */
export const SCAN_MS = 30_000;
/** after a failure pg-boss writes the retry's time: the scan that reads it waits this long */
const AFTER_FAILURE_MS = 1000;

interface Database {
  boss: PgBoss;
  schema: string;
  queues: string[];
  timer?: NodeJS.Timeout;
  /** when the timer fires (ms since the epoch) */
  at: number;
  scanning?: boolean;
  again?: boolean;
}

export class WakeUps {
  #dbs = new Map<string, Database>();
  #onError: (err: unknown) => void;

  constructor(onError: (err: unknown) => void) {
    this.#onError = onError;
  }

  /** Watches `queues` of database `key` (its workers registered): scans now, then as due. */
  watch(key: string, boss: PgBoss, schema: string, queues: string[]): void {
    this.#dbs.set(key, { boss, schema, queues, at: Infinity });
    this.#arm(key, 0);
  }

  stop(): void {
    for (const db of this.#dbs.values()) clearTimeout(db.timer);
    this.#dbs.clear();
  }

  /** Wakes every worker of `queue` on database `key`: one sleeping fetches now, one busy fetches again when done. */
  wake(key: string, queue: string): void {
    this.#notify(key, queue, false);
  }

  /** A batch of `queue` is done: the workers holding one fetch again when done (more may wait), the idle sleep on. */
  again(key: string, queue: string): void {
    this.#notify(key, queue, true);
  }

  #notify(key: string, queue: string, busyOnly: boolean): void {
    const boss = this.#dbs.get(key)?.boss;
    if (!boss) return;
    for (const w of boss.getWipData()) if (w.name === queue && (!busyOnly || w.count > 0)) boss.notifyWorker(w.id);
  }

  /** A job of database `key` comes due at `at`: its queue is woken then. */
  dueAt(key: string, at: Date): void {
    this.#arm(key, at.getTime() - Date.now());
  }

  /** A job failed: its retry comes due at a time pg-boss chooses, which the next scan reads. */
  failed(key: string): void {
    this.#arm(key, AFTER_FAILURE_MS);
  }

  /** The scan of database `key` runs in `ms` (or earlier, as already armed). */
  #arm(key: string, ms: number): void {
    const db = this.#dbs.get(key);
    if (!db) return;
    const at = Date.now() + Math.max(0, Math.min(ms, SCAN_MS));
    if (db.timer && db.at <= at) return;
    clearTimeout(db.timer);
    db.at = at;
    // never negative: a clock tick between the two Date.now() calls made it -1 (Node warns on stderr)
    db.timer = setTimeout(() => void this.#scan(key), Math.max(0, at - Date.now()));
    db.timer.unref();
  }

  async #scan(key: string): Promise<void> {
    const db = this.#dbs.get(key);
    if (!db) return;
    db.timer = undefined;
    db.at = Infinity;
    // one scan at a time; one armed meanwhile runs after it
    if (db.scanning) return void (db.again = true);
    db.scanning = true;
    let next = SCAN_MS;
    try {
      for (const { name, in_ms } of await this.#waiting(db)) {
        if (in_ms === null) continue;
        const ms = Number(in_ms);
        if (ms <= 0) this.wake(key, name);
        else next = Math.min(next, ms);
      }
    } catch (err) {
      this.#onError(err);
    }
    db.scanning = false;
    const again = db.again;
    db.again = false;
    if (this.#dbs.get(key) === db) this.#arm(key, again ? 0 : next);
  }

  /** Per queue: in how many ms its earliest waiting job comes due (≤ 0: due now), or null when none waits. */
  async #waiting(db: Database): Promise<{ name: string; in_ms: number | string | null }[]> {
    const s = db.schema;
    // the index pg-boss keeps for its fetch (name, state, blocked, start_after): two probes per queue
    const first = (state: string) => `(select min(start_after) from ${s}.job j where j.name = q.name and j.state = '${state}' and not j.blocked)`;
    const sql = `select q.name, extract(epoch from least(${first('created')}, ${first('retry')}) - now()) * 1000 as in_ms from unnest($1::text[]) q(name)`;
    return (await db.boss.getDb().executeSql(sql, [db.queues])).rows;
  }
}
