// The test files of one `npm test` run, handed out one at a time to the workers
// tap starts (test/workers/*.test.ts): a worker takes the next file that no
// other has taken (a marker file made with O_EXCL), so the workers finish
// together however long each file takes. The slowest files of the last run go
// first, so none starts last and runs on alone.
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { writeWhole } from '../write-whole.ts';

const ROOT = join(import.meta.dirname, '../../..');
const TIMES = join(ROOT, 'node_modules/.cache/plinth-test-times.json');

/**
 * Files that mostly wait (idle.test.ts measures a server left alone for 23 s): a
 * worker of their own runs them beside the others, which go on using both cores.
 */
const WAITING = new Set(['test/core/events/idle.test.ts']);

/** Every test file a worker runs: test/**\/*.test.ts but the workers themselves and the browser tests. */
function testFiles(dir = join(ROOT, 'test')): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return ['workers', 'browser', 'fixtures', 'support'].includes(entry.name) && dir.endsWith('/test') ? [] : testFiles(path);
    return entry.name.endsWith('.test.ts') ? [relative(ROOT, path)] : [];
  });
}

function lastTimes(): Record<string, number> {
  try {
    return JSON.parse(readFileSync(TIMES, 'utf8')) as Record<string, number>;
  } catch {
    return {};
  }
}

/** Notes how long a file took, for the next run's order. */
export function noteTime(file: string, ms: number): void {
  const times = lastTimes();
  times[file] = Math.round(ms);
  mkdirSync(join(TIMES, '..'), { recursive: true });
  // the workers of two runs at once (PostgreSQL and PGlite) write it too
  writeWhole(TIMES, JSON.stringify(times, null, 1));
}

export interface Queue {
  /** the next file no worker has taken, or undefined when all are */
  take(): string | undefined;
}

/** The queue of this run: the tap process that started the workers names it. `waiting`: the files that mostly wait. */
export function runQueue({ waiting = false } = {}): Queue {
  const dir = join(tmpdir(), `plinth-test-queue-${process.ppid}${waiting ? '-waiting' : ''}`);
  mkdirSync(dir, { recursive: true });
  dropOldQueues(dir);
  const times = lastTimes();
  // TEST_FILES=a,b: only the files whose path holds one of these (a failure seen only in a worker, run again)
  const only = process.env.TEST_FILES?.split(',').filter(Boolean);
  const files = testFiles()
    .filter((file) => WAITING.has(file) === waiting && (!only || only.some((part) => file.includes(part))))
    // unknown files first (new ones may be slow), then the slowest
    .sort((a, b) => (times[b] ?? Infinity) - (times[a] ?? Infinity) || a.localeCompare(b));
  let next = 0;
  return {
    take() {
      for (; next < files.length; next++) {
        try {
          writeFileSync(join(dir, String(next)), String(process.pid), { flag: 'wx' });
          return files[next++];
        } catch {
          // another worker has it
        }
      }
      return undefined;
    },
  };
}

/** Queues of runs a day old. */
function dropOldQueues(current: string): void {
  for (const name of readdirSync(tmpdir())) {
    const path = join(tmpdir(), name);
    if (name.startsWith('plinth-test-queue-') && path !== current && Date.now() - statSync(path).mtimeMs > 86_400_000) rmSync(path, { recursive: true, force: true });
  }
}
