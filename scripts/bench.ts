// npm run bench [-- options]: Plinth against a bare Fastify + pg baseline (issue 6).
//   --duration 10 --connections 50 --warmup 3 --pool 10 --scenarios by-id,list,default-list,search,create,update
//                      (default-list: Plinth against hand-written SQL for the same page, not its own SQL replayed)
//   --quick            short smoke run (3 s, 1 s warm-up, one cold start each)
//   --repeat 1         baseline/Plinth pairs per scenario, single/spread pairs in scale mode (order
//                      alternates; median ratio): for noisy machines
//   --tenants 1000     tenancy scale: provision N tenants, spread GET by id over them (scale tenants left
//                      outdated by a module change are dropped at the start of any run and provisioned again here)
//   --sweeps 10        scale mode: requests per tenant, in turn, before the memory figures (Plinth's RSS and its
//                      PostgreSQL backends', with connections recycled as shipped and never recycled)
//   --provision-concurrency 4  scale tenants provisioned (or checked) at once; timings come from the samples
//                      taken one at a time afterwards
//   --profile          CPU-profile Plinth under load (--cpu-prof) and summarise it by area
//   --profile-scenario by-id  which scenario the profile runs
//   --no-cold-start    skip the cold-start timings
//   --no-outbox-cost   skip the write scenarios' third server: the same Plinth with EVENTS=off, whose req/s the
//                      events-on Plinth is divided by (issue "Events": the outbox costs at most 10% of a write)
//   --delivery-burst 10000  (off by default) Plinth with workers on and a webhook for catalog.* on a receiver in
//                      this process: N creates as fast as the server takes them, then the time from the last commit
//                      until every event was delivered (target 30 s), deliveries/s, duplicates (bench/burst.ts)
//   --bi-dashboard 100000  (off by default) a BI dashboard of 8 widgets over N opportunities: cold, warm (result
//                      cache) and after-a-write render times of GET /api/bi/sheets/:id/data (bench/bi-dashboard.ts)
//   --profile-burst    CPU-profile the burst's server; summarised apart for the writes and for the drain after them
//   --delivery-timeout 120  s after the last commit the burst waits for its deliveries before reporting a miss
//   --as manager|admin the caller: a catalog manager (default) or the tenant admin
//   --log-level info   Plinth's LOG_LEVEL (info: one line per request, as shipped)
//   --cleanup          remove every bench tenant and exit
//   --allow-foreign-migrations  run although the server's start-up would migrate tenants the bench did not create
// DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test; created when missing). A database of
// its own (…/plinth_bench) keeps the server under test away from tenants tests create meanwhile. Servers run one at a
// time in their own process; autocannon runs here. Writes bench/results/<timestamp>.json.
// Plinth servers under load run with WORKERS=false, like the baseline doing no background work (the cold
// start keeps the shipped default, workers on); after every write run the bench tenant's products, outbox rows
// and jobs are removed, so no server dispatches an earlier run's events.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { provisionTenant } from '../core/tenancy/provision.ts';
import { migrateTenant } from '../core/tenancy/migrate-tenants.ts';
import { captureSql, describeTemplates } from '../bench/capture.ts';
import {
  BENCH_TENANT,
  SAMPLE_PREFIX,
  SCALE_PREFIX,
  benchKernel,
  cleanup,
  dropTenant,
  ensureDatabase,
  countEvents,
  ensureTenant,
  ensureScaleTenants,
  isBenchTenant,
  newTokens,
  removeWrites,
  type BenchTenant,
} from '../bench/fixtures.ts';
import { runAmount, runLoad, type AcRequest } from '../bench/load.ts';
import { backendMemory } from '../bench/backend-memory.ts';
import { formatResults, median, percentile, round, writeResults, type ColdStart, type Measured, type Results, type ScaleResult, type ScenarioResult, type Sweep } from '../bench/report.ts';
import { headersOf, selectScenarios, spreadSetups, type Probe, type Scenario } from '../bench/scenarios.ts';
import { LOG_DIR, ROOT, freePort, startServer, timeToReadyLine, type Server } from '../bench/servers.ts';
import { summariseFile } from '../bench/profile-summary.ts';
import { deliveryBurst } from '../bench/burst.ts';
import { biDashboard } from '../bench/bi-dashboard.ts';
import { tenancyScale } from '../bench/tenancy-scale.ts';

