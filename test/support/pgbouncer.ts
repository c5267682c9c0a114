// A PgBouncer of one test's own (Debian's `pgbouncer`, which .ci/run installs) in
// transaction pooling in front of the local PostgreSQL: each transaction of a
// client borrows one of a few server connections, so what a session would keep
// (LISTEN, session settings, prepared statements) does not last past it. It
// refuses to run as root, so it runs as the `postgres` system user when we are.
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from '../../core/db/pg.ts';
import { freePort, noUserToRunAs } from './private-postgres.ts';

const BINARY = '/usr/sbin/pgbouncer';

export interface Bouncer {
  /** postgres://postgres@127.0.0.1:<port>/<database>, through the pooler */
  url: string;
  /** a query on PgBouncer's admin console (SHOW POOLS, SHOW STATS…) */
  admin(command: string): Promise<Record<string, unknown>[]>;
  log(): string;
}

/** Why no PgBouncer can run here, or undefined when one can. */
export function pgbouncerUnavailable(): string | undefined {
  if (!existsSync(BINARY)) return `no ${BINARY} (apt-get install pgbouncer)`;
  if (noUserToRunAs()) return 'running as root and there is no postgres user to run PgBouncer as';
  return undefined;
}

/** Starts PgBouncer in front of `server` (host:port) for `database`, with `serverConnections` server connections per database and user. */
export async function startPgbouncer(t: { teardown(fn: () => unknown): void }, opts: { server: string; database: string; serverConnections: number }): Promise<Bouncer> {
  const dir = mkdtempSync(join(tmpdir(), 'plinth-pgbouncer-'));
  chmodSync(dir, 0o777);
  const port = await freePort();
  const [host, serverPort] = opts.server.split(':');
  const ini = join(dir, 'pgbouncer.ini');
  writeFileSync(
    ini,
    [
      '[databases]',
      `* = host=${host} port=${serverPort}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${join(dir, 'users.txt')}`,
      'pool_mode = transaction',
      `default_pool_size = ${opts.serverConnections}`,
      'max_client_conn = 500',
      'admin_users = postgres',
      `logfile = ${join(dir, 'pgbouncer.log')}`,
      '',
    ].join('\n'),
  );
  writeFileSync(join(dir, 'users.txt'), '"postgres" ""\n');
  for (const f of ['pgbouncer.ini', 'users.txt']) chmodSync(join(dir, f), 0o644);
  const asRoot = process.getuid?.() === 0;
  const child: ChildProcess = spawn(BINARY, [...(asRoot ? ['-u', 'postgres'] : []), ini], { stdio: 'ignore' });
  t.teardown(() => {
    child.kill('SIGINT');
    rmSync(dir, { recursive: true, force: true });
  });
  const query = async (database: string, sql: string) => {
    const c = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${port}/${database}`, connectionTimeoutMillis: 1000 });
    await c.connect();
    try {
      return (await c.query(sql)).rows;
    } finally {
      await c.end();
    }
  };
  for (let i = 0; ; i++) {
    try {
      await query(opts.database, 'select 1');
      break;
    } catch (err) {
      if (i === 50) throw new Error(`PgBouncer did not start: ${(err as Error).message}`, { cause: err });
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return {
    url: `postgres://postgres@127.0.0.1:${port}/${opts.database}`,
    admin: (command) => query('pgbouncer', command),
    log: () => (existsSync(join(dir, 'pgbouncer.log')) ? readFileSync(join(dir, 'pgbouncer.log'), 'utf8') : ''),
  };
}
