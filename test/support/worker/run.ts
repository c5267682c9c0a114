// A test worker: one process runs test files one after another, taken from the
// run's queue, each as a subtest named after the file with a `t` of its own
// (tap-per-file.ts). Files share the process, its loaded modules and, when they
// build one without options, a kernel (helper.ts build()): `npm test` starts a
// worker per job instead of a process per file.
import t from 'tap';
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import { importWith } from './tap-per-file.ts';
import { runQueue, noteTime } from './queue.ts';
import { closeSharedKernel, shareKernel } from '../../helper.ts';

const ROOT = join(import.meta.dirname, '../../..');
/** what tap allowed one file before (.taprc timeout) */
const FILE_TIMEOUT_MS = 240_000;

/** Runs the run's files one after another until none is left; `waiting`: only the files that mostly wait (queue.ts). */
export async function runWorker({ waiting = false } = {}): Promise<void> {
  shareKernel();
  const queue = runQueue({ waiting });
  for (let file = queue.take(); file; file = queue.take()) {
    const started = performance.now();
    await t.test(file, { timeout: FILE_TIMEOUT_MS }, (ft) => importWith(pathToFileURL(join(ROOT, file)).href, ft));
    noteTime(file, performance.now() - started);
  }
  await closeSharedKernel();
}
