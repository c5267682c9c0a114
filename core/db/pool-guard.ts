// Keeps a pg pool whole when connections die while checked out.
//
// kysely's controlled transactions (what MikroORM 7 runs em.transactional on)
// release their connection only after BEGIN, COMMIT or ROLLBACK succeeded. When
// the connection dies inside a transaction (a PostgreSQL restart, a terminated
// backend) those statements throw, the connection is never handed back, and the
// pool loses a slot for good; once every slot is gone each request waits
// forever. Here a checked-out client whose socket ends is released to the pool
// at once (with an error, so the pool discards it), and the late release kysely
// may still attempt becomes a no-op instead of pg-pool's double-release throw.

interface PoolClient {
  release: (err?: Error | boolean) => void;
  once(event: 'end', fn: () => void): void;
  off(event: 'end', fn: () => void): void;
}

interface Pool {
  on(event: 'acquire', fn: (client: PoolClient) => void): void;
  on(event: 'release', fn: (err: unknown, client: PoolClient) => void): void;
}

export function guardPool(pool: Pool): void {
  // checked out and not yet given back: pg-pool also checks a client out and back in
  // at once, within 'acquire', to close it when it is past DB_CONNECTION_MAX_AGE_SECONDS
  const out = new WeakSet<PoolClient>();
  pool.on('release', (_err, client) => out.delete(client));
  pool.on('acquire', (client) => {
    out.add(client);
    // pg-pool emits 'acquire' just before it installs this checkout's release
    // function, synchronously; wrap that one, before anyone can call it
    queueMicrotask(() => {
      if (!out.has(client)) return;
      const release = client.release;
      let released = false;
      const onEnd = () => client.release(new Error('the connection ended while checked out'));
      client.release = (err) => {
        if (released) return;
        released = true;
        client.off('end', onEnd);
        release(err);
      };
      client.once('end', onEnd);
    });
  });
}

export interface PoolStats {
  total: number;
  idle: number;
  waiting: number;
}

/** The pool's counters, for readiness and liveness. */
export function poolStats(pool: { totalCount: number; idleCount: number; waitingCount: number }): PoolStats {
  return { total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount };
}