const { values: o } = parseArgs({
  allowNegative: true,
  options: {
    duration: { type: 'string' },
    connections: { type: 'string', default: '50' },
    warmup: { type: 'string' },
    pool: { type: 'string' },
    scenarios: { type: 'string' },
    quick: { type: 'boolean', default: false },
    repeat: { type: 'string', default: '1' },
    tenants: { type: 'string' },
    'provision-concurrency': { type: 'string', default: '4' },
    sweeps: { type: 'string', default: '10' },
    profile: { type: 'boolean', default: false },
    'cold-start': { type: 'boolean', default: true },
    as: { type: 'string', default: 'manager' },
    'log-level': { type: 'string', default: 'info' },
    cleanup: { type: 'boolean', default: false },
    'allow-foreign-migrations': { type: 'boolean', default: false },
    'profile-scenario': { type: 'string', default: 'by-id' },
    'outbox-cost': { type: 'boolean', default: true },
    'delivery-burst': { type: 'string', default: '0' },
    'delivery-timeout': { type: 'string', default: '120' },
    'profile-burst': { type: 'boolean', default: false },
    'bi-dashboard': { type: 'string', default: '0' },
    help: { type: 'boolean', default: false },
  },
});
if (o.help) {
  const usage = readFileSync(new URL(import.meta.url), 'utf8').split('\n');
  console.log(
    usage
      .slice(
        0,
        usage.findIndex((l) => !l.startsWith('//')),
      )
      .map((l) => l.replace(/^\/\/ ?/, ''))
      .join('\n'),
  );
  process.exit(0);
}
const num = (v: string | undefined, fallback: number) => (v === undefined ? fallback : Number(v));
const opts = {
  duration: num(o.duration, o.quick ? 3 : 10),
  warmup: num(o.warmup, o.quick ? 1 : 3),
  connections: num(o.connections, 50),
  pool: num(o.pool ?? process.env.DB_POOL_SIZE, 10),
  tenants: o.tenants === undefined ? 0 : num(o.tenants, 1000),
  provisionConcurrency: Math.max(1, Math.floor(num(o['provision-concurrency'], 4))),
  sweeps: Math.max(1, Math.floor(num(o.sweeps, 10))),
  coldRuns: o.quick ? 1 : 3,
  repeat: Math.max(1, num(o.repeat, 1)),
  as: o.as as 'manager' | 'admin',
  logLevel: o['log-level']!,
  outboxCost: o['outbox-cost'],
  deliveryBurst: Math.max(0, Math.floor(num(o['delivery-burst'], 0))),
  deliveryTimeout: Math.max(1, num(o['delivery-timeout'], 120)),
  biDashboard: Math.max(0, Math.floor(num(o['bi-dashboard'], 0))),
};
if (!Number.isFinite(opts.deliveryBurst) || !Number.isFinite(opts.deliveryTimeout)) throw new Error('--delivery-burst and --delivery-timeout take numbers');
if (opts.as !== 'manager' && opts.as !== 'admin') throw new Error('--as takes manager or admin');
const scenarios = selectScenarios(o.scenarios);
/** Reads sampled before writes, so both servers answer every read over the same rows. */
const readsFirst = (list: Scenario[]) => [...list.filter((s) => !s.write), ...list.filter((s) => s.write)];
const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const JWT_SECRET = randomBytes(32).toString('hex');
const stamp = new Date().toISOString().replace(/[:.]/g, '-');
const tag = randomBytes(3).toString('hex');
const log = (m: string) => console.log(`[bench] ${m}`);
// the job runner's and dispatcher's settings pass through, to try other tunings of the delivery burst
const tuning = Object.fromEntries(Object.entries(process.env).filter(([k, v]) => /^(JOBS|EVENTS)_/.test(k) && v !== undefined)) as Record<string, string>;
const base = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...tuning };

// A server whose modules differ from the kernel's migrates every tenant at start (seconds each with a thousand
// schemas): in a shared checkout, stop with a clear word when manifests or plugins change during the run.
const modulesStamp = () =>
  ['manifests', 'plugins']
    .flatMap((d) =>
      readdirSync(join(ROOT, d), { recursive: true, withFileTypes: true })
        .filter((e) => e.isFile())
        .map((e) => `${join(e.parentPath, e.name)}@${statSync(join(e.parentPath, e.name)).mtimeMs}`),
    )
    .sort()
    .join('\n');
const stampAtStart = modulesStamp();

await ensureDatabase(DATABASE_URL);
const kernel = await benchKernel(DATABASE_URL, JWT_SECRET, ROOT);
const tokens = newTokens(JWT_SECRET);
if (o.cleanup) {
  await cleanup(kernel, log);
  await kernel.close();
  process.exit(0);
}

