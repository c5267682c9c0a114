// Keeps every process's tenant cache current on a shared PostgreSQL server:
// a status change is announced with NOTIFY and each process drops its cached
// copy on LISTEN, so a suspension takes effect everywhere at once. A periodic
// reload covers notifications missed while the listening connection was down.
// (Embedded PGlite serves one process only, so it needs neither.)
import { createRequire } from 'node:module';
import type { TenantRegistry } from './registry.ts';

interface Notification { channel: string; payload?: string }
interface ListenClient {
  connect(): Promise<void>;
  query(sql: string): Promise<unknown>;
  on(event: 'notification', fn: (n: Notification) => void): void;
  on(event: 'error' | 'end', fn: () => void): void;
  end(): Promise<void>;
}
// pg ships CommonJS without types; it is the driver MikroORM uses, pinned to the same version
const { Client } = createRequire(import.meta.url)('pg') as { Client: new (o: { connectionString: string }) => ListenClient };

const RELOAD_MS = 30_000;

export async function syncRegistry(registry: TenantRegistry, url: string): Promise<() => Promise<void>> {
  let client: ListenClient | undefined;
  let stopped = false;
  const listen = async () => {
    if (stopped) return;
    const c = new Client({ connectionString: url });
    c.on('notification', (n) => { if (n.channel === registry.channel && n.payload) registry.forget(n.payload); });
    c.on('error', () => undefined);
    c.on('end', () => { if (!stopped) setTimeout(() => void listen().catch(() => undefined), 1000).unref(); });
    await c.connect();
    await c.query(`listen "${registry.channel}"`);
    client = c;
  };
  const timer = setInterval(() => void registry.reload().catch(() => undefined), RELOAD_MS);
  timer.unref();
  await listen();
  return async () => {
    stopped = true;
    clearInterval(timer);
    await client?.end().catch(() => undefined);
  };
}
