// Servers under test, each in its own child process started with the pinned
// Node (node_modules/.bin/node), one at a time. Output goes to a log file, not a
// pipe, so draining it costs the load generator nothing.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export const ROOT = resolve(import.meta.dirname, '..');
const NODE = join(ROOT, 'node_modules', '.bin', 'node');
export const LOG_DIR = join(tmpdir(), 'plinth-bench');

export interface Server {
  name: string;
  pid: number;
  url: string;
  logFile: string;
  /** ms from spawn until /health/ready answered */
  startMs: number;
  memory(): { rssMb: number; peakRssMb: number };
  /** null while running; else how it ended (a server the bench did not stop has been killed from outside) */
  exitInfo(): string | null;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const s = createServer();
    s.once('error', fail);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => ok(port));
    });
  });
}

/** VmRSS and VmHWM (peak) of a process, from /proc. */
function memoryOf(pid: number): { rssMb: number; peakRssMb: number } {
  let status = '';
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    /* exited */
  }
  const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rssMb: Math.round(kb('VmRSS') / 102.4) / 10, peakRssMb: Math.round(kb('VmHWM') / 102.4) / 10 };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function exited(child: ChildProcess): Promise<void> {
  return child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise((r) => child.once('exit', () => r()));
}

async function stopChild(child: ChildProcess, graceMs = 15_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited(child);
  clearTimeout(timer);
}

let seq = 0;

/** Starts a server and waits until GET /health/ready answers 200. */
export async function startServer(name: string, args: string[], env: Record<string, string>, timeoutMs = 60_000): Promise<Server> {
  mkdirSync(LOG_DIR, { recursive: true });
  const port = Number(env.PORT);
  const logFile = join(LOG_DIR, `${String(++seq).padStart(2, '0')}-${name}.log`);
  const fd = openSync(logFile, 'w');
  const t0 = performance.now();
  const child = spawn(NODE, args, { cwd: ROOT, env, stdio: ['ignore', fd, fd] });
  closeSync(fd);
  const url = `http://127.0.0.1:${port}`;
  const fail = (why: string) => {
    const tail = readFileSync(logFile, 'utf8').split('\n').slice(-25).join('\n');
    return new Error(`${name}: ${why}\n--- ${logFile} (tail) ---\n${tail}`);
  };
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw fail(`exited early (code ${child.exitCode}, signal ${child.signalCode})`);
    if (performance.now() - t0 > timeoutMs) {
      await stopChild(child);
      throw fail(`not ready after ${timeoutMs} ms`);
    }
    try {
      const res = await fetch(`${url}/health/ready`);
      await res.arrayBuffer();
      if (res.ok) break;
    } catch {
      /* not listening yet */
    }
    await sleep(20);
  }
  return {
    name,
    pid: child.pid!,
    url,
    logFile,
    startMs: performance.now() - t0,
    memory: () => memoryOf(child.pid!),
    exitInfo: () => (child.exitCode === null && child.signalCode === null ? null : `exit code ${child.exitCode}, signal ${child.signalCode}; log ${logFile}`),
    stop: () => stopChild(child),
  };
}

/**
 * Cold start: ms from spawn to the line matching `ready` on stdout (Plinth logs
 * "Plinth ready" right after listen). Also returns what that line reports itself.
 */
export async function timeToReadyLine(args: string[], env: Record<string, string>, ready: RegExp, timeoutMs = 120_000): Promise<{ ms: number; line: string }> {
  const t0 = performance.now();
  const child = spawn(NODE, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr!.on('data', (d: Buffer) => {
    err += d.toString();
  });
  try {
    return await new Promise((ok, fail) => {
      const timer = setTimeout(() => fail(new Error(`no ready line after ${timeoutMs} ms\n${out.slice(-2000)}${err.slice(-2000)}`)), timeoutMs);
      child.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        const line = out.split('\n').find((l) => ready.test(l));
        if (line) {
          clearTimeout(timer);
          ok({ ms: performance.now() - t0, line });
        }
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        fail(new Error(`exited (code ${code}) before ready\n${out.slice(-2000)}${err.slice(-2000)}`));
      });
    });
  } finally {
    child.removeAllListeners('exit');
    await stopChild(child);
  }
}