const plinthEnv = (port: number, extra: Record<string, string> = {}): Record<string, string> => ({
  ...base,
  DATABASE_URL,
  HOST: '127.0.0.1',
  PORT: String(port),
  JWT_SECRET,
  LOG_LEVEL: opts.logLevel,
  RATE_LIMIT_MAX: '1000000000',
  DEMO_DATA: 'false',
  DB_POOL_SIZE: String(opts.pool),
  DATA_DIR: join(tmpdir(), 'plinth-bench', 'data'),
  ...extra,
});
const assertModulesUnchanged = () => {
  if (modulesStamp() !== stampAtStart)
    throw new Error('manifests/ or plugins/ changed during the run: Plinth would start with other modules than the captured SQL and migrated tenants; run the bench again');
};
/** A Plinth server under test: no workers (no dispatching, no jobs) unless `extra` says otherwise. */
const startPlinth = async (nodeArgs: string[] = [], extra: Record<string, string> = {}, name = 'plinth') => {
  assertModulesUnchanged();
  return startServer(name, [...nodeArgs, 'scripts/start.ts'], plinthEnv(await freePort(), { WORKERS: 'false', ...extra }));
};
const sqlFile = join(LOG_DIR, `baseline-sql-${tag}.json`);
/** Replays Plinth's captured SQL, or (idiomatic) answers the product list with hand-written SQL on `table`. */
const startBaseline = async (mode: Scenario['baseline'] = 'replay', table = '') =>
  startServer('baseline', ['bench/baseline-server.ts'], {
    ...base,
    DATABASE_URL,
    PORT: String(await freePort()),
    DB_POOL_SIZE: String(opts.pool),
    BASELINE_SQL: sqlFile,
    BASELINE_LANGUAGE: 'en',
    ...(mode === 'idiomatic' ? { BASELINE_LIST: 'idiomatic', BASELINE_TABLE: table } : {}),
  });

/** The issue's floor for Plinth with events on ÷ the same Plinth with EVENTS=off on writes: the outbox costs at most 10%. */
const OUTBOX_TARGET = 0.9;
/** Fewer requests than this in a measured run: its req/s and p99 say too little to compare. */
const MIN_REQUESTS = 30;
const few = (...runs: Measured[][]) => runs.flat().some((m) => m.requests < MIN_REQUESTS);
/** The outbox of a write run: events on, one row per write at least (warm-up included); EVENTS=off, none. */
function checkOutbox(s: Scenario, kind: 'plinth' | 'eventsOff', m: Measured, rows: number): number {
  if (kind === 'eventsOff' && rows > 0) throw new Error(`${s.label}: Plinth with EVENTS=off recorded ${rows} outbox rows`);
  const written = m.requests - m.non2xx - m.errors;
  if (kind === 'plinth' && rows < written) throw new Error(`${s.label}: Plinth recorded ${rows} outbox rows for ${written} writes`);
  return rows;
}

/** A server ended during its measurement without the bench stopping it (on a shared machine: a stray SIGTERM). */
class ServerDied extends Error {}
async function measure(server: Server, setup: (req: AcRequest) => AcRequest): Promise<Measured> {
  if (opts.warmup > 0) await runLoad({ url: server.url, connections: opts.connections, duration: opts.warmup, setup });
  const r = await runLoad({ url: server.url, connections: opts.connections, duration: opts.duration, setup });
  const memory = server.memory();
  const died = server.exitInfo();
  if (died) throw new ServerDied(`${server.name} ended during its measurement (${died})`);
  return { ...r, ...memory, startMs: Math.round(server.startMs) };
}
/** Runs a measurement again, once, in a fresh process when its server was ended from outside. */
async function retrying<T>(what: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (!(err instanceof ServerDied)) throw err;
    log(`warning: ${err.message}; measuring ${what} again`);
    results.meta.restarts = [...((results.meta.restarts as string[]) ?? []), `${what}: ${err.message}`];
    return await fn();
  }
}

interface Sample {
  status: number;
  body: string;
  headers: Record<string, string | null>;
}
async function sample(server: Server, p: Probe, t: BenchTenant): Promise<Sample> {
  const res = await fetch(server.url + p.url, {
    method: p.method,
    headers: { ...headersOf(t), ...(p.body ? { 'content-type': 'application/json' } : {}) },
    body: p.body ? JSON.stringify(p.body) : undefined,
  });
  const h = (k: string) => res.headers.get(k);
  return { status: res.status, body: await res.text(), headers: { 'content-type': h('content-type'), 'content-language': h('content-language'), etag: h('etag') } };
}

