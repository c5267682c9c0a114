// Statements with bind values run as named prepared statements, cached per
// connection: PostgreSQL parses, analyses and plans a statement on its backend
// once (after five runs it keeps a generic plan), instead of on every run.
//
// Why: a GET by id spends most of its PostgreSQL time there, and with thousands
// of tenants the planner's work on a tenant's table is what a spread over them
// costs beyond one tenant (docs/performance.md, "Tenancy at scale"). Measured on this machine:
// 0.10 ms of backend CPU per statement unnamed, 0.035 ms prepared.
//
// Bounded: a statement is prepared the second time its text is seen (one-off
// texts never take a slot), the longest texts are never prepared, and past
// `capacity` per connection the least recently used is deallocated. A cached
// plan holds about 66 KB of the backend's memory (a GET by id's, measured), so
// the capacity is what bounds the backend's memory for it.
//
// Off behind a transaction pooler older than PgBouncer 1.21 (DB_PREPARED_STATEMENTS=0):
// it would run a statement on a server connection that never prepared it.
import type { LanePgClient } from './pg.ts';

/** texts longer than this (bulk writes of many rows) run unnamed: each is rarely repeated */
const MAX_TEXT = 16_384;

interface QueryingClient {
  query(...args: unknown[]): unknown;
  getTransactionStatus(): string | null;
  connection: { parsedStatements: Record<string, string> };
}

interface PgError {
  routine?: string;
}

/** the statement's plan no longer fits its tables (their columns changed): it must be prepared again */
const isStalePlan = (err: unknown) => (err as PgError | null)?.routine === 'RevalidateCachedQuery';

/** Makes `client.query(text, values)` run `text` as a named prepared statement once it repeats. */
export function prepareStatements(pgClient: LanePgClient, capacity: number): void {
  if (capacity <= 0) return;
  const client = pgClient as unknown as QueryingClient;
  const query = client.query.bind(client) as (config: unknown, values?: unknown) => Promise<unknown>;
  /** text → name, least recently used first */
  const prepared = new Map<string, string>();
  /** texts seen once, oldest first */
  const seen = new Set<string>();
  let next = 0;
  /** statements to deallocate before the next one: evicted, or kept by a transaction that failed */
  let dropped: string[] = [];

  /** Takes `text`'s statement out of pg's list; the backend's copy goes with the next statement. */
  const forget = (text: string, name: string) => {
    prepared.delete(text);
    // pg lists it only when its Parse succeeded; then the backend holds it too
    if (client.connection.parsedStatements[name] === undefined) return;
    delete client.connection.parsedStatements[name];
    dropped.push(name);
  };

  /**
   * One DEALLOCATE for what was dropped, sent ahead of the caller's statement on the idle connection (so pg
   * queues nothing): not in a failed transaction, where it would fail; in an open one only for an evicted
   * statement, which the backend surely holds, so the caller's transaction cannot fail with it.
   */
  const deallocateDropped = (status: string | null): Promise<unknown> | undefined => {
    if (dropped.length === 0 || status === 'E' || (status !== 'I' && dropped.length > 1)) return undefined;
    const sent = query(dropped.map((n) => `deallocate "${n}"`).join('; ')).catch(() => {});
    dropped = [];
    return sent;
  };

  const nameOf = (text: string): string | undefined => {
    let name = prepared.get(text);
    if (name !== undefined) {
      prepared.delete(text);
      prepared.set(text, name);
      return name;
    }
    if (!seen.delete(text)) {
      seen.add(text);
      if (seen.size > capacity) seen.delete(seen.values().next().value!);
      return undefined;
    }
    name = `plinth_${next++}`;
    prepared.set(text, name);
    if (prepared.size > capacity) {
      const [oldText, oldName] = prepared.entries().next().value!;
      forget(oldText, oldName);
    }
    return name;
  };

  client.query = (config: unknown, values?: unknown, ...rest: unknown[]) => {
    if (typeof config !== 'string' || !Array.isArray(values) || values.length === 0 || rest.length > 0 || config.length > MAX_TEXT) {
      return query(config, values, ...(rest as []));
    }
    const status = client.getTransactionStatus();
    const name = nameOf(config);
    void deallocateDropped(status);
    if (name === undefined) return query(config, values);
    return query({ name, text: config, values }).catch((err: unknown) => {
      if (isStalePlan(err)) {
        forget(config, name);
        seen.add(config); // still a repeated text: its next run prepares it again
        // outside a transaction it runs again at once (after the stale one is gone); inside one, the transaction has failed
        // (the failed statement's connection is not ready yet: one statement at a time, as pg wants)
        if (status === 'I') return Promise.resolve(deallocateDropped('I')).then(() => query(config, values));
      } else if (client.connection.parsedStatements[name] === undefined) prepared.delete(config);
      throw err;
    });
  };
}
