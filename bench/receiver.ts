// The delivery burst's webhook receiver: node:http on loopback, in the bench
// process. It answers 200 at once, verifies every delivery's Standard Webhooks
// signature (the standardwebhooks library), and counts distinct webhook-id
// headers: each is an event id, so a count of N distinct ids is proof that N
// events arrived, and anything beyond that is a duplicate.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface BurstReceiver {
  url: string;
  /** distinct webhook-id headers */
  ids: Set<string>;
  /** deliveries of an id already received */
  duplicates: number;
  /** deliveries whose signature did not verify (or that had no webhook-id) */
  invalid: number;
  /** performance.now() of the first and the latest new id */
  firstAt: number;
  lastAt: number;
  /** forgets what arrived (after the warm-up) */
  reset(): void;
  /** resolves true once `count` distinct ids arrived, false after `ms` */
  waitFor(count: number, ms: number): Promise<boolean>;
  close(): Promise<void>;
}

export async function startBurstReceiver(secret: string): Promise<BurstReceiver> {
  const verifier = new Webhook(secret);
  let wake: (() => void) | null = null;
  const r: BurstReceiver = {
    url: '',
    ids: new Set(),
    duplicates: 0,
    invalid: 0,
    firstAt: NaN,
    lastAt: NaN,
    reset() {
      r.ids.clear();
      r.duplicates = r.invalid = 0;
      r.firstAt = r.lastAt = NaN;
    },
    async waitFor(count, ms) {
      const deadline = performance.now() + ms;
      while (r.ids.size < count) {
        const left = deadline - performance.now();
        if (left <= 0) return false;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(() => ((wake = null), resolve()), Math.min(left, 1000));
          wake = () => (clearTimeout(timer), (wake = null), resolve());
        });
      }
      return true;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      res.statusCode = 200;
      res.end();
      const id = req.headers['webhook-id'];
      try {
        verifier.verify(Buffer.concat(chunks).toString('utf8'), req.headers as Record<string, string>);
      } catch {
        r.invalid++;
        return;
      }
      if (typeof id !== 'string') return void r.invalid++;
      if (r.ids.has(id)) return void r.duplicates++;
      r.ids.add(id);
      r.lastAt = performance.now();
      if (r.ids.size === 1) r.firstAt = r.lastAt;
      wake?.();
    });
  });
  // the server's keep-alive pool reuses connections; no request should wait on a closed one
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  r.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return r;
}