/** Idiomatic scenarios: the same status, headers and envelope, items of the same number and shape (not the same rows). */
function assertSameShape(s: Scenario, b: Sample, p: Sample): void {
  const shape = (x: Sample) => {
    const body = JSON.parse(x.body) as { items: Record<string, unknown>[]; [k: string]: unknown };
    // per field, the JSON types its values take over the page: a column read wrongly shows as null or as another type
    const kinds: Record<string, Set<string>> = {};
    for (const item of body.items) for (const [k, v] of Object.entries(item)) (kinds[k] ??= new Set()).add(v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);
    return JSON.stringify({
      status: x.status,
      headers: x.headers,
      // the next page's cursor names the last row, and the rows differ: only whether there is one
      envelope: { ...body, items: body.items.length, ...('nextCursor' in body ? { nextCursor: body.nextCursor === null ? null : typeof body.nextCursor } : {}) },
      keys: [...new Set(body.items.map((i) => Object.keys(i).join(',')))],
      kinds: Object.entries(kinds).map(([k, set]) => `${k}:${[...set].sort().join('|')}`),
    });
  };
  const [x, y] = [shape(b), shape(p)];
  if (x !== y) throw new Error(`${s.label}: the idiomatic baseline's answer differs from Plinth's in shape\n  baseline: ${x}\n  Plinth:   ${y}`);
}

function assertSame(s: Scenario, b: Sample, p: Sample): void {
  if (s.baseline === 'idiomatic') return assertSameShape(s, b, p);
  const mask = (x: Sample) => {
    let body = x.body;
    for (const re of s.volatile ?? []) body = body.replace(re, (m) => m.replace(/:.*/, ':*'));
    return JSON.stringify({ status: x.status, body, headers: { ...x.headers, etag: s.volatile ? x.headers.etag?.replace(/\d+/, '*') : x.headers.etag } });
  };
  if (mask(b) !== mask(p)) {
    const [x, y] = [mask(b), mask(p)];
    let i = 0;
    while (x[i] === y[i]) i++;
    throw new Error(
      `${s.label}: the baseline's response differs from Plinth's at character ${i}\n  baseline: ${x.slice(Math.max(0, i - 80), i + 120)}\n  Plinth:   ${y.slice(Math.max(0, i - 80), i + 120)}`,
    );
  }
}

const results: Results = {
  meta: {
    startedAt: new Date().toISOString(),
    options: opts,
    scenarios: scenarios.map((s) => s.name),
    node: process.versions.node,
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model,
    memoryGb: round(totalmem() / 2 ** 30, 1),
    loadavgAtStart: loadavg().map((l) => round(l)),
    git: (() => {
      try {
        return `${execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT }).toString().trim()}${execFileSync('git', ['status', '--porcelain', 'core'], { cwd: ROOT }).toString().trim() ? ' (core/ modified)' : ''}`;
      } catch {
        return 'unknown';
      }
    })(),
  },
  scenarios: [],
};

