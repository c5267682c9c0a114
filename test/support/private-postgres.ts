// A PostgreSQL cluster of one test's own, from the machine's PostgreSQL binaries,
// so a test can stop and restart the server under load without disturbing the
// shared test database other files use at the same time. The server refuses to
// run as root, so it runs as the `postgres` system user when we are root.
import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface PrivatePostgres {
  url: string;
  stop(mode?: 'fast' | 'immediate'): void;
  start(): void;
  /** stops and removes the cluster */
  destroy(): void;
}

function binDir(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const version = readdirSync(root).sort((a, b) => Number(b) - Number(a))[0];
  const dir = version && join(root, version, 'bin');
  return dir && existsSync(join(dir, 'pg_ctl')) ? dir : undefined;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
      .listen(0, '127.0.0.1', () => {
        const { port } = server.address() as { port: number };
        server.close(() => resolve(port));
      })
      .on('error', reject);
  });
}

/** Whether a server that refuses to run as root cannot run here: we are root and there is no `postgres` user to run it as. */
export function noUserToRunAs(): boolean {
  if (process.getuid?.() !== 0) return false;
  try {
    execFileSync('id', ['postgres'], { stdio: 'ignore' });
    return false;
  } catch {
    return true;
  }
}

/** Why no private cluster can run here, or undefined when one can. */
export function privatePostgresUnavailable(): string | undefined {
  if (!binDir()) return 'no PostgreSQL server binaries under /usr/lib/postgresql';
  if (noUserToRunAs()) return 'running as root and there is no postgres user to run the server as';
  return undefined;
}

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const bin = binDir()!;
  const asRoot = process.getuid?.() === 0;
  const dir = mkdtempSync(join(tmpdir(), 'plinth-pg-'));
  if (asRoot) {
    const { uid, gid } = statSync('/var/lib/postgresql');
    chownSync(dir, uid, gid);
  }
  const run = (tool: string, args: string[]) =>
    execFileSync(asRoot ? 'runuser' : join(bin, tool), asRoot ? ['-u', 'postgres', '--', join(bin, tool), ...args] : args, { stdio: 'pipe', cwd: tmpdir(), timeout: 60_000 });
  const data = join(dir, 'data');
  run('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8', '--locale', 'C']);
  const port = await freePort();
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=on -c full_page_writes=off`;
  const start = () => {
    run('pg_ctl', ['-D', data, '-o', options, '-l', join(dir, 'log'), '-w', '-t', '30', 'start']);
  };
  const stop = (mode: 'fast' | 'immediate' = 'fast') => {
    run('pg_ctl', ['-D', data, '-m', mode, '-w', '-t', '30', 'stop']);
  };
  start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    start,
    stop,
    destroy() {
      try {
        stop('immediate');
      } catch {
        /* already stopped */
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
