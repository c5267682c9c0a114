// Tenant-affine pooled connections. A PostgreSQL backend pays for every table it
// touches: it opens the table's and its indexes' files (at most
// max_files_per_process at once) and keeps their catalog entries until it ends.
// Spread over 10,000 tenants, every backend of the pool serving every tenant did
// 4-8x the work per statement of one tenant (README, "Tenancy at scale"). Here
// each tenant has a home connection of the pool (its schema's hash modulo the
// pool size), and pg-pool hands a waiting statement its home connection when that
// one is idle, and an idle connection to a waiter whose home it is; otherwise it
// works as before (any idle connection, first come first served), so one busy
// tenant still gets the whole pool. Each backend then serves mostly a pool-size
// share of the tenants.
//
// This reorders pg-pool's own queues (_idle, _pendingQueue) just before it pairs
// them (_pulseQueue), checked at start: a pg-pool without them keeps its plain
// order. The tenant comes from the request (enterTenant, in the request
// pipeline) through AsyncLocalStorage: the pool sees no request.
import { AsyncLocalStorage } from 'node:async_hooks';

const home = new AsyncLocalStorage<number>();

/** From here on in this async context, statements prefer the home connection of this tenant schema. */
export function enterTenant(schema: string): void {
  home.enterWith(hash(schema));
}

/** Runs fn with statements preferring the home connection of this tenant schema. */
export function withTenant<T>(schema: string, fn: () => T): T {
  return home.run(hash(schema), fn);
}

/** FNV-1a, 32 bits: stable across processes and restarts. */
function hash(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** Waiters nearer the head than this may be passed over for one whose home is free. */
const WINDOW = 16;
/** How often one waiter may be passed over before it is served in turn. */
const MAX_PASSED = 4;

interface Waiter {
  plinthHome?: number;
  plinthPassed?: number;
}
interface PooledClient {
  plinthLane?: number;
}
interface PgPoolInternals {
  options: { max: number };
  _clients: PooledClient[];
  _idle: { client: PooledClient }[];
  _pendingQueue: Waiter[];
  _pulseQueue(): unknown;
  connect(...args: unknown[]): unknown;
  on(event: 'connect', fn: (client: PooledClient) => void): void;
}

export interface AffinityStats {
  /** connections handed to a waiter that named a tenant */
  tagged: number;
  /** of those, its home connection */
  home: number;
}

/** Makes a pg-pool tenant-affine; false (nothing changed) when the pool lacks the internals this relies on. */
export function affinePool(pool: unknown, stats?: AffinityStats): boolean {
  const p = pool as PgPoolInternals;
  if (typeof p._pulseQueue !== 'function' || !Array.isArray(p._idle) || !Array.isArray(p._pendingQueue) || !Array.isArray(p._clients) || !(p.options?.max > 0)) return false;
  // each connection a lane 0..max-1: the lowest one no other live connection holds (a recycled one's successor takes its lane)
  p.on('connect', (client) => {
    const taken = new Set(p._clients.filter((c) => c !== client).map((c) => c.plinthLane));
    let lane = 0;
    while (taken.has(lane)) lane++;
    client.plinthLane = lane;
  });
  const connect = p.connect;
  p.connect = function (this: PgPoolInternals, ...args: unknown[]) {
    const key = home.getStore();
    const queued = this._pendingQueue.length;
    const result = connect.apply(this, args);
    // pg-pool queued it (an idle connection is handed over on the next tick, or it waits): tag it
    if (key !== undefined && this._pendingQueue.length > queued) this._pendingQueue[this._pendingQueue.length - 1].plinthHome = key % this.options.max;
    return result;
  };
  const pulse = p._pulseQueue;
  p._pulseQueue = function (this: PgPoolInternals) {
    pair(this, stats);
    return pulse.call(this);
  };
  return true;
}

/** Puts the connection and the waiter pg-pool pairs next (the last idle, the first waiting) in the order that keeps tenants home. */
function pair(p: PgPoolInternals, stats?: AffinityStats): void {
  const idle = p._idle;
  const waiting = p._pendingQueue;
  if (!idle.length || !waiting.length) return;
  const first = waiting[0];
  if (first.plinthHome !== undefined) {
    const i = idle.findIndex((item) => item.client.plinthLane === first.plinthHome);
    if (i >= 0) {
      if (i !== idle.length - 1) idle.push(idle.splice(i, 1)[0]);
      count(stats, true);
      return;
    }
  }
  // the first waiter's home is busy: the connection pg-pool would hand out goes to a waiter whose home it is,
  // if one is near the head and no waiter before it was passed over too often
  const lane = idle[idle.length - 1].client.plinthLane;
  const end = Math.min(waiting.length, WINDOW);
  for (let j = 1; j < end; j++) {
    if ((waiting[j - 1].plinthPassed ?? 0) >= MAX_PASSED) break;
    if (waiting[j].plinthHome !== lane) continue;
    for (let k = 0; k < j; k++) waiting[k].plinthPassed = (waiting[k].plinthPassed ?? 0) + 1;
    waiting.unshift(waiting.splice(j, 1)[0]);
    count(stats, true);
    return;
  }
  if (first.plinthHome !== undefined) count(stats, false);
}

function count(stats: AffinityStats | undefined, home: boolean): void {
  if (!stats) return;
  stats.tagged++;
  if (home) stats.home++;
}
