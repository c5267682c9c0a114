// Events and jobs at run time, on the job runner (job-queues.ts): the
// dispatcher (dispatcher.ts) hands committed outbox rows to subscriber jobs;
// this file runs them and the modules' jobs, and cron (schedules.ts) sends
// the scheduled ones.
//   - a subscriber job carries up to 100 events of one tenant and company;
//     each is handled once: a receipt of (event, subscriber) is written in
//     the handler's transaction, so a retried job skips what committed;
//   - module jobs (ctx.enqueue, or per tenant on a cron in the tenant's time
//     zone) run their handler, retried with exponential backoff and jitter,
//     dead-lettered after their last try.
// Every job carries its tenant as pg-boss group: the workers run at most
// `tenantConcurrency` jobs of one tenant at a time, so one tenant's burst
// cannot take every worker.
import type { Job, JobResult, PgBoss } from 'pg-boss';
import type { Config } from '../config.ts';
import type { Databases } from '../db/databases.ts';
import type { Outbox } from '../data/outbox.ts';
import type { DataChanges } from '../data/changes.ts';
import { run } from '../data/sql.ts';
import type { CrudContext } from '../crud/crud-service.ts';
import type { TenantRegistry, Tenant } from '../tenancy/registry.ts';
import { SYSTEM, type Principal } from '../access/principal.ts';
import type { EnqueueItem, EnqueueOptions, ModuleContext } from '../context/module-context.ts';
import type { JobDefinition, PluginModule } from '../context/plugin-module.ts';
import { matchesPattern } from '../manifest/events.ts';
import { Dispatcher, type SubscriberJob, type NamedSubscriber } from './dispatcher.ts';
import { CRON_QUEUE, CronSchedules, type ModuleJob } from './schedules.ts';
import { ManifestError } from '../manifest/errors.ts';
import { txDb, type JobQueues } from './job-queues.ts';

export const SUBSCRIBER_QUEUE = 'plinth.subscriber';
const MAINTENANCE_QUEUE = 'plinth.maintenance';
/**
 * How often an idle worker looks for jobs by itself: rarely, as a last resort. It is woken when
 * this process sends jobs, when a batch of its queue is done and when a job comes due
 * (wake-ups.ts), and on PostgreSQL by NOTIFY when another process sends one.
 */
const WORKER_POLL_SECONDS = 300;
const deadQueue = (queue: string) => `${queue}.dead`;

/** The settings of config.events the runtime uses (declared there, once). */
export type EventOptions = Omit<Config['events'], 'enabled'>;

export type { Log } from './dispatcher.ts';
import type { Log } from './dispatcher.ts';

interface RuntimeDeps {
  dbs: Databases;
  outbox: Outbox;
  /** committed writes, of this process and (PostgreSQL) the others: the dispatcher looks for their events */
  changes?: DataChanges;
  queues: JobQueues;
  tenants: TenantRegistry;
  /** the registry table (tenants' connection keys and time zones) */
  registryTable: string;
  modules: { manifest: { id: string }; file: string; plugin?: PluginModule }[];
  knownTypes: string[];
  contextFor(opts: { tenant: string; principal: Principal; companyId?: string | null }): Promise<ModuleContext>;
  options: EventOptions;
}

export class EventRuntime {
  readonly subscribers: NamedSubscriber[] = [];
  /** queue name ("<module>.<job>") → definition */
  readonly jobs = new Map<string, JobDefinition>();
  #deps: RuntimeDeps;
  #running = false;
  #dispatcher: Dispatcher;
  #schedules: CronSchedules;

