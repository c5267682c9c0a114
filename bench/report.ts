// The bench's table and its JSON file under bench/results/.
import type { BiDashboardResult } from './bi-dashboard.ts';
import type { TenancyScaleResult } from './tenancy-scale.ts';
import type { BackendMemory } from './backend-memory.ts';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LoadResult } from './load.ts';
import type { ProfileSummary } from './profile-summary.ts';
import { formatSummary } from './profile-summary.ts';
import type { Templates } from './sql-template.ts';

export type Measured = LoadResult & { rssMb: number; peakRssMb: number; startMs: number; outboxRows?: number };

export interface ScenarioResult {
  name: string;
  label: string;
  target: number;
  baseline: Measured;
  plinth: Measured;
  /** Plinth req/s ÷ baseline req/s: the figure that matters (null: a run completed too few requests) */
  ratio: number | null;
  /** Plinth p99 ÷ baseline p99 (target <= 2) */
  p99Ratio: number | null;
  /** req/s of every run, in pairs (with --repeat) */
  runs: { baseline: number[]; plinth: number[]; eventsOff?: number[] };
  /** write scenarios: the same Plinth with EVENTS=off (writes record no outbox rows), in the same run */
  eventsOff?: Measured;
  /** Plinth req/s ÷ Plinth EVENTS=off req/s: what the outbox costs a write (null: too few requests) */
  outboxRatio?: number | null;
  outboxTarget?: number;
}

export interface DeliveryBurst {
  creates: number;
  /** creates answered 201: the events expected at the receiver */
  committed: number;
  connections: number;
  /** s from the first create sent to the last 201 */
  writeSeconds: number;
  writeRps: number;
  writeP99Ms: number;
  writeNon2xx: number;
  /** distinct events the receiver had when the last create committed */
  deliveredByLastCommit: number;
  /** distinct webhook-id headers received */
  delivered: number;
  complete: boolean;
  /** s from the last 201 until the receiver had every event (null: not within timeoutSeconds) */
  drainSeconds: number | null;
  waitedSeconds: number;
  /** s from the first create to the last delivery (or to giving up) */
  endToEndSeconds: number;
  /** distinct deliveries ÷ s from the first to the last delivery */
  deliveriesPerSecond: number | null;
  duplicates: number;
  invalidSignatures: number;
  /** the webhook's delivery log by status, and its tries after a first */
  deliveryLog: Record<string, number>;
  retries: number;
  targetSeconds: number;
  timeoutSeconds: number;
  /** the burst's jobs per queue: completed per s (first start → last completion), mean ms from creation to a worker's fetch, and from fetch to done (a batch runs its jobs one after another) */
  jobs: Record<string, { jobs: number; completed: number; perSecond: number | null; waitMs: number | null; fetchToDoneMs: number | null }>;
  /** once a second from the first create: deliveries, outbox rows not yet dispatched, open jobs by state */
  /** process.hrtime spans (µs) of the writes and of the wait for deliveries after them (profile windows) */
  windows: { writes: { fromUs: number; toUs: number }; drain: { fromUs: number; toUs: number } };
  /** --profile-burst: the server's CPU profile over the writes and over the drain after them */
  profile?: { file: string; writes: ProfileSummary; drain: ProfileSummary };
  timeline: { at: number; delivered: number; outboxPending: number; subscriberJobs: string; deliveryJobs: string }[];
}

export interface ScaleResult {
  tenants: number;
  provisioning: { samples: number; medianMs: number; p99Ms: number; maxMs: number; createdThisRun: number };
  single: Measured;
  spread: Measured;
  ratio: number;
  target: number;
  /** req/s of every run, in pairs (with --repeat) */
  runs?: { single: number[]; spread: number[] };
  /** after every tenant was requested `sweeps` times: with connections recycled as shipped, and never */
  memory?: { sweeps: number; recycled?: Sweep; neverRecycled?: Sweep };
}

/** Every scale tenant requested in turn, and the memory held afterwards. */
export interface Sweep {
  requests: number;
  rps: number;
  non2xx: number;
  /** Plinth's RSS */
  rssMb: number;
  /** its PostgreSQL backends' own (anonymous) memory; null when /proc could not be read */
  backends: BackendMemory | null;
}

export interface ColdStart {
  runs: number[];
  medianMs: number;
  reportedReadyMs: number[];
  firstStartMs?: number;
}

