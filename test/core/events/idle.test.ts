// An idle server costs next to nothing: with its dispatcher, job workers and
// cron running and no request arriving, its process spends under 5 % of a core
// (measured: ~0.5 % on either database). On embedded PGlite every poll is a
// query of the WASM database in the process; the workers used to fetch twice a
// second each and the dispatcher four times, 13-70 % of a core. They are woken
// instead (core/events/wake-ups.ts); the event and job tests hold them to their
// latencies.
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';

/** after the start: pg-boss's first rounds, the validators compiled in the background */
const SETTLE_MS = 8000;
const WINDOW_MS = 15_000;
const MAX_SHARE = 0.05;

const cpuOf = async (child: ChildProcess): Promise<number> => {
  const reply = once(child, 'message') as Promise<[{ cpu: NodeJS.CpuUsage }]>;
  child.send('cpu');
  const [{ cpu }] = await reply;
  return (cpu.user + cpu.system) / 1000;
};

t.test('an idle server with its workers running uses under 5 % of a core', async (t) => {
  // V8 shrinks the heap the start grew with a few full collections (~0.3 s each) once the process falls
  // idle: the start's cost, not the idle server's, so the measured process does without
  const child = fork(fileURLToPath(new URL('../../support/idle-server.ts', import.meta.url)), { execArgv: ['--no-memory-reducer'], stdio: 'inherit' });
  t.teardown(async () => {
    if (child.connected) {
      child.send('stop');
      await once(child, 'exit');
    }
  });
  const [first] = (await Promise.race([once(child, 'message'), once(child, 'exit')])) as unknown[];
  t.equal(first, 'ready', 'the server started');
  if (first !== 'ready') return;
  await sleep(SETTLE_MS);
  const before = await cpuOf(child);
  const started = performance.now();
  await sleep(WINDOW_MS);
  const share = ((await cpuOf(child)) - before) / (performance.now() - started);
  t.ok(share < MAX_SHARE, `${(share * 100).toFixed(2)} % of a core over ${WINDOW_MS / 1000} s idle`);
});
