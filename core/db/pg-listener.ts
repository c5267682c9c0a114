// One LISTEN connection per process for every channel the kernel follows
// (tenant registry, token revocations). After an error it reconnects with
// backoff until it succeeds. Notifications sent while it was down are lost, so
// each reconnect calls the reconnect callbacks (caches drop what they hold),
// then the reload callbacks, which a periodic timer calls too.
import pg, { type Client } from './pg.ts';

export type ListenClient = Client;
const { Client: PgClient } = pg;

export interface ListenerOptions {
  /** first and longest wait before reconnecting; doubles in between */
  backoffMs?: { min: number; max: number };
  /** how often the reload callbacks run anyway */
  reloadMs?: number;
  /** tests: a client that fails on demand */
  client?: (url: string) => ListenClient;
  onError?: (err: unknown) => void;
}

type Reload = () => Promise<void>;

export class PgListener {
  #url: string;
  #opts: Required<Omit<ListenerOptions, 'client' | 'onError'>> & Pick<ListenerOptions, 'client' | 'onError'>;
  #channels = new Map<string, (payload: string) => void>();
  #reloads: Reload[] = [];
  #reconnects: (() => void)[] = [];
  #client: ListenClient | undefined;
  #retry: NodeJS.Timeout | undefined;
  #timer: NodeJS.Timeout | undefined;
  #delay: number;
  #stopped = false;
  /** connections made so far (tests watch reconnects) */
  connects = 0;

  constructor(url: string, opts: ListenerOptions = {}) {
    this.#url = url;
    this.#opts = { backoffMs: { min: 250, max: 30_000 }, reloadMs: 30_000, ...opts };
    this.#delay = this.#opts.backoffMs.min;
  }

  /** Register before start(). Channel names are the kernel's own, never user input. */
  on(channel: string, handler: (payload: string) => void): void {
    this.#channels.set(channel, handler);
  }

  onReload(fn: Reload): void {
    this.#reloads.push(fn);
  }

  /** After each reconnect, before the reloads: what was announced meanwhile never arrives. */
  onReconnect(fn: () => void): void {
    this.#reconnects.push(fn);
  }

  get connected(): boolean {
    return this.#client !== undefined;
  }

  /** Connects once (a failure here fails the start), then keeps itself connected. */
  async start(): Promise<void> {
    await this.#connect();
    this.#timer = setInterval(() => void this.#reload(), this.#opts.reloadMs);
    this.#timer.unref();
  }

  async close(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#timer);
    clearTimeout(this.#retry);
    const c = this.#client;
    this.#client = undefined;
    await c?.end().catch(() => undefined);
  }

  async #connect(): Promise<void> {
    const c = this.#opts.client ? this.#opts.client(this.#url) : new PgClient({ connectionString: this.#url });
    let lost = false;
    const onLost = (err?: Error) => {
      if (lost) return;
      lost = true;
      if (err) this.#opts.onError?.(err);
      if (this.#client === c) this.#client = undefined;
      void c.end().catch(() => undefined);
      this.#scheduleReconnect();
    };
    c.on('notification', (n) => {
      if (n.payload !== undefined) this.#channels.get(n.channel)?.(n.payload);
    });
    c.on('error', () => undefined); // an unhandled 'error' event would end the process
    try {
      await c.connect();
      for (const channel of this.#channels.keys()) await c.query(`listen "${channel}"`);
    } catch (err) {
      lost = true;
      await c.end().catch(() => undefined);
      throw err;
    }
    // only now: an error during connect is the caller's to handle, not a reconnect
    c.on('error', onLost);
    c.on('end', () => onLost());
    if (this.#stopped) {
      await c.end().catch(() => undefined);
      return;
    }
    this.#client = c;
    this.connects++;
    this.#delay = this.#opts.backoffMs.min;
  }

  #scheduleReconnect(): void {
    if (this.#stopped || this.#retry) return;
    const wait = this.#delay;
    this.#delay = Math.min(this.#delay * 2, this.#opts.backoffMs.max);
    this.#retry = setTimeout(() => {
      this.#retry = undefined;
      this.#connect()
        .then(() => {
          for (const fn of this.#reconnects) fn();
          return this.#reload();
        })
        .catch((err) => {
          this.#opts.onError?.(err);
          this.#scheduleReconnect();
        });
    }, wait);
    this.#retry.unref();
  }

  async #reload(): Promise<void> {
    for (const fn of this.#reloads) await fn().catch((err) => this.#opts.onError?.(err));
  }
}