export interface Results {
  meta: Record<string, unknown>;
  sql?: { templates: Templates; otherStatements: Record<string, string[]>; sameStatements: string };
  scenarios: ScenarioResult[];
  scale?: ScaleResult;
  deliveryBurst?: DeliveryBurst;
  biDashboard?: BiDashboardResult;
  /** provisioning with and without a spare schema, and a one-field change migrated across the scale tenants */
  tenancy?: TenancyScaleResult;
  coldStart?: { postgres?: ColdStart; pglite?: ColdStart; targetMs: number };
  profile?: ProfileSummary & { scenario: string; rps: number; window: { fromUs: number; toUs: number } };
}

export const round = (n: number, d = 2) => Math.round(n * 10 ** d) / 10 ** d;
export const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
export const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
};

const mark = (ok: boolean) => (ok ? 'ok  ' : 'MISS');

function table(rows: string[][]): string {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  return rows
    .map((r, n) => {
      const line = r.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
      return n === 0 ? `${line}\n${widths.map((w) => '-'.repeat(w)).join('  ')}` : line;
    })
    .join('\n');
}

export function formatResults(r: Results): string {
  const out: string[] = [];
  if (r.scenarios.length) {
    out.push(
      table([
        ['scenario', 'baseline req/s', 'Plinth req/s', 'ratio', 'target', '', 'p50 ms (b / P)', 'p99 ms (b / P)', 'p99 x', 'non-2xx (b / P)', 'Plinth RSS MB'],
        ...r.scenarios.map((s) => [
          s.label,
          String(s.baseline.rps),
          String(s.plinth.rps),
          s.ratio?.toFixed(2) ?? 'n/a',
          `>= ${s.target.toFixed(2)}`,
          s.ratio === null || s.p99Ratio === null ? 'n/a ' : mark(s.ratio >= s.target && s.p99Ratio <= 2 && s.plinth.non2xx === 0 && s.plinth.errors === 0),
          `${s.baseline.p50} / ${s.plinth.p50}`,
          `${s.baseline.p99} / ${s.plinth.p99}`,
          s.p99Ratio?.toFixed(2) ?? 'n/a',
          `${s.baseline.non2xx + s.baseline.errors} / ${s.plinth.non2xx + s.plinth.errors}`,
          String(s.plinth.rssMb),
        ]),
      ]),
    );
    if (r.sql) out.push(r.sql.sameStatements);
    const evented = r.scenarios.filter((s) => s.eventsOff);
    if (evented.length) {
      out.push(
        '',
        'Outbox cost on writes: Plinth (events on) against the same Plinth with EVENTS=off, same run, WORKERS=false in both',
        table([
          ['scenario', 'events on req/s', 'EVENTS=off req/s', 'on / off', 'target', '', 'p50 ms (on / off)', 'p99 ms (on / off)', 'outbox rows (on / off)', 'non-2xx (on / off)'],
          ...evented.map((s) => {
            const off = s.eventsOff!;
            return [
              s.label,
              String(s.plinth.rps),
              String(off.rps),
              s.outboxRatio?.toFixed(2) ?? 'n/a',
              `>= ${(s.outboxTarget ?? 0.9).toFixed(2)}`,
              s.outboxRatio == null ? 'n/a ' : mark(s.outboxRatio >= (s.outboxTarget ?? 0.9) && s.plinth.non2xx + s.plinth.errors === 0 && off.non2xx + off.errors === 0),
              `${s.plinth.p50} / ${off.p50}`,
              `${s.plinth.p99} / ${off.p99}`,
              `${s.plinth.outboxRows ?? '?'} / ${off.outboxRows ?? '?'}`,
              `${s.plinth.non2xx + s.plinth.errors} / ${off.non2xx + off.errors}`,
            ];
          }),
        ]),
      );
    }
  }
  if (r.scale) {
    const s = r.scale;
    out.push(
      '',
      `Tenancy scale: ${s.tenants} tenants`,
      table([
        ['measure', 'value', 'target', ''],
        ['provisioning median (ms)', `${s.provisioning.medianMs} (n=${s.provisioning.samples})`, '< 300', mark(s.provisioning.medianMs < 300)],
        ['provisioning p99 / max (ms)', `${s.provisioning.p99Ms} / ${s.provisioning.maxMs}`, '', ''],
        ['GET by id, 1 tenant (req/s)', String(s.single.rps), '', ''],
        [`GET by id, ${s.tenants} tenants (req/s)`, String(s.spread.rps), '', ''],
        ['spread / single', s.ratio.toFixed(2), `>= ${s.target.toFixed(2)}`, mark(s.ratio >= s.target && s.spread.non2xx === 0)],
        ['p99 single / spread (ms)', `${s.single.p99} / ${s.spread.p99}`, '', ''],
        ['non-2xx single / spread', `${s.single.non2xx + s.single.errors} / ${s.spread.non2xx + s.spread.errors}`, '', ''],
        ['Plinth RSS single / spread (MB)', `${s.single.rssMb} / ${s.spread.rssMb} (peak ${s.spread.peakRssMb})`, '', ''],
        ...(['recycled', 'neverRecycled'] as const).flatMap((k) => {
          const m = s.memory?.[k];
          if (!m) return [];
          const pg = m.backends ? `${m.backends.totalMb} MB in ${m.backends.backends} backends (largest ${m.backends.maxMb})` : 'not readable';
          return [
            [`after ${s.memory!.sweeps} request(s) per tenant, connections ${k === 'recycled' ? 'recycled' : 'never recycled'}: Plinth RSS / PostgreSQL backends`, `${m.rssMb} MB / ${pg}`, '', ''],
          ];
        }),
      ]),
    );
  }
  if (r.biDashboard) {
    const d = r.biDashboard;
    out.push(
      '',
      `BI dashboard: ${d.widgets} widgets over ${d.rows} rows (GET /api/bi/sheets/:id/data, in-process): cold ${d.coldMs} ms, warm ${d.warmMs.median} ms (max ${d.warmMs.max}; target < ${d.targetWarmMs}), after a write ${d.afterWriteMs} ms`,
    );
  }
  if (r.deliveryBurst) {
    const b = r.deliveryBurst;
    out.push(
      '',
      `Delivery burst: ${b.creates} creates over ${b.connections} connections, one webhook for catalog.* on a loopback receiver (workers on)`,
      table([
        ['measure', 'value', 'target', ''],
        ['creates committed (201) / sent', `${b.committed} / ${b.creates}`, '', b.committed === b.creates ? 'ok  ' : 'MISS'],
        ['write duration (s)', `${b.writeSeconds} (${b.writeRps} creates/s, p99 ${b.writeP99Ms} ms)`, '', ''],
        ['delivered by the last commit', String(b.deliveredByLastCommit), '', ''],
        [
          'last commit → all delivered (s)',
          b.drainSeconds === null ? `not within ${b.timeoutSeconds} s (${b.delivered} of ${b.committed})` : String(b.drainSeconds),
          `<= ${b.targetSeconds}`,
          mark(b.drainSeconds !== null && b.drainSeconds <= b.targetSeconds),
        ],
        ['first create → last delivery (s)', String(b.endToEndSeconds), '', ''],
        ['deliveries/s (first → last delivery)', String(b.deliveriesPerSecond ?? 'n/a'), '', ''],
        ['distinct webhook-ids / duplicates', `${b.delivered} / ${b.duplicates}`, '', mark(b.complete && b.duplicates === 0)],
        ['signatures that failed to verify', String(b.invalidSignatures), '0', mark(b.invalidSignatures === 0)],
        ...Object.entries(b.jobs).map(([q, j]) => [`jobs ${q}`, `${j.completed}/${j.jobs} done, ${j.perSecond ?? 'n/a'}/s, waited ${j.waitMs} ms, fetch→done ${j.fetchToDoneMs} ms`, '', '']),
        [
          'delivery log (tries by status; retries)',
          `${Object.entries(b.deliveryLog)
            .map(([k, v]) => `${k} ${v}`)
            .join(', ')}; ${b.retries}`,
          '',
          '',
        ],
      ]),
    );
  }
  if (r.deliveryBurst?.profile) {
    const p = r.deliveryBurst.profile;
    out.push('', `Profile of the burst's server while the creates were sent (${p.file})`, formatSummary(p.writes));
    out.push('', "Profile of the burst's server after the last commit, while deliveries drained", formatSummary(p.drain));
  }
  if (r.coldStart) {
    const c = r.coldStart;
    const row = (name: string, x?: ColdStart, target?: number) =>
      x
        ? [
            name,
            `${x.medianMs}`,
            x.runs.join(', '),
            x.reportedReadyMs.join(', '),
            x.firstStartMs === undefined ? '' : String(x.firstStartMs),
            target ? `< ${target}` : '',
            target ? mark(x.medianMs < target) : '',
          ]
        : [name, 'skipped', '', '', '', '', ''];
    out.push(
      '',
      'Cold start (spawn of scripts/start.ts → "Plinth ready" line)',
      table([['database', 'median ms', 'runs ms', 'readyMs logged', 'first start ms', 'target', ''], row('PostgreSQL', c.postgres, c.targetMs), row('PGlite (data dir)', c.pglite)]),
    );
  }
  if (r.profile) out.push('', `Profile of ${r.profile.scenario} under load (${r.profile.rps} req/s while profiled)`, formatSummary(r.profile));
  return out.join('\n');
}

export function writeResults(dir: string, stamp: string, r: Results): string {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${stamp}.json`);
  writeFileSync(file, `${JSON.stringify(r, null, 2)}\n`);
  return file;
}
