// A started server migrates outdated tenants in the background (scripts/serve.ts):
// it serves the current ones at once, and a tenant still to be migrated answers
// 503 TENANT_MIGRATING with Retry-After, which also moves it to the front of the
// queue. Once migrated (setDigest updates the cached tenant) it is served at once.
// An error that is no tenant's own (the database went away) stops the run; the
// next one begins after a pause, from the registry as it is then.
import { setTimeout as sleep } from 'node:timers/promises';
import { httpError } from '../errors.ts';
import { RETRY_AFTER_SECONDS } from '../db/failures.ts';
import { MigrationRun, type MigrateDeps, type MigrationProgress, type MigrationResult, type MigrationStep } from './migrate-tenants.ts';
import type { Tenant } from './registry.ts';

export interface BackgroundEvents {
  onProgress?: (progress: MigrationProgress, step: MigrationStep) => void;
  /** every tenant is finished */
  onDone?: (result: MigrationResult, progress: MigrationProgress) => void;
  /** the run stopped on an error that is no tenant's own; the next run begins after retryInMs */
  onStopped?: (err: unknown, retryInMs: number) => void;
}

const FIRST_PAUSE_MS = 5_000;
const LONGEST_PAUSE_MS = 60_000;
/** how long a login waits for its tenant's migration before it answers 503 */
const LOGIN_WAIT_MS = 10_000;

export class BackgroundMigration {
  readonly #deps: MigrateDeps;
  readonly #pause: { first: number; longest: number };
  readonly #abort = new AbortController();
  #run: MigrationRun | undefined;
  #loop: Promise<void> | undefined;
  /** a run is under way (not paused after a lost database, not finished) */
  #working = false;

  constructor(deps: MigrateDeps, pause = { first: FIRST_PAUSE_MS, longest: LONGEST_PAUSE_MS }) {
    this.#deps = deps;
    this.#pause = pause;
  }

  /**
   * Reads which tenants are outdated (one query): from here on requests to them
   * answer 503 until they are migrated. Returns how many. The server calls it
   * before it listens, and start() after.
   */
  async prepare(): Promise<number> {
    this.#run = await this.#read();
    return this.#run.total;
  }

  async #read(): Promise<MigrationRun> {
    return new MigrationRun(this.#deps, await this.#deps.tenants.outdated(this.#deps.digest));
  }

  /** Migrates the prepared tenants in the background; resolves when every one is finished or stop() was called. */
  start(events: BackgroundEvents = {}): Promise<void> {
    this.#loop ??= this.#work(events);
    return this.#loop;
  }

  async #work(events: BackgroundEvents): Promise<void> {
    const signal = this.#abort.signal;
    let pause = this.#pause.first;
    let finished: { result: MigrationResult; progress: MigrationProgress } | undefined;
    for (let stale = !this.#run; !signal.aborted; stale = true) {
      try {
        // after a stop, the registry as it is then: the tenants migrated before it are no longer outdated;
        // until it is read, the stopped run answers for its unfinished tenants
        if (stale) this.#run = await this.#read();
        const run = this.#run!;
        this.#working = true;
        const result = await run.run({ onProgress: events.onProgress, signal }).finally(() => (this.#working = false));
        if (signal.aborted) return;
        this.#run = undefined;
        finished = { result, progress: run.progress() };
        break;
      } catch (err) {
        if (signal.aborted) return;
        events.onStopped?.(err, pause);
        await sleep(pause, undefined, { signal }).catch(() => undefined);
        pause = Math.min(pause * 2, this.#pause.longest);
      }
    }
    if (finished) events.onDone?.(finished.result, finished.progress);
  }

  /** Counts of the run under way; undefined when none is (nothing outdated, or every tenant finished). */
  progress(): MigrationProgress | undefined {
    return this.#run?.progress();
  }

  /**
   * Refuses a tenant whose schema this process has still to migrate (its digest
   * is not the loaded modules' and it has no migration error: that one answers
   * TENANT_MIGRATION_FAILED), and moves it to the front of the queue.
   */
  assertMigrated(tenant: Tenant): void {
    const run = this.#run;
    if (!run || !this.#pending(run, tenant)) return;
    run.prioritize(tenant.id);
    throw httpError('TENANT_MIGRATING', `tenant ${tenant.id} is being migrated to the loaded modules; try again in a few seconds`, {
      headers: { 'retry-after': String(RETRY_AFTER_SECONDS) },
    });
  }

  /**
   * As assertMigrated, but while the run is under way it first waits up to
   * `waitMs` for the tenant (moved to the front of the queue). A login waits: its
   * user is there, and an at once 503 would tell tenant ids that exist from
   * those that do not, which the password check otherwise hides.
   */
  async awaitMigrated(tenant: Tenant, waitMs = LOGIN_WAIT_MS): Promise<void> {
    const run = this.#run;
    if (run && this.#working && this.#pending(run, tenant)) {
      run.prioritize(tenant.id);
      const timeout = new AbortController();
      await Promise.race([run.finished(tenant.id), sleep(waitMs, undefined, { signal: timeout.signal }).catch(() => undefined)]);
      timeout.abort();
    }
    this.assertMigrated(tenant);
  }

  #pending(run: MigrationRun, tenant: Tenant): boolean {
    return tenant.schemaDigest !== this.#deps.digest && !tenant.migrationError && run.has(tenant.id);
  }

  /** No tenant begins after this; resolves once those under way are finished. */
  async stop(): Promise<void> {
    this.#abort.abort();
    await this.#loop;
  }
}
