// Readiness and liveness as an orchestrator needs them, each bounded in time.
//   ready: every database answers `select 1` through its pool in time. Not
//          ready sends traffic elsewhere; it heals by itself when the database
//          comes back.
//   live:  the process can still serve. A pool that hands out no connection
//          while the database accepts a fresh one is wedged: only a restart
//          helps, so liveness fails. While the database itself is down the
//          process is fine (a restart would not help) and stays live.
import pg from './pg.ts';
import type { Databases } from './databases.ts';

const HEALTH_TIMEOUT_MS = 2000;

/** Resolves true when the promise settles successfully within ms, false otherwise. */
async function within(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([
      p.then(
        () => true,
        () => false,
      ),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

const throughPool = (dbs: Databases, key: string, ms: number) => within(dbs.get(key).em.getConnection().execute('select 1'), ms);

/** Keys of the databases that do not answer through their pool in time. */
export async function unreadyDatabases(dbs: Databases, ms = HEALTH_TIMEOUT_MS): Promise<string[]> {
  const keys = [...dbs.orms.keys()];
  const ok = await Promise.all(keys.map((key) => throughPool(dbs, key, ms)));
  return keys.filter((_, i) => !ok[i]);
}

async function acceptsFreshConnection(url: string, ms: number): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: ms });
  client.on('error', () => undefined);
  try {
    return await within(
      client.connect().then(() => client.query('select 1')),
      ms,
    );
  } finally {
    void client.end().catch(() => undefined);
  }
}

/** Keys of the databases whose pool is wedged while the server itself answers. */
export async function wedgedPools(dbs: Databases, urls: Record<string, string>, ms = HEALTH_TIMEOUT_MS): Promise<string[]> {
  const wedged: string[] = [];
  for (const key of await unreadyDatabases(dbs, ms)) {
    const url = urls[key];
    // embedded PGlite lives in this process: when it does not answer, the process cannot serve
    if (!url || (await acceptsFreshConnection(url, ms))) wedged.push(key);
  }
  return wedged;
}
