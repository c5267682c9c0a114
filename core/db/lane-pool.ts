// Pooled connections routed by tenant ("lanes"): one connection per lane, and a
// tenant's statements go to its home lane (its schema's hash) when they can.
//
// Why: PostgreSQL builds a backend's relation-cache entries for a table and its
// indexes the first time that backend plans a statement on it, and keeps them
// until the backend ends. With 10,000 tenants, a pool whose backends each meet
// every tenant spends most of its CPU building those entries (docs/performance.md,
// "Tenancy at scale"); a lane's backend meets a pool-size share of the tenants and stays warm.
//
// Routing:
// - a tenant takes its home lane when it is free;
// - when the home is busy with the same tenant (it holds it, or waits for it) and
//   another lane is free, it takes the free lane at once: one busy tenant still
//   gets the whole pool, and a tenant that busy is soon warm on every backend;
// - when the home is busy with other tenants, it waits for its home at most
//   `patienceMs` (a warm backend's statement takes a fraction of that), whether or
//   not another lane is free: on another lane it would be cold, and a cold
//   statement costs a backend several warm ones;
// - a lane that frees serves its own waiters first, then the oldest waiter of any
//   lane that is no longer patient; work with no tenant takes any free lane.
// Each lane is a pg.Pool of one connection: connecting, recycling (DB_CONNECTION_MAX_USES,
// DB_CONNECTION_MAX_AGE_SECONDS) and discarding broken connections stay pg-pool's.
import { AsyncLocalStorage } from 'node:async_hooks';

const routing = new AsyncLocalStorage<string>();

/** Runs fn with the pool checkouts it makes routed by `key` (a tenant's schema); no key, no routing. */
export function onLane<T>(key: string | undefined, fn: () => T): T {
  return key === undefined || routing.getStore() === key ? fn() : routing.run(key, fn);
}

export interface LaneClient {
  release(err?: Error | boolean): void;
}

/** A pg.Pool of one connection, as far as the lanes use it. */
export interface Lane<C extends LaneClient> {
  connect(): Promise<C>;
  end(): Promise<void>;
  readonly totalCount: number;
  readonly idleCount: number;
  readonly options: object;
}

interface Waiter<C> {
  /** arrival order: a lane that frees serves the oldest waiter it may take */
  seq: number;
  key: string | undefined;
  home: number;
  /** waiting for its home lane only, until this timer ends */
  patience: ReturnType<typeof setTimeout> | undefined;
  deadline: ReturnType<typeof setTimeout> | undefined;
  resolve(client: C): void;
  reject(err: Error): void;
}

/** What operators see of a lane pool (GET /api/platform/database-pools); counts since the process started. */
export interface LaneStats {
  lanes: number;
  /** connections open (at most one per lane) and of those, idle */
  connections: number;
  idle: number;
  /** callers waiting for a connection now */
  waiting: number;
  /** tenant work served by its home lane, by another lane (its home was busy), and work with no tenant */
  checkouts: { home: number; otherLane: number; unrouted: number };
  /** checkouts that had to wait, and waits that ended in the acquire timeout */
  waited: number;
  timedOut: number;
}

/** FNV-1a: a schema name to a lane, the same in every process. */
export function laneOf(key: string, lanes: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  return (h >>> 0) % lanes;
}

export class LanePool<C extends LaneClient> {
  readonly #lanes: Lane<C>[];
  /** per lane: free, or the key of the work holding it (null: work of no tenant) */
  readonly #holder: (string | null | undefined)[];
  /** waiters per home lane; index `lanes.length` holds the waiters with no tenant */
  readonly #queues: Waiter<C>[][];
  readonly #patienceMs: number;
  readonly #acquireTimeoutMs: number;
  #seq = 0;
  #waiting = 0;
  #ended = false;
  readonly #checkouts = { home: 0, otherLane: 0, unrouted: 0 };
  #waited = 0;
  #timedOut = 0;

  constructor(lanes: Lane<C>[], opts: { patienceMs: number; acquireTimeoutMs: number }) {
    if (lanes.length === 0) throw new Error('a lane pool needs at least one lane');
    this.#lanes = lanes;
    this.#holder = lanes.map(() => undefined);
    this.#queues = [...lanes, null].map(() => []);
    this.#patienceMs = opts.patienceMs;
    this.#acquireTimeoutMs = opts.acquireTimeoutMs;
  }

  /** what kysely passes on to the connections it makes (query cancellation) */
  get options(): object {
    return this.#lanes[0].options;
  }

