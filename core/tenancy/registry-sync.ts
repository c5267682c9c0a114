// Keeps every process's tenant cache current on a shared PostgreSQL server:
// a status change is announced with NOTIFY and each process drops its cached
// copy on LISTEN, so a suspension takes effect everywhere at once. The
// listener reloads the registry after a reconnect and periodically, which
// covers notifications missed while its connection was down.
// (Embedded PGlite serves one process only, so it needs neither.)
import type { TenantRegistry } from './registry.ts';
import type { PgListener } from '../db/pg-listener.ts';

export function syncRegistry(registry: TenantRegistry, listener: PgListener): void {
  listener.on(registry.channel, (id) => registry.forget(id));
  listener.onReload(() => registry.reload());
}
