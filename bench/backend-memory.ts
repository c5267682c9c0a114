// Memory of the PostgreSQL backends serving one server under test: the bench starts
// each Plinth with its own PGAPPNAME (node-pg labels every connection with it), finds
// those backends in pg_stat_activity and reads their anonymous memory from /proc.
// Anonymous, not RSS: RSS also counts the shared buffers a backend touched, while
// its catalog and relation caches (what grows with the tenant tables it served)
// live in its own heap. Needs the server on this machine and read access to /proc.
import { readFileSync } from 'node:fs';
import pg from './pg.ts';

export interface BackendMemory {
  backends: number;
  totalMb: number;
  maxMb: number;
}

/** kB of anonymous memory the process holds alone (proportional share of pages shared with its parent), or null when unreadable. */
function anonymousKb(pid: number): number | null {
  try {
    const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
    const kb = /^Pss_Anon:\s+(\d+) kB/m.exec(rollup) ?? /^Anonymous:\s+(\d+) kB/m.exec(rollup);
    return kb ? Number(kb[1]) : null;
  } catch {
    return null;
  }
}

export async function backendMemory(databaseUrl: string, applicationName: string): Promise<BackendMemory | null> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const rows = (await client.query(`select pid from pg_stat_activity where application_name = $1 and backend_type = 'client backend'`, [applicationName])).rows as { pid: number }[];
    const kbs = rows.map((r) => anonymousKb(r.pid)).filter((kb): kb is number => kb !== null);
    if (!kbs.length) return null;
    const mb = (kb: number) => Math.round(kb / 102.4) / 10;
    return { backends: kbs.length, totalMb: mb(kbs.reduce((a, b) => a + b, 0)), maxMb: mb(Math.max(...kbs)) };
  } finally {
    await client.end();
  }
}
