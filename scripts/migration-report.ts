// How npm run migrate and the server's start tell a person (or a log collector)
// how far the migration of tenants is: a line of counts, rate and time left, not
// one per tenant (at 10,000 tenants: every tenth of the way or every few seconds),
// and a summary at the end.
import type { FailedMigration, MigrationProgress } from '../core/tenancy/migrate-tenants.ts';

/** 1.2 s, 48 s, 3 min 20 s, 1 h 05 min */
export function duration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (ms < 10_000) return `${(ms / 1000).toFixed(1)} s`;
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s`;
  return `${Math.floor(s / 3600)} h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')} min`;
}

const rateOf = (p: Pick<MigrationProgress, 'rate'>) => `${p.rate >= 10 ? p.rate.toFixed(0) : p.rate.toFixed(1)} tenants/s`;

/** "120/1000 tenants (2 failed), 880 left, 35 tenants/s, about 25 s to go" */
export function describeProgress(p: MigrationProgress): string {
  const failed = p.failed ? ` (${p.failed} failed)` : '';
  const eta = p.etaMs === null || !p.remaining ? '' : `, about ${duration(p.etaMs)} to go`;
  return `${p.done}/${p.total} tenants${failed}, ${p.remaining} left, ${rateOf(p)}${eta}`;
}

/** The first line of a migration error's message: the statements follow in the registry (GET /api/platform/tenants/:id). */
export const reasonOf = (f: FailedMigration) => `${f.error.code}: ${f.error.message.split('\n')[0]}`;

const LISTED = 50;

/** The closing lines: counts, time and rate, then each failed tenant with its reason (the first 50). */
export function summaryLines(p: MigrationProgress, failed: FailedMigration[]): string[] {
  if (!p.total) return ['every tenant is up to date'];
  const lines = [`migrated ${p.migrated} tenant(s), ${p.failed} failed, in ${duration(p.elapsedMs)} (${rateOf(p)})`];
  if (p.remaining) lines.push(`${p.remaining} not begun: run it again to migrate them`);
  for (const f of failed.slice(0, LISTED)) lines.push(`  failed: ${f.tenant.id} (${f.tenant.schema}) ${reasonOf(f)}`);
  if (failed.length > LISTED) lines.push(`  and ${failed.length - LISTED} more (GET /api/platform/tenants shows every migrationError)`);
  return lines;
}

/**
 * Whether a progress line is due: the first tenant, the last one, each tenth of
 * the way, and otherwise at most one every `everyMs`. `now` is for tests.
 */
export class ProgressPace {
  readonly #everyMs: number;
  readonly #now: () => number;
  #last = -Infinity;
  #step = 0;

  constructor(everyMs = 5_000, now = () => performance.now()) {
    this.#everyMs = everyMs;
    this.#now = now;
  }

  due(p: Pick<MigrationProgress, 'done' | 'total'>): boolean {
    const step = Math.floor((p.done * 10) / Math.max(p.total, 1));
    const now = this.#now();
    if (p.done === 1 || p.done === p.total || step > this.#step || now - this.#last >= this.#everyMs) {
      this.#step = step;
      this.#last = now;
      return true;
    }
    return false;
  }
}
