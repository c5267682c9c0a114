// A fuzz file runs one shard: whole groups of operations (an entity's, or a
// kernel area's), balanced by operation count over the shard files; the kernel
// areas (auth, platform, health) and their scenarios always go to shard 1.
// FUZZ_SEED and FUZZ_RUNS (requests per operation) override the defaults; PGlite
// runs a quarter of the requests unless FUZZ_RUNS says otherwise. Every 2xx answer
// a shard gets keeps to its response schema in the document (api/responses.ts).
import fc from 'fast-check';
import type { Test } from 'tap';
import { onPglite } from '../../helper.ts';
import type { Api, ApiOperation } from '../api/describe.ts';
import { buildWorld } from './world.ts';
import { requestsFor } from './requests.ts';
import { Recorder } from './recorder.ts';
import { lifecycle } from './lifecycle.ts';
import { boundaries } from './boundaries.ts';
import { frameworkRefusals, missingMethods, refreshRace } from './scenarios.ts';

const SEED = Number(process.env.FUZZ_SEED ?? 20_261_122);
const RUNS = Math.max(1, Number(process.env.FUZZ_RUNS ?? (onPglite ? 16 : 64)));
const KERNEL = new Set(['auth', 'platform', 'health']);
const hash = (s: string) => [...s].reduce((h, c) => (Math.imul(h, 31) + c.charCodeAt(0)) | 0, 0) >>> 0;

function groupsOf(api: Api, shard: number, count: number): Set<string> {
  const sizes = new Map<string, number>();
  for (const op of api.ops) sizes.set(op.group, (sizes.get(op.group) ?? 0) + 1);
  const load = Array.from({ length: count }, () => 0);
  const out = Array.from({ length: count }, () => new Set<string>());
  for (const g of KERNEL) {
    out[0].add(g);
    load[0] += 2 * (sizes.get(g) ?? 0);
  } // logins and provisioning are slow
  const modules = [...sizes].filter(([g]) => !KERNEL.has(g)).sort(([g1, a], [g2, b]) => b - a || g1.localeCompare(g2));
  for (const [g, n] of modules) {
    const i = load.indexOf(Math.min(...load));
    out[i].add(g);
    load[i] += n;
  }
  return out[shard - 1];
}

/** Generated deletes last, so the other operations meet the rows first. */
const order = (x: ApiOperation, y: ApiOperation) => Number(x.kind === 'delete') - Number(y.kind === 'delete');

export async function runShard(t: Test, shard: number, count: number): Promise<void> {
  const started = Date.now();
  const world = await buildWorld(t, { operator: shard === 1, seed: SEED + shard });
  const { api } = world;
  const groups = groupsOf(api, shard, count);
  const rec = new Recorder(world, SEED);
  t.comment(`fuzz shard ${shard}/${count}: FUZZ_SEED=${SEED} FUZZ_RUNS=${RUNS}; groups ${[...groups].join(', ')}; ready after ${((Date.now() - started) / 1000).toFixed(1)} s`);

  for (const entity of [...groups].filter((g) => api.model(g))) {
    const chains = await lifecycle(rec, entity, Math.max(16, Math.round(RUNS / 5)), SEED + hash(`${entity} lifecycle`));
    if (chains.attempts) t.ok(chains.completed > 0, `${entity}: ${chains.completed} of ${chains.attempts} valid create-read-update-delete chains completed`);
  }

  const ops = api.ops.filter((o) => groups.has(o.group)).sort(order);
  await boundaries(rec, ops, SEED);
  const { arbitrary } = requestsFor(world);
  for (const op of ops) {
    await fc.check(
      fc.asyncProperty(arbitrary(op), async (req) => {
        await rec.send(op.id, req, op);
        return true;
      }),
      { seed: SEED + hash(op.id), numRuns: RUNS },
    );
    t.pass(`${op.id}: ${RUNS} requests, statuses ${rec.statuses(op.id)}`);
  }

  await missingMethods(rec, api, groups, Math.max(2, Math.round(RUNS / 4)), SEED + hash('405'));
  if (groups.has('auth')) await refreshRace(rec, Math.max(3, Math.round(RUNS / 6)), SEED + hash('refresh race'));
  if (groups.has('health')) await frameworkRefusals(rec, Math.max(8, Math.round(RUNS / 2)), SEED + hash('framework'));
  for (const name of ['refresh race', 'HTTP parser refusals']) if (rec.stats.has(name)) t.pass(`${name}: statuses ${rec.statuses(name)}`);

  rec.report(t);
  world.answers.report(t);
  t.comment(`fuzz shard ${shard}/${count}: ${rec.requests} requests in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  t.ok(rec.requests >= ops.length * RUNS, `${rec.requests} requests sent`);
}
