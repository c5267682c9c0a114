// npm run migrate: bring every tenant schema to the loaded modules' version,
// MIGRATE_CONCURRENCY tenants at once, with progress: one updating line on a
// terminal, a line every tenth of the way or every few seconds otherwise, and a
// summary. A tenant whose schema cannot take the change is reported and marked;
// the others go on. Resumable: stopped (Ctrl+C lets the tenants under way
// finish; a second one, or a kill, does not wait) or failed, rerun it.
import { loadConfig } from '../core/config.ts';
import { openKernel } from '../core/kernel.ts';
import { concurrencyFor, MigrationRun, type MigrationResult } from '../core/tenancy/migrate-tenants.ts';
import { describeProgress, ProgressPace, reasonOf, summaryLines } from './migration-report.ts';

const kernel = await openKernel(loadConfig());
const tty = process.stdout.isTTY === true;
// on a terminal the line is rewritten in place (\r, erase line); otherwise each is a line of its own
let drawn = false;
const show = (line: string) => {
  if (!tty) return console.log(line);
  process.stdout.write(`\r\x1b[2K${line}`);
  drawn = true;
};
const endLine = () => {
  if (drawn) process.stdout.write('\n');
  drawn = false;
};
const stopping = new AbortController();
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => stopping.abort());

let run: MigrationRun | undefined;
try {
  run = new MigrationRun(kernel, await kernel.tenants.outdated(kernel.digest));
  if (run.total) console.log(`migrating ${run.total} tenant(s), ${concurrencyFor(kernel.config)} at a time`);
  const pace = new ProgressPace(tty ? 200 : 5_000);
  let result: MigrationResult;
  try {
    result = await run.run({
      signal: stopping.signal,
      onProgress: (p, step) => {
        if ('error' in step) {
          endLine();
          console.error(`${step.tenant.id} (${step.tenant.schema}) FAILED ${reasonOf(step)}`);
        }
        if (pace.due(p) || 'error' in step) show(`migrating: ${describeProgress(p)}`);
      },
    });
  } finally {
    endLine();
  }
  for (const line of summaryLines(run.progress(), result.failed)) console.log(line);
  if (result.plans) console.log(`${result.plans} diff(s) planned the change; every other tenant took the plan of the tenant whose schema it matched`);
  if (result.unknownTables.length) {
    // kept, never dropped: a removed module's data, or an operator's table
    console.log(`${result.unknownTables.length} tenant(s) hold tables the modules do not know (kept):`);
    for (const u of result.unknownTables.slice(0, 20)) console.log(`  ${u.tenant.id}: ${u.tables.join(', ')}`);
    if (result.unknownTables.length > 20) console.log(`  ... and ${result.unknownTables.length - 20} more`);
  }
  if (result.failed.length) {
    // each failed tenant answers 503 TENANT_MIGRATION_FAILED until a rerun (or POST /api/platform/tenants/:id/migrate) succeeds
    console.error(`${result.failed.length} tenant(s) failed; fix their data or the modules, then run npm run migrate again`);
  }
  if (result.failed.length || stopping.signal.aborted) process.exitCode = 1;
} catch (err) {
  // tenants migrated before the failure stay recorded; a rerun continues with the rest
  const { code, message } = err as { code?: string; message: string };
  const p = run?.progress();
  const sofar = p ? ` after ${p.migrated} tenant(s) migrated and ${p.failed} failed` : '';
  console.error(`migration stopped${code ? ` (${code})` : ''}${sofar}: ${message}; run it again for the rest`);
  process.exitCode = 1;
} finally {
  await kernel.close();
}