  connect(): Promise<C> {
    if (this.#ended) return Promise.reject(new Error('Cannot use a pool after calling end on the pool'));
    const key = routing.getStore();
    const n = this.#lanes.length;
    const home = key === undefined ? n : laneOf(key, n);
    if (home < n && this.#holder[home] === undefined) return this.#take(home, home, key);
    const free = this.#freeLane(home);
    // patient: a tenant whose home is busy with others waits for it first, also when every lane is busy (a lane that
    // frees with no waiter of its own would take it at once, cold, where its home frees a moment later)
    const patient = home < n && !this.#busyWith(home, key!);
    if (free >= 0 && !patient) return this.#take(free, home, key);
    return new Promise<C>((resolve, reject) => {
      this.#waited++;
      const w: Waiter<C> = { seq: this.#seq++, key, home, patience: undefined, deadline: undefined, resolve, reject };
      if (patient) w.patience = setTimeout(() => this.#impatient(w), this.#patienceMs);
      if (this.#acquireTimeoutMs > 0) {
        w.deadline = setTimeout(() => {
          this.#dequeue(w);
          this.#timedOut++;
          reject(new Error('timeout exceeded when trying to connect'));
        }, this.#acquireTimeoutMs);
      }
      this.#queues[home].push(w);
      this.#waiting++;
    });
  }

  get totalCount(): number {
    return this.#lanes.reduce((s, l) => s + l.totalCount, 0);
  }
  get idleCount(): number {
    return this.#lanes.reduce((s, l) => s + l.idleCount, 0);
  }
  get waitingCount(): number {
    return this.#waiting;
  }

  stats(): LaneStats {
    const { totalCount: connections, idleCount: idle, waitingCount: waiting } = this;
    return { lanes: this.#lanes.length, connections, idle, waiting, checkouts: { ...this.#checkouts }, waited: this.#waited, timedOut: this.#timedOut };
  }

  async end(): Promise<void> {
    this.#ended = true;
    for (const queue of this.#queues) {
      for (const w of [...queue]) {
        this.#dequeue(w);
        w.reject(new Error('Cannot use a pool after calling end on the pool'));
      }
    }
    await Promise.all(this.#lanes.map((l) => l.end()));
  }

  /** the lane holds work of `key`, or `key` waits for it */
  #busyWith(lane: number, key: string): boolean {
    return this.#holder[lane] === key || this.#queues[lane].some((w) => w.key === key);
  }

  /** a free lane, searched from the one after `home`: a tenant's overflow keeps to the same few backends */
  #freeLane(home: number): number {
    const n = this.#lanes.length;
    for (let i = 1; i <= n; i++) {
      const lane = (home + i) % n;
      if (this.#holder[lane] === undefined) return lane;
    }
    return -1;
  }

  #take(lane: number, home: number, key: string | undefined): Promise<C> {
    this.#holder[lane] = key ?? null;
    this.#checkouts[home === this.#lanes.length ? 'unrouted' : lane === home ? 'home' : 'otherLane']++;
    return this.#lanes[lane].connect().then(
      (client) => {
        const release = client.release;
        let released = false;
        client.release = (err) => {
          if (released) return;
          released = true;
          release.call(client, err);
          this.#freed(lane);
        };
        return client;
      },
      (err: Error) => {
        this.#freed(lane);
        throw err;
      },
    );
  }

  #freed(lane: number): void {
    this.#holder[lane] = undefined;
    const w = this.#queues[lane][0] ?? this.#oldestTakeable();
    if (w) this.#serve(lane, w);
  }

  /** a waiter leaves its queue for `lane` */
  #serve(lane: number, w: Waiter<C>): void {
    this.#dequeue(w);
    this.#take(lane, w.home, w.key).then(w.resolve, w.reject);
  }

  /** the oldest waiter, of any lane or none, that no longer waits for its home only */
  #oldestTakeable(): Waiter<C> | undefined {
    if (this.#waiting === 0) return undefined;
    let best: Waiter<C> | undefined;
    for (const queue of this.#queues) {
      for (const w of queue) {
        if (w.patience !== undefined) continue;
        if (!best || w.seq < best.seq) best = w;
        break;
      }
    }
    return best;
  }

  /** patience over: a free lane now, else the first lane that frees */
  #impatient(w: Waiter<C>): void {
    w.patience = undefined;
    const free = this.#freeLane(w.home);
    if (free >= 0) this.#serve(free, w);
  }

  #dequeue(w: Waiter<C>): void {
    const queue = this.#queues[w.home];
    const at = queue.indexOf(w);
    if (at < 0) return;
    queue.splice(at, 1);
    this.#waiting--;
    clearTimeout(w.patience);
    clearTimeout(w.deadline);
    w.patience = undefined;
  }
}
