// The bench's table and its JSON file under bench/results/.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LoadResult } from './load.ts';
import type { ProfileSummary } from './profile-summary.ts';
import { formatSummary } from './profile-summary.ts';
import type { Templates } from './sql-template.ts';

export type Measured = LoadResult & { rssMb: number; peakRssMb: number; startMs: number };

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
  runs: { baseline: number[]; plinth: number[] };
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
      ]),
    );
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