  constructor(deps: RuntimeDeps) {
    this.#deps = deps;
    this.#dispatcher = new Dispatcher({ ...deps, subscribers: this.subscribers, queue: SUBSCRIBER_QUEUE });
    this.#schedules = new CronSchedules({ ...deps, jobs: this.jobs });
    for (const m of deps.modules) {
      for (const [name, def] of Object.entries(m.plugin?.subscribers ?? {})) {
        if (!def.handle && !def.handleMany) throw new ManifestError(m.file, '/', `plugins/${m.manifest.id}/index.ts subscriber "${name}" has neither handle nor handleMany`);
        for (const pattern of def.events) {
          if (!deps.knownTypes.some((t) => matchesPattern(pattern, t))) {
            throw new ManifestError(m.file, '/', `plugins/${m.manifest.id}/index.ts subscriber "${name}" listens to "${pattern}", which matches no event type`);
          }
        }
        this.subscribers.push({ name: `${m.manifest.id}.${name}`, def });
      }
      for (const [name, def] of Object.entries(m.plugin?.jobs ?? {})) this.jobs.set(`${m.manifest.id}.${name}`, def);
    }
  }

  /** Creates the queues on every database (idempotent): a process that only sends jobs needs them too. */
  async prepare(): Promise<void> {
    for (const key of this.#deps.queues.keys) {
      const boss = this.#deps.queues.boss(key);
      const delay = this.#deps.options.retryDelaySeconds;
      const retry = { retryBackoff: true, retryDelay: delay ?? 5, retryDelayMax: 3600 };
      await ensureQueue(boss, deadQueue(SUBSCRIBER_QUEUE), { retentionSeconds: 14 * 86400 });
      await ensureQueue(boss, SUBSCRIBER_QUEUE, { ...retry, retryLimit: 9, deadLetter: deadQueue(SUBSCRIBER_QUEUE), expireInSeconds: 300, notify: true });
      for (const [queue, def] of this.jobs) {
        await ensureQueue(boss, deadQueue(queue), { retentionSeconds: 14 * 86400 });
        await ensureQueue(boss, queue, {
          retryLimit: (def.attempts ?? 5) - 1,
          retryBackoff: true,
          retryDelay: delay ?? def.retryDelaySeconds ?? 5,
          retryDelayMax: def.retryDelayMaxSeconds ?? 3600,
          expireInSeconds: def.timeoutSeconds ?? 300,
          deadLetter: deadQueue(queue),
          notify: true,
        });
      }
      await ensureQueue(boss, CRON_QUEUE, { retryLimit: 3, notify: true });
      await ensureQueue(boss, MAINTENANCE_QUEUE, { retryLimit: 1 });
    }
  }

  /** Sends a module job for the context's tenant and company, in its transaction if it is in one. */
  async enqueue(crud: CrudContext, name: string, data: unknown, opts: EnqueueOptions = {}): Promise<string | null> {
    const { key, boss } = await this.#bossFor(crud, name);
    const { data: job, ...options } = this.#moduleJob(crud, { data, attempts: opts.attempts });
    const id = await boss.send(name, job as unknown as object, { ...options, startAfter: opts.startAfter, db: txDb(crud.em) });
    await this.#later(crud, key, dueTime(opts.startAfter));
    return id;
  }

  /** Sends many jobs of one kind for the context's tenant and company in one statement, in its transaction if it is in one. */
  async enqueueMany(crud: CrudContext, name: string, items: EnqueueItem[]): Promise<void> {
    const { boss } = await this.#bossFor(crud, name);
    if (items.length)
      await boss.insert(
        name,
        items.map((item) => this.#moduleJob(crud, item)),
        { db: txDb(crud.em) },
      );
  }

  /** The job runner of the context's tenant's database, for a job a module declares. */
  async #bossFor(crud: CrudContext, name: string): Promise<{ key: string; boss: PgBoss }> {
    if (!this.jobs.has(name)) throw new Error(`no module declares the job "${name}" (plugin "jobs")`);
    const tenant = this.#deps.tenants.cached(crud.tenantId) ?? (await this.#deps.tenants.find(crud.tenantId));
    return { key: tenant!.connectionKey, boss: this.#deps.queues.boss(tenant!.connectionKey) };
  }

  /** A job sent for later (pg-boss's NOTIFY wakes the workers for one due now): this process's workers look then. */
  async #later(crud: CrudContext, key: string, due: Date | undefined): Promise<void> {
    if (!due || due.getTime() <= Date.now()) return;
    const look = async () => this.#deps.queues.wakeUps.dueAt(key, due);
    if (crud.tx) crud.tx.afterCommit.push(look);
    else await look();
  }