try {
  const t0 = performance.now();
  // Plinth's start-up migrates every outdated tenant; the server under test must not touch other people's
  const foreign = (await kernel.tenants.outdated(kernel.digest)).filter((t) => !isBenchTenant(t.id)).map((t) => t.id);
  if (foreign.length && !o['allow-foreign-migrations']) {
    throw new Error(
      `the server under test would migrate ${foreign.length} tenant(s) the bench did not create (${foreign.slice(0, 5).join(', ')}${foreign.length > 5 ? ', …' : ''}): ` +
        "Plinth's start-up migrates every outdated tenant. Give the bench a database of its own, e.g. " +
        'DATABASE_URL=postgres://postgres@127.0.0.1:5432/plinth_bench npm run bench (created when missing), or pass --allow-foreign-migrations.',
    );
  }
  // bench tenants of an earlier run, when core or the manifests changed since: else the first server start
  // would migrate them all inside a timed start-up. Scale tenants hold 5 products each and are cheaper to
  // drop (~0.1 s) than to migrate (seconds each once the catalog holds a thousand schemas): --tenants
  // provisions them again, and times that. The bench tenant is migrated here.
  const ours = (await kernel.tenants.outdated(kernel.digest)).filter((t) => isBenchTenant(t.id));
  const disposable = ours.filter((t) => t.id.startsWith(SCALE_PREFIX) || t.id.startsWith(SAMPLE_PREFIX));
  if (disposable.length) log(`dropping ${disposable.length} scale tenant(s) made for other modules (--tenants provisions them again)`);
  for (const t of disposable) await dropTenant(kernel, t.id);
  const kept = ours.filter((t) => !disposable.includes(t));
  if (kept.length) log(`migrating ${kept.length} bench tenant(s) to the loaded modules (use --cleanup to start afresh)`);
  for (const t of kept) await migrateTenant(kernel, t);
  const bench = await ensureTenant(kernel, tokens, BENCH_TENANT, { products: 10_000, categories: 20, as: opts.as, log });
  log(`tenant ${bench.id}: ${bench.productIds.length + 1} products, caller ${bench.roles.join(',')} (${Math.round(performance.now() - t0)} ms)`);

  if (scenarios.length) {
    const idiomatic = new Set(scenarios.filter((s) => s.baseline === 'idiomatic').map((s) => s.name));
    const productTable = `"${bench.schema}"."${kernel.model('Product').table}"`;
    // 1. Plinth's SQL for each probe, as templates for the baseline. Captured with EVENTS=off: a write's
    // outbox row rides in its own statement, and the baseline does the data's SQL only (the outbox's
    // cost is measured on its own, against the same Plinth with EVENTS=off)
    const captureKernel = await benchKernel(DATABASE_URL, JWT_SECRET, ROOT, { EVENTS: 'off' });
    const capture = await captureSql(captureKernel, bench, scenarios, tag).finally(() => captureKernel.close());
    await removeWrites(kernel, bench);
    mkdirSync(LOG_DIR, { recursive: true });
    writeFileSync(sqlFile, JSON.stringify(capture.templates));
    const replayed = Object.fromEntries(Object.entries(capture.templates).filter(([name]) => !idiomatic.has(name)));
    const own = Object.keys(capture.templates).filter((name) => idiomatic.has(name));
    const same =
      (Object.keys(replayed).length
        ? `Both servers send PostgreSQL the same statements: Plinth's captured text, and for parameterised ones the same values (${describeTemplates(replayed)}), ` +
          'through pg query({ name, text, values }) (prepared per connection, as Plinth prepares a repeated statement) or query(text) (inlined writes); checked by round trip at capture.'
        : '') +
      (own.length
        ? `${Object.keys(replayed).length ? ' ' : ''}Against the idiomatic baseline (${own.join(', ')}) the baseline sends hand-written SQL instead (bench/baseline-server.ts, IDIOMATIC; ` +
          "Plinth's own statements are in sql.templates), and the answers agree in status, headers, envelope and item shape, not in rows."
        : '');
    results.sql = { templates: capture.templates, otherStatements: capture.other, sameStatements: same };
    for (const [name, other] of Object.entries(capture.other))
      if (other.length) log(`note: a warm ${name} request also ran ${other.length} statement(s) outside the tenant tables: ${other.join(' | ')}`);
    log(`captured Plinth's SQL (statements, of which with bind parameters): ${describeTemplates(capture.templates)}`);
    log(same);

    // 2. same answers from both, before measuring anything (one baseline process per kind of baseline)
    const samples = new Map<string, Sample>();
    for (const mode of ['replay', 'idiomatic'] as const) {
      const of = scenarios.filter((s) => (s.baseline ?? 'replay') === mode);
      if (!of.length) continue;
      const server = await startBaseline(mode, productTable);
      for (const s of readsFirst(of)) samples.set(s.name, await sample(server, s.probe(bench, `${tag}-b`), bench));
      await server.stop();
      // a write probe's row would change the next mode's lists (their totals)
      await removeWrites(kernel, bench);
    }
    const server = await startPlinth();
    try {
      for (const s of readsFirst(scenarios)) assertSame(s, samples.get(s.name)!, await sample(server, s.probe(bench, `${tag}-p`), bench));
    } finally {
      await server.stop();
      await removeWrites(kernel, bench);
    }
    log(idiomatic.size ? 'responses of the baseline and Plinth are identical (idiomatic scenarios: alike in shape)' : 'responses of the baseline and Plinth are identical');

    // 3. each scenario: baseline and Plinth in turn, each in a fresh process; with --repeat the
    //    pairs alternate their order and the ratio is the median of the pairs' ratios
    for (const s of scenarios) {
      let n = 0;
      // write scenarios: a third server, the same Plinth with EVENTS=off, for the outbox's cost
      const outboxCost = s.write && opts.outboxCost;
      type Kind = 'baseline' | 'plinth' | 'eventsOff';
      const run = async (name: Kind) => {
        const srv = name === 'baseline' ? await startBaseline(s.baseline, productTable) : name === 'plinth' ? await startPlinth() : await startPlinth([], { EVENTS: 'off' }, 'plinth-events-off');
        try {
          const m = await measure(srv, s.load(bench, `${tag}-${name[0]}${++n}`));
          await srv.stop();
          if (s.write && name !== 'baseline') m.outboxRows = checkOutbox(s, name, m, await countEvents(kernel, bench));
          return m;
        } finally {
          await srv.stop();
          if (s.write) await removeWrites(kernel, bench);
        }
      };
      const runs: Record<Kind, Measured[]> = { baseline: [], plinth: [], eventsOff: [] };
      for (let i = 0; i < opts.repeat; i++) {
        // baseline and Plinth alternate their order; EVENTS=off always runs next to Plinth
        const order: Kind[] = i % 2 ? ['plinth', 'baseline'] : ['baseline', 'plinth'];
        if (outboxCost && i % 2) order.unshift('eventsOff');
        else if (outboxCost) order.push('eventsOff');
        for (const name of order) runs[name].push(await retrying(`${s.name} on ${name}`, () => run(name)));
      }
      const mid = (ms: Measured[]) => [...ms].sort((a, b) => a.rps - b.rps)[(ms.length - 1) >> 1];
      const [b, p] = [mid(runs.baseline), mid(runs.plinth)];
      const r: ScenarioResult = {
        name: s.name,
        label: s.label,
        target: s.target,
        baseline: b,
        plinth: p,
        // a run that completed (almost) no requests gives no ratio: null in the JSON, n/a in the table
        ratio: few(runs.baseline, runs.plinth) ? null : round(median(runs.plinth.map((x, i) => x.rps / runs.baseline[i].rps))),
        p99Ratio: few(runs.baseline, runs.plinth) ? null : round(p.p99 / b.p99),
        runs: { baseline: runs.baseline.map((x) => x.rps), plinth: runs.plinth.map((x) => x.rps) },
      };
      if (outboxCost) {
        r.eventsOff = mid(runs.eventsOff);
        r.outboxRatio = few(runs.plinth, runs.eventsOff) ? null : round(median(runs.plinth.map((x, i) => x.rps / runs.eventsOff[i].rps)));
        r.outboxTarget = OUTBOX_TARGET;
        r.runs.eventsOff = runs.eventsOff.map((x) => x.rps);
      }
      results.scenarios.push(r);
      if (few(...Object.values(runs))) log(`warning: a measured run of ${s.label} completed fewer than ${MIN_REQUESTS} requests; no ratio (raise --duration)`);
      log(
        `${s.label}: baseline ${b.rps} req/s, Plinth ${p.rps} req/s → ${r.ratio ?? 'n/a'} (target ${s.target}); p99 ${b.p99} / ${p.p99} ms; non-2xx ${b.non2xx} / ${p.non2xx}${opts.repeat > 1 ? `; runs ${r.runs.baseline.join('/')} vs ${r.runs.plinth.join('/')}` : ''}`,
      );
      if (r.eventsOff) {
        const off = r.eventsOff;
        log(
          `${s.label}, outbox cost: events on ${p.rps} req/s, EVENTS=off ${off.rps} req/s → ${r.outboxRatio ?? 'n/a'} (target ${OUTBOX_TARGET}); p99 ${p.p99} / ${off.p99} ms; outbox rows ${p.outboxRows} / ${off.outboxRows}${opts.repeat > 1 ? `; runs ${r.runs.plinth.join('/')} vs ${r.runs.eventsOff!.join('/')}` : ''}`,
        );
      }
    }
  }

  if (opts.tenants > 0) {
    log(`tenancy scale: ${opts.tenants} tenants (provisioning the missing ones)`);
    const { tenants, provisioned: createdThisRun } = await ensureScaleTenants(kernel, tokens, opts.tenants, { concurrency: opts.provisionConcurrency, as: opts.as, log });
    const timings: number[] = [];
    for (let i = 0; timings.length < 30; i++) {
      // 30 provisionings timed one at a time, each tenant dropped again
      const id = `${SAMPLE_PREFIX}${tag}-${i}`;
      const t1 = performance.now();
      await provisionTenant(kernel, { id, name: id, company: { code: 'HQ', name: 'HQ' }, admin: { email: `admin@${id}.bench.test`, name: 'A', password: 'bench-password-not-secret' } });
      timings.push(performance.now() - t1);
      await dropTenant(kernel, id);
    }
    // single and spread on one server; with --repeat, pairs alternate their order and the ratio is the
    // median of the pairs' ratios (one pair moves by ±15% on a loaded 2-core machine)
    const setups = spreadSetups(bench, tenants);
    // every tenant requested --sweeps times in turn (each pooled backend sees most of them), then the memory that
    // holds: Plinth's RSS and its PostgreSQL backends' own. The pairs after it find every tenant known.
    const appName = `plinth-bench-${tag}`;
    const sweep = async (server: Server): Promise<Sweep> => {
      let i = 0;
      const r = await runAmount({
        url: server.url,
        connections: opts.connections,
        amount: tenants.length * opts.sweeps,
        okStatus: 200,
        setup: (req) => {
          const t = tenants[i++ % tenants.length];
          req.path = `/api/products/${t.productIds[i % t.productIds.length]}`;
          req.headers = headersOf(t);
          return req;
        },
      });
      return { requests: r.requests, rps: r.rps, non2xx: r.non2xx + r.errors, rssMb: server.memory().rssMb, backends: await backendMemory(DATABASE_URL, appName) };
    };
    const runs: { single: Measured[]; spread: Measured[] } = { single: [], spread: [] };
    const memory: ScaleResult['memory'] = { sweeps: opts.sweeps };
    const server = await startPlinth([], { PGAPPNAME: appName });
    try {
      log(`tenancy scale: every tenant requested ${opts.sweeps} time(s), connections recycled as shipped`);
      memory.recycled = await sweep(server);
      for (let i = 0; i < opts.repeat; i++) {
        for (const name of i % 2 ? (['spread', 'single'] as const) : (['single', 'spread'] as const)) runs[name].push(await measure(server, setups[name]));
      }
    } finally {
      await server.stop();
    }
    const lasting = await startPlinth([], { PGAPPNAME: appName, DB_CONNECTION_MAX_USES: '1000000000', DB_CONNECTION_MAX_AGE_SECONDS: '0' });
    try {
      log(`tenancy scale: every tenant requested ${opts.sweeps} time(s), connections never recycled`);
      memory.neverRecycled = await sweep(lasting);
    } finally {
      await lasting.stop();
    }
    const described = (m?: Sweep) =>
      m ? `Plinth RSS ${m.rssMb} MB, ${m.backends ? `${m.backends.backends} backends ${m.backends.totalMb} MB (largest ${m.backends.maxMb} MB)` : 'backends not readable'}, ${m.rps} req/s` : 'n/a';
    log(`memory after the sweeps: recycled: ${described(memory.recycled)}; never recycled: ${described(memory.neverRecycled)}`);
    const mid = (ms: Measured[]) => [...ms].sort((a, b) => a.rps - b.rps)[(ms.length - 1) >> 1];
    const [single, spread] = [mid(runs.single), mid(runs.spread)];
    results.scale = {
      tenants: opts.tenants,
      single,
      spread,
      ratio: round(median(runs.spread.map((x, i) => x.rps / runs.single[i].rps))),
      target: 0.9,
      runs: { single: runs.single.map((x) => x.rps), spread: runs.spread.map((x) => x.rps) },
      memory,
      provisioning: { samples: timings.length, medianMs: Math.round(median(timings)), p99Ms: Math.round(percentile(timings, 99)), maxMs: Math.round(Math.max(...timings)), createdThisRun },
    };
    log(
      `spread over ${opts.tenants} tenants: ${spread.rps} req/s vs ${single.rps} single → ${results.scale.ratio}; RSS ${spread.rssMb} MB${opts.repeat > 1 ? `; runs ${runs.single.map((x) => x.rps).join('/')} single vs ${runs.spread.map((x) => x.rps).join('/')} spread` : ''}`,
    );
    const ts = (results.tenancy = await tenancyScale(
      kernel,
      tenants.map((t) => t.id),
      tag,
      log,
    ));
    log(
      `provisioning at ${ts.tenants} tenants: ${ts.provisioning.withSpare.medianMs} ms median with a spare schema ready (p90 ${ts.provisioning.withSpare.p90Ms}), ${ts.provisioning.withoutSpare.medianMs} ms without (p90 ${ts.provisioning.withoutSpare.p90Ms}); target < 150 ms`,
    );
    log(
      `one-field change: ${ts.migration.tenants} tenants migrated in ${ts.migration.seconds} s (${ts.migration.tenantsPerSecond}/s, ${ts.migration.concurrency} at once, ${ts.migration.plans} plan(s), ${ts.migration.failed} failed) → 10,000 tenants in about ${ts.migration.projectedSecondsFor10k} s (target < 300 s); load ${ts.load.before.toFixed(1)} → ${ts.load.after.toFixed(1)}`,
    );
  }

  if (opts.biDashboard > 0) results.biDashboard = await biDashboard(kernel, opts.biDashboard, log);

  if (opts.deliveryBurst > 0) {
    // the burst's creates and events are removed afterwards, like every write run's
    await removeWrites(kernel, bench);
    const dir = join(ROOT, 'bench', 'results');
    const profileName = `${stamp}-plinth-burst.cpuprofile`;
    const profileArgs = o['profile-burst'] ? ['--cpu-prof', '--cpu-prof-dir', dir, '--cpu-prof-name', profileName, '--cpu-prof-interval', '250'] : [];
    try {
      results.deliveryBurst = await deliveryBurst({
        kernel,
        tokens,
        bench,
        start: () => startPlinth(profileArgs, { WORKERS: 'true', OUTBOUND_ALLOW_PRIVATE: 'true' }, 'plinth-burst'),
        count: opts.deliveryBurst,
        connections: opts.connections,
        timeoutSeconds: opts.deliveryTimeout,
        tag,
        log,
      });
    } finally {
      await removeWrites(kernel, bench);
    }
    const d = results.deliveryBurst;
    if (o['profile-burst']) {
      const file = join(dir, profileName);
      d.profile = { file: `bench/results/${profileName}`, writes: summariseFile(file, 30, d.windows.writes), drain: summariseFile(file, 30, d.windows.drain) };
    }
    log(
      `delivery burst: ${d.delivered} of ${d.committed} events delivered; last commit → all delivered ${d.drainSeconds === null ? `not within ${d.timeoutSeconds} s` : `${d.drainSeconds} s`} (target ${d.targetSeconds} s); ${d.deliveriesPerSecond} deliveries/s; duplicates ${d.duplicates}`,
    );
    log(
      `delivery burst timeline (s: delivered, outbox pending, subscriber jobs, delivery jobs): ${d.timeline
        .filter((_, i, all) => i % 5 === 0 || i === all.length - 1)
        .map((x) => `${x.at}: ${x.delivered}, ${x.outboxPending}, ${x.subscriberJobs}, ${x.deliveryJobs}`)
        .join(' | ')}`,
    );
  }

  if (o.profile) {
    const dir = join(ROOT, 'bench', 'results');
    const profiled = selectScenarios(o['profile-scenario'])[0];
    const name = `${stamp}-plinth-${profiled.name}.cpuprofile`;
    const server = await startPlinth(['--cpu-prof', '--cpu-prof-dir', dir, '--cpu-prof-name', name, '--cpu-prof-interval', '250']);
    const setup = profiled.load(bench, `${tag}-prof`);
    let rps = 0;
    const window = { fromUs: 0, toUs: 0 };
    try {
      if (opts.warmup > 0) await runLoad({ url: server.url, connections: opts.connections, duration: opts.warmup, setup });
      window.fromUs = Number(process.hrtime.bigint() / 1000n);
      rps = (await runLoad({ url: server.url, connections: opts.connections, duration: opts.duration, setup })).rps;
      window.toUs = Number(process.hrtime.bigint() / 1000n);
    } finally {
      await server.stop();
      if (profiled.write) await removeWrites(kernel, bench);
    }
    results.profile = { ...summariseFile(join(dir, name), 30, window), scenario: profiled.label, rps, window };
    log(`profile: bench/results/${name}; summary again: node bench/profile-summary.ts bench/results/${name} --window ${window.fromUs},${window.toUs}`);
  }

  if (o['cold-start']) {
    const cold = async (env: Record<string, string>, first: boolean): Promise<ColdStart> => {
      const run = async () => {
        assertModulesUnchanged();
        const { ms, line } = await timeToReadyLine(['scripts/start.ts'], env, /Plinth ready/);
        let reported = NaN;
        try {
          reported = JSON.parse(line).readyMs;
        } catch {
          /* not JSON */
        }
        return { ms: Math.round(ms), reported };
      };
      const firstStartMs = first ? (await run()).ms : undefined;
      const runs = [];
      for (let i = 0; i < opts.coldRuns; i++) runs.push(await run());
      return { runs: runs.map((r) => r.ms), medianMs: Math.round(median(runs.map((r) => r.ms))), reportedReadyMs: runs.map((r) => r.reported), firstStartMs };
    };
    log('cold start on PostgreSQL');
    const postgres = await cold(plinthEnv(await freePort(), { LOG_LEVEL: 'info' }), false);
    log('cold start on PGlite (first start creates the data directory and is reported apart)');
    const dataDir = mkdtempSync(join(tmpdir(), 'plinth-bench-pglite-'));
    const { DATABASE_URL: _, ...noPg } = plinthEnv(await freePort(), { LOG_LEVEL: 'info', DATA_DIR: dataDir });
    let pglite: ColdStart;
    try {
      pglite = await cold(noPg, true);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
    results.coldStart = { postgres, pglite, targetMs: 1500 };
  }
} finally {
  await kernel.close();
  rmSync(sqlFile, { force: true });
}

results.meta.loadavgAtEnd = loadavg().map((l) => round(l));
results.meta.finishedAt = new Date().toISOString();
console.log(`\n${formatResults(results)}\n`);
console.log(
  `note: ${cpus().length} CPUs shared by PostgreSQL, the server and autocannon; load average ${results.meta.loadavgAtStart} at start, ${results.meta.loadavgAtEnd} at end. Compare ratios, not absolute numbers.`,
);
log(`results: ${writeResults(join(ROOT, 'bench', 'results'), stamp, results)}`);
