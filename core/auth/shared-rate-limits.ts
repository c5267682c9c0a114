// Request limits every process counts together (@fastify/rate-limit's store).
// As in the library's own memory store, a key's window starts at its first hit
// and lasts `timeWindow`; hits are counted here in memory on the hot path and
// summed in a table of the registry schema by one statement per process every
// `syncMs` (default 1 s): each sync adds this process's new hits of the keys it
// saw (and of those past half their limit) and reads back the window and
// total of all processes (the earliest open window wins). A request never waits for the database, so a caller spreading
// requests over N processes gets at most the limit plus what the other
// processes let through since their last sync; during a database outage each
// process counts its own until the sync works again.
import type { Databases } from '../db/databases.ts';
import { ensurePlatformTables, platformConnection } from './platform-tables.ts';

interface Entry {
  /** the window's first millisecond */
  start: number;
  windowMs: number;
  /** hits of all processes as the last sync read them */
  total: number;
  /** hits of this process not yet added to the table */
  pending: number;
  /** hit since the last sync: its total is read back */
  touched: boolean;
  /** the limit: a key past half of it is read back at every sync, hit or not, so every process learns when it is reached */
  max: number;
}

export interface RateState {
  current: number;
  ttl: number;
}

type Callback = (err: Error | null, res: RateState) => void;

/** The store interface of @fastify/rate-limit. */
export interface RateLimitStore {
  incr(key: string, cb: Callback, timeWindow: number, max: number): void;
  read(key: string, cb: Callback, timeWindow: number, max?: number): void;
  child(routeOptions: unknown): RateLimitStore;
}

const BATCH = 1000;
const PRUNE_EVERY_MS = 60_000;
const STOP_WAIT_MS = 1000;

/**
 * `p`, or a rejection after `ms`: a statement that never answers (a wedged
 * pool, a silent network) must not stop every later sync. If it does commit
 * late, its hits are sent again and counted twice: a stricter limit, never a
 * looser one.
 */
function within<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

export class SharedRateLimits {
  #dbs: Databases;
  #schema: string;
  #table: string;
  #syncMs: number;
  #timeoutMs: number;
  #maxKeys: number;
  #entries = new Map<string, Entry>();
  #timer: NodeJS.Timeout | undefined;
  #syncing: Promise<void> | undefined;
  /** the sync that follows the one under way, shared by everyone who asked meanwhile */
  #queued: Promise<void> | undefined;
  #prunedAt = 0;
  /** the last sync's failure, cleared by the next success (health and tests look) */
  lastError: unknown;

  constructor(dbs: Databases, schema: string, opts: { syncMs: number; maxKeys?: number }) {
    this.#dbs = dbs;
    this.#schema = schema;
    this.#table = `"${schema}".rate_limits`;
    this.#syncMs = opts.syncMs;
    this.#timeoutMs = Math.max(2000, opts.syncMs * 5);
    this.#maxKeys = opts.maxKeys ?? 50_000;
  }