  /** A module job as queued: grouped by its tenant, its tries (when the sender chose them) as pg-boss's retry limit. */
  #moduleJob(crud: CrudContext, item: EnqueueItem): { data: ModuleJob; group: { id: string }; retryLimit?: number } {
    const attempts = item.attempts === undefined ? undefined : Math.max(1, Math.floor(item.attempts));
    const data: ModuleJob = { tenantId: crud.tenantId, companyId: crud.companyId, data: item.data, attempts };
    return { data, group: { id: crud.tenantId }, ...(attempts ? { retryLimit: attempts - 1 } : {}) };
  }

  /** Starts the dispatchers and workers of this process. */
  async start(log: Log): Promise<void> {
    this.#running = true;
    // pg-boss reports what failed in its loops (a lost connection, a failed maintenance run) and carries on
    this.#deps.queues.onError((err) => this.#running && log.error({ err }, 'job runner'));
    for (const key of this.#deps.queues.keys) {
      const boss = this.#deps.queues.boss(key);
      this.#dispatcher.start(key, log);
      // batches (a batch of one waits out the polling interval after every job); NOTIFY wakes a worker
      // for a new job, polling finds retries coming due (they send no NOTIFY). A batch is no larger than
      // what one tenant may run at once: a fetch the tenant limit cuts short would end the burst (fetching
      // on while batches come back full) and leave a tenant's backlog to the 2 s poll
      const work = {
        batchSize: this.#deps.options.tenantConcurrency,
        localConcurrency: 4,
        perJobResults: true as const,
        burstWhenBatchFull: true,
        pollingIntervalSeconds: WORKER_POLL_SECONDS,
        notifyPollingIntervalSeconds: WORKER_POLL_SECONDS,
        groupConcurrency: this.#deps.options.tenantConcurrency,
      };
      const { wakeUps } = this.#deps.queues;
      // after a batch the worker fetches again at once (once pg-boss marked it done): more may wait, such as a
      // tenant's jobs past its concurrency; a failure's retry comes due later
      const settled = (queue: string) => (results: JobResult[]) => {
        if (results.length) wakeUps.again(key, queue);
        if (results.some((r) => r.status === 'failed')) wakeUps.failed(key);
        return results;
      };
      await boss.work<SubscriberJob>(SUBSCRIBER_QUEUE, work, (jobs) => settle(jobs, (job) => this.#runSubscriber(job)).then(settled(SUBSCRIBER_QUEUE)));
      for (const [queue, def] of this.jobs) {
        await boss.work<ModuleJob>(queue, work, (jobs) => settle(jobs, (job) => this.#runJob(def, job)).then(settled(queue)));
      }
      const rarely = { pollingIntervalSeconds: WORKER_POLL_SECONDS, notifyPollingIntervalSeconds: WORKER_POLL_SECONDS };
      await boss.work(MAINTENANCE_QUEUE, rarely, async () => this.#maintain(key));
      await boss.schedule(MAINTENANCE_QUEUE, '17 * * * *', {}, { key: 'outbox' });
      await this.#schedules.start(key, log);
      wakeUps.watch(key, boss, this.#deps.queues.schema, [SUBSCRIBER_QUEUE, ...this.jobs.keys(), CRON_QUEUE, MAINTENANCE_QUEUE]);
    }
  }

  async stop(): Promise<void> {
    this.#running = false;
    this.#schedules.stop();
    await this.#dispatcher.stop();
  }

  /** Runs the dispatcher of every database now (tests, and callers that just wrote); resolves when the outbox is drained. */
  dispatchNow(): Promise<number> {
    return this.#dispatcher.drain();
  }

  async #tenant(id: string): Promise<Tenant | undefined> {
    const tenant = await this.#deps.tenants.find(id);
    return tenant?.status === 'active' ? tenant : undefined;
  }

  /**
   * A subscriber's events, each handled once: a receipt of (event, subscriber)
   * is written in the transaction of the handler's work, so a retried job
   * skips what an earlier try committed.
   */
  async #runSubscriber(job: Job<SubscriberJob>): Promise<void> {
    const { tenantId, companyId, subscriber, events } = job.data;
    const s = this.subscribers.find((x) => x.name === subscriber);
    // a subscriber removed since, or a tenant gone or suspended: nothing to do
    if (!s || !(await this.#tenant(tenantId))) return;
    const ctx = await this.#deps.contextFor({ tenant: tenantId, principal: SYSTEM, companyId });
    const { outbox } = this.#deps;
    if (s.def.handleMany) {
      await ctx.transaction(async (tx) => {
        const fresh = new Set(
          await outbox.receipts(
            tx.crud.em,
            events.map((e) => e.id),
            subscriber,
          ),
        );
        if (fresh.size)
          await s.def.handleMany!(
            tx,
            events.filter((e) => fresh.has(e.id)),
          );
      });
      return;
    }
    for (const event of events) {
      await ctx.transaction(async (tx) => {
        if ((await outbox.receipts(tx.crud.em, [event.id], subscriber)).length) await s.def.handle!(tx, event);
      });
    }
  }

  async #runJob(def: JobDefinition, job: Job<ModuleJob>): Promise<void> {
    const { tenantId, companyId, data } = job.data;
    if (!(await this.#tenant(tenantId))) return;
    const ctx = await this.#deps.contextFor({ tenant: tenantId, principal: SYSTEM, companyId });
    const attempts = job.data.attempts ?? def.attempts ?? 5;
    const attempt = job.retryCount + 1;
    try {
      await def.handle(ctx, data, { id: job.id, attempt, attempts });
    } catch (err) {
      // the last try: the job goes to the dead-letter queue; the module hears of it once
      if (attempt >= attempts && def.dead) await def.dead(ctx, data, (err as Error).message ?? String(err));
      throw err;
    }
  }

  /** Brings the cron schedules of database `key` in line with its tenants' time zones now (else every 5 minutes). */
  syncSchedules(key: string): Promise<void> {
    return this.#schedules.sync(key);
  }

  async #maintain(key: string): Promise<void> {
    const { outbox, options } = this.#deps;
    const em = this.#deps.dbs.get(key).em.fork();
    const cutoff = `now() - make_interval(days => ${Math.max(1, Math.floor(options.retentionDays))})`;
    await run(em, `delete from ${outbox.table} where dispatched_at is not null and occurred_at < ${cutoff}`, []);
    await run(em, `delete from ${outbox.receiptTable} where handled_at < ${cutoff}`, []);
  }
}

async function ensureQueue(boss: PgBoss, name: string, options: Record<string, unknown>): Promise<void> {
  if (await boss.getQueue(name)) await boss.updateQueue(name, options);
  else await boss.createQueue(name, options);
}

/** Runs a batch's jobs and reports each one's outcome (a failure retries only that job). */
async function settle<T>(jobs: Job<T>[], fn: (job: Job<T>) => Promise<void>): Promise<JobResult[]> {
  // at once: a batch holds at most a tenant's concurrency of jobs, and a delivery mostly waits on its receiver
  return Promise.all(
    jobs.map(async (job): Promise<JobResult> => {
      try {
        await fn(job);
        return { id: job.id, status: 'completed' };
      } catch (err) {
        return { id: job.id, status: 'failed', output: { message: (err as Error).message ?? String(err) } };
      }
    }),
  );
}

/** When a job sent with pg-boss's startAfter (seconds from now, a date or an ISO string) comes due. */
function dueTime(startAfter: number | string | Date | undefined): Date | undefined {
  if (startAfter === undefined) return undefined;
  const at = typeof startAfter === 'number' ? new Date(Date.now() + startAfter * 1000) : new Date(startAfter);
  return Number.isNaN(at.getTime()) ? undefined : at;
}
