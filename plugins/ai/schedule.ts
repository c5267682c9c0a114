// Report schedules: cron expressions in the tenant's time zone. A job runs
// every minute for every tenant and runs each enabled report whose nextRunAt
// has come, once: the run is claimed by moving nextRunAt on, under the row's
// lock, so a second process (or a retried job) finds it no longer due. After
// downtime a report catches up once, not once per missed time: the next time
// is computed from now, not from the one missed.
import { CronExpressionParser } from 'cron-parser';
import type { JobDefinition, ModuleContext, Row } from '../../core/plugin-api.ts';
import { executeRun } from './report-runs.ts';

/** Reports claimed per tenant and minute; the rest stay due for the next minute. */
const BATCH = 50;

/** Why `expression` is no cron expression, or null. */
export function cronProblem(expression: string): string | null {
  if (!expression.trim()) return 'must be a cron expression';
  try {
    CronExpressionParser.parse(expression, { tz: 'UTC' });
    return null;
  } catch (err) {
    return `is no cron expression: ${(err as Error).message}`;
  }
}

/** The first time after `after` that `expression` names, on the clock of `timeZone`. */
export function nextRunAfter(expression: string, timeZone: string, after: Date): Date {
  return CronExpressionParser.parse(expression, { currentDate: after, tz: timeZone }).next().toDate();
}

/** When a definition runs next: null without a schedule, while disabled or once archived. */
export function nextRunOf(report: { schedule?: unknown; enabled?: unknown; archived?: unknown }, timeZone: string, now: Date): Date | null {
  return typeof report.schedule === 'string' && report.enabled !== false && report.archived !== true ? nextRunAfter(report.schedule, timeZone, now) : null;
}

/**
 * Runs every report of the context's tenant due at `now` (the job passes the
 * clock; tests pass a time of their own). Answers the runs made.
 */
export async function runDueReports(ctx: ModuleContext, now: Date = ctx.now()): Promise<Row[]> {
  // the schedule is the tenant's: it reads every definition, and each run acts as its owner
  const reports = ctx.system().data('AiReport');
  const due = await reports.find({ enabled: true, nextRunAt: { $lte: now.toISOString() } }, { limit: BATCH, orderBy: 'nextRunAt' });
  const runs: Row[] = [];
  for (const candidate of due) {
    const claimed = await ctx.transaction(async (tx) => {
      const report = await tx.system().data('AiReport').lock(candidate.id);
      // another process claimed it first, or it changed since it was found
      if (!report.enabled || report.archived || !report.nextRunAt || new Date(report.nextRunAt) > now) return null;
      const next = nextRunOf(report, ctx.timeZone, now);
      await tx
        .system()
        .data('AiReport')
        .update(report.id, {}, { set: { nextRunAt: next?.toISOString() ?? null, lastScheduledAt: now.toISOString() } });
      return report;
    });
    if (!claimed) continue;
    const from = claimed.lastScheduledAt ? new Date(claimed.lastScheduledAt) : null;
    runs.push(await executeRun(ctx, claimed, { from, to: now }, { triggeredBy: 'schedule', now }));
  }
  return runs;
}

export const scheduledReports: JobDefinition = {
  cron: '* * * * *',
  attempts: 1,
  async handle(ctx) {
    await runDueReports(ctx);
  },
};