  async ensure(): Promise<void> {
    await ensurePlatformTables(this.#dbs, `plinth:rate-limits:${this.#schema}`, [
      `create table if not exists ${this.#table} (key text primary key, window_start bigint not null, window_end bigint not null, hits integer not null)`,
      `create index if not exists rate_limits_window_end on ${this.#table} (window_end)`,
    ]);
  }

  start(): void {
    this.#timer ??= setInterval(() => void this.sync(), this.#syncMs).unref();
  }

  /** Stops syncing; a sync under way gets a moment to finish, never more (a wedged database must not hold a shutdown). */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    const last = this.#queued ?? this.#syncing;
    if (last) await within(last, STOP_WAIT_MS).catch(() => undefined);
  }

  /** Counts one hit of `key` (under a limit of `max` per `windowMs`): the hits of every process in its window so far, and the window's time left. */
  hit(key: string, windowMs: number, max: number, now = Date.now()): RateState {
    const e = this.#entry(`${windowMs}:${max}:${key}`, windowMs, max, now);
    e.pending++;
    e.touched = true;
    return { current: e.total + e.pending, ttl: e.start + windowMs - now };
  }

  /** The same without counting. */
  peek(key: string, windowMs: number, max: number, now = Date.now()): RateState {
    const e = this.#entries.get(`${windowMs}:${max}:${key}`);
    if (!e || e.start + windowMs <= now) return { current: 0, ttl: 0 };
    return { current: e.total + e.pending, ttl: e.start + windowMs - now };
  }

  #entry(id: string, windowMs: number, max: number, now: number): Entry {
    let e = this.#entries.get(id);
    if (!e || e.start + windowMs <= now) e = { start: now, windowMs, total: 0, pending: 0, touched: false, max };
    // most recently used last; the oldest go beyond maxKeys (their pending hits with them)
    this.#entries.delete(id);
    this.#entries.set(id, e);
    if (this.#entries.size > this.#maxKeys) this.#entries.delete(this.#entries.keys().next().value!);
    return e;
  }

  /**
   * Adds this process's new hits to the table and reads back the totals of the
   * keys it saw; one at a time. The sync answered always starts after the call:
   * one already under way read its keys earlier and may miss the caller's hits
   * or another process's latest, so a second follows it.
   */
  sync(): Promise<void> {
    if (this.#queued) return this.#queued;
    if (!this.#syncing) return this.#run();
    const next = () => {
      this.#queued = undefined;
      return this.#run();
    };
    this.#queued = this.#syncing.then(next, next);
    return this.#queued;
  }

  #run(): Promise<void> {
    this.#syncing = this.#sync().finally(() => (this.#syncing = undefined));
    return this.#syncing;
  }

  async #sync(): Promise<void> {
    const now = Date.now();
    const due: [string, Entry, number][] = [];
    for (const [id, e] of this.#entries) {
      if (e.start + e.windowMs <= now) this.#entries.delete(id);
      else if (e.touched || (e.total + e.pending) * 2 >= e.max) due.push([id, e, e.pending]);
    }
    try {
      for (let i = 0; i < due.length; i += BATCH) {
        const part = due.slice(i, i + BATCH);
        for (const [, e] of part) e.touched = false;
        // an open window in the table is everyone's: hits add up there; an expired one starts again as this process's
        const rows = (await within(
          platformConnection(this.#dbs).execute(
            `insert into ${this.#table} as r (key, window_start, window_end, hits)
           select * from jsonb_to_recordset(?::jsonb) as x(key text, window_start bigint, window_end bigint, hits int)
           on conflict (key) do update set
             window_start = case when r.window_end > ? then r.window_start else excluded.window_start end,
             window_end = case when r.window_end > ? then r.window_end else excluded.window_end end,
             hits = case when r.window_end > ? then r.hits + excluded.hits else excluded.hits end
           returning key, window_start::text as "start", hits`,
            [JSON.stringify(part.map(([id, e, hits]) => ({ key: id, window_start: e.start, window_end: e.start + e.windowMs, hits }))), now, now, now],
          ),
          this.#timeoutMs,
        )) as { key: string; start: string; hits: number }[];
        const sent = new Map(part.map(([id, e, n]) => [id, { e, n }]));
        for (const r of rows) {
          const s = sent.get(r.key);
          // a window this process started anew meanwhile keeps counting its own
          if (!s || this.#entries.get(r.key) !== s.e) continue;
          s.e.pending -= s.n;
          s.e.total = r.hits;
          s.e.start = Number(r.start);
        }
      }
      if (now - this.#prunedAt > PRUNE_EVERY_MS) {
        this.#prunedAt = now;
        await within(platformConnection(this.#dbs).execute(`delete from ${this.#table} where window_end < ?`, [now]), this.#timeoutMs);
      }
      this.lastError = undefined;
    } catch (err) {
      // counted here until the next sync gets through
      for (const [, e] of due) e.touched = true;
      this.lastError = err;
    }
  }

  /** @fastify/rate-limit's `store` option: a constructor whose store (and every route's child) counts here. */
  get Store(): new () => RateLimitStore {
    const store: RateLimitStore = {
      incr: (key, cb, timeWindow, max) => cb(null, this.hit(key, timeWindow, max)),
      read: (key, cb, timeWindow, max) => cb(null, this.peek(key, timeWindow, max ?? 0)),
      child: () => store,
    };
    // `new Store(options)` answers the object a constructor returns
    return function Store() {
      return store;
    } as unknown as new () => RateLimitStore;
  }
}
