// A webhook receiver on loopback for tests: records every request, answers
// with the status `respond` picks (default 200), after `delay` ms (default 0), and lets a test wait for a
// number of deliveries.
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  json: any;
  at: number;
}

export interface Receiver {
  url: string;
  received: Received[];
  /** status for the n-th request (1-based); default 200 */
  respond: (n: number, r: Received) => number;
  /** ms to wait before answering the n-th request (a slow receiver); default 0 */
  delay: (n: number, r: Received) => number;
  /** resolves once `count` requests (matching `where`) arrived; rejects after `ms` */
  waitFor(count: number, ms?: number, where?: (r: Received) => boolean): Promise<Received[]>;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const received: Received[] = [];
  const waiters = new Set<() => void>();
  const r: Receiver = {
    url: '',
    received,
    respond: () => 200,
    delay: () => 0,
    async waitFor(count, ms = 15_000, where = () => true) {
      const deadline = Date.now() + ms;
      for (;;) {
        const hits = received.filter(where);
        if (hits.length >= count) return hits;
        if (Date.now() > deadline) throw new Error(`only ${hits.length} of ${count} deliveries arrived within ${ms} ms`);
        await new Promise<void>((resolve) => {
          const done = () => (waiters.delete(done), resolve());
          waiters.add(done);
          setTimeout(done, 50);
        });
      }
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let json: unknown = null;
      try {
        json = JSON.parse(body);
      } catch {
        /* not JSON: kept as text */
      }
      const entry = { headers: req.headers, body, json, at: Date.now() };
      received.push(entry);
      res.statusCode = r.respond(received.length, entry);
      waiters.forEach((w) => w());
      const wait = r.delay(received.length, entry);
      if (wait > 0) setTimeout(() => res.end('thanks'), wait);
      else res.end('thanks');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  r.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  server.closeAllConnections?.();
  return r;
}
