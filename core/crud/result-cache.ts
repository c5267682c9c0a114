// Results of read-only statements (analytics) kept for the next caller who
// runs the same statement. The key is the statement itself with its bound
// values, which hold the caller's whole scope (company, grant conditions,
// user id), plus the tenant and the generations of every table it reads
// (data/changes.ts): callers whose rules differ never share a result, nor do
// tenants, and a committed write to any table read ends the entry. Identical
// statements running at the same time run once. Bounded by size and age.
import { LRUCache } from 'lru-cache';

export interface Cached<T> {
  value: T;
  /** served from the cache (or from an identical statement that was running) */
  cached: boolean;
}

export class ResultCache<T extends object> {
  #lru: LRUCache<string, T> | undefined;
  #running = new Map<string, Promise<T>>();

  /** maxBytes 0: nothing is kept (identical concurrent statements still run once) */
  constructor(opts: { maxBytes: number; ttlMs: number }) {
    if (opts.maxBytes > 0) {
      this.#lru = new LRUCache<string, T>({
        maxSize: opts.maxBytes,
        // a result's JSON length approximates what it holds; one larger than an eighth of the cache is not kept
        maxEntrySize: Math.max(1, Math.floor(opts.maxBytes / 8)),
        sizeCalculation: (value, key) => key.length + JSON.stringify(value).length,
        ttl: opts.ttlMs,
      });
    }
  }

  /** The result under `key`, else `load`'s (shared with every caller asking for the same key meanwhile). */
  async get(key: string, load: () => Promise<T>): Promise<Cached<T>> {
    const hit = this.#lru?.get(key);
    if (hit) return { value: hit, cached: true };
    const running = this.#running.get(key);
    if (running) return { value: await running, cached: true };
    const promise = load();
    this.#running.set(key, promise);
    try {
      const value = await promise;
      this.#lru?.set(key, value);
      return { value, cached: false };
    } finally {
      this.#running.delete(key);
    }
  }

  get size(): number {
    return this.#lru?.size ?? 0;
  }
}
