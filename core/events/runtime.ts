// Events and jobs at run time, on the job runner (job-queues.ts):
//   - the dispatcher hands committed outbox rows to the subscribers whose
//     patterns match, as one job per (event, subscriber), in the transaction
//     that marks the rows dispatched: every process may run it, each row is
//     taken by one (SKIP LOCKED), and a crash before commit leaves it pending;
//   - subscriber jobs run the module's handler with a receipt of the event id
//     in the handler's transaction, so a retried job does its writes once;
//   - module jobs (ctx.enqueue, or per tenant on a cron in the tenant's time
//     zone) run their handler, retried with exponential backoff and jitter,
//     dead-lettered after their last try.
// Every job carries its tenant as pg-boss group: a worker runs at most
// `tenantConcurrency` jobs of one tenant at a time, so one tenant's burst
// cannot starve the others.
import type { Job, JobInsert, JobResult, PgBoss } from 'pg-boss';
import type { Databases } from '../db/databases.ts';
import type { Outbox, PlinthEvent } from '../data/outbox.ts';
import { eventOf } from '../data/outbox.ts';
import { run, type Row } from '../data/sql.ts';
import type { CrudContext } from '../crud/crud-service.ts';
import type { TenantRegistry, Tenant } from '../tenancy/registry.ts';
import { SYSTEM, type Principal } from '../access/principal.ts';
import type { EnqueueOptions, ModuleContext } from '../context/module-context.ts';
import type { JobDefinition, PluginModule, Subscriber } from '../context/plugin-module.ts';
import { matchesPattern } from '../manifest/events.ts';
import { ManifestError } from '../manifest/errors.ts';
import { txDb, type JobQueues } from './job-queues.ts';

export const SUBSCRIBER_QUEUE = 'plinth.subscriber';
const CRON_QUEUE = 'plinth.cron';
const MAINTENANCE_QUEUE = 'plinth.maintenance';
const deadQueue = (queue: string) => `${queue}.dead`;
const SCHEDULE_SYNC_MS = 5 * 60_000;

export interface EventOptions {
  /** ms the dispatcher waits when the outbox had nothing (more) to hand on */
  pollMs: number;
  /** outbox rows per dispatch transaction, and at most per tenant of them */
  batchSize: number;
  perTenant: number;
  /** jobs of one tenant a worker runs at once */
  tenantConcurrency: number;
  /** days dispatched events and their receipts are kept (delivery logs, replays) */
  retentionDays: number;
  /** overrides every job's first retry delay (tests) */
  retryDelaySeconds?: number;
}

export interface Log {
  error(obj: unknown, msg?: string): void;
  warn(obj: unknown, msg?: string): void;
}

interface RuntimeDeps {
  dbs: Databases;
  outbox: Outbox;
  queues: JobQueues;
  tenants: TenantRegistry;
  /** the registry table (tenants' connection keys and time zones) */
  registryTable: string;
  modules: { manifest: { id: string }; file: string; plugin?: PluginModule }[];
  knownTypes: string[];
  contextFor(opts: { tenant: string; principal: Principal; companyId?: string | null }): Promise<ModuleContext>;
  options: EventOptions;
}

/** Events of one tenant and company for one subscriber, oldest first (a dispatch batch's worth at most). */
interface SubscriberJob {
  tenantId: string;
  companyId: string | null;
  subscriber: string;
  events: PlinthEvent[];
}
/** events one subscriber job carries at most */
const EVENTS_PER_JOB = 100;
interface ModuleJob {
  tenantId: string;
  companyId: string | null;
  data: unknown;
  /** tries, when the sender chose other than the job's declaration */
  attempts?: number;
}

interface NamedSubscriber {
  name: string;
  def: Subscriber;
}

export class EventRuntime {
  readonly subscribers: NamedSubscriber[] = [];
  /** queue name ("<module>.<job>") → definition */
  readonly jobs = new Map<string, JobDefinition>();
  #deps: RuntimeDeps;
  #running = false;
  #loops: Promise<void>[] = [];
  #wake: (() => void)[] = [];
  #log: Log = { error: () => {}, warn: () => {} };
  #timers: NodeJS.Timeout[] = [];
  /** per database: the tenant the last dispatch batch ended with */
  #cursor = new Map<string, string>();

  constructor(deps: RuntimeDeps) {
    this.#deps = deps;
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
      await ensureQueue(boss, CRON_QUEUE, { retryLimit: 3 });
      await ensureQueue(boss, MAINTENANCE_QUEUE, { retryLimit: 1 });
    }
  }

  /** Sends a module job for the context's tenant and company, in its transaction if it is in one. */
  async enqueue(crud: CrudContext, name: string, data: unknown, opts: EnqueueOptions = {}): Promise<string | null> {
    if (!this.jobs.has(name)) throw new Error(`no module declares the job "${name}" (plugin "jobs")`);
    const attempts = opts.attempts === undefined ? undefined : Math.max(1, Math.floor(opts.attempts));
    const tenant = this.#deps.tenants.cached(crud.tenantId) ?? (await this.#deps.tenants.find(crud.tenantId));
    const boss = this.#deps.queues.boss(tenant!.connectionKey);
    const job: ModuleJob = { tenantId: crud.tenantId, companyId: crud.companyId, data, attempts };
    return boss.send(name, job as unknown as object, {
      group: { id: crud.tenantId },
      startAfter: opts.startAfter,
      ...(attempts ? { retryLimit: attempts - 1 } : {}),
      db: txDb(crud.em),
    });
  }

  /** Sends many jobs of one kind for the context's tenant and company in one statement, in its transaction if it is in one. */
  async enqueueMany(crud: CrudContext, name: string, items: { data: unknown; attempts?: number }[]): Promise<void> {
    if (!this.jobs.has(name)) throw new Error(`no module declares the job "${name}" (plugin "jobs")`);
    if (!items.length) return;
    const tenant = this.#deps.tenants.cached(crud.tenantId) ?? (await this.#deps.tenants.find(crud.tenantId));
    const jobs = items.map((item) => {
      const attempts = item.attempts === undefined ? undefined : Math.max(1, Math.floor(item.attempts));
      const data: ModuleJob = { tenantId: crud.tenantId, companyId: crud.companyId, data: item.data, attempts };
      return { data, group: { id: crud.tenantId }, ...(attempts ? { retryLimit: attempts - 1 } : {}) };
    });
    await this.#deps.queues.boss(tenant!.connectionKey).insert(name, jobs, { db: txDb(crud.em) });
  }

  /** Starts the dispatchers and workers of this process. */
  async start(log: Log): Promise<void> {
    this.#log = log;
    this.#running = true;
    // pg-boss reports what failed in its loops (a lost connection, a failed maintenance run) and carries on
    this.#deps.queues.onError((err) => this.#running && log.error({ err }, 'job runner'));
    for (const key of this.#deps.queues.keys) {
      const boss = this.#deps.queues.boss(key);
      this.#loops.push(this.#dispatchLoop(key, boss));
      // batches (a batch of one waits out the polling interval after every job); NOTIFY wakes a worker
      // for a new job, polling finds retries coming due (they send no NOTIFY). A batch is no larger than
      // what one tenant may run at once: a fetch the tenant limit cuts short would end the burst (fetching
      // on while batches come back full) and leave a tenant's backlog to the 2 s poll
      const work = {
        batchSize: this.#deps.options.tenantConcurrency,
        localConcurrency: 4,
        perJobResults: true as const,
        burstWhenBatchFull: true,
        pollingIntervalSeconds: 0.5,
        notifyPollingIntervalSeconds: 2,
        groupConcurrency: this.#deps.options.tenantConcurrency,
      };
      await boss.work<SubscriberJob>(SUBSCRIBER_QUEUE, work, (jobs) => settle(jobs, (job) => this.#runSubscriber(job)));
      for (const [queue, def] of this.jobs) {
        await boss.work<ModuleJob>(queue, work, (jobs) => settle(jobs, (job) => this.#runJob(def, job)));
      }
      await boss.work<{ job: string; tz: string }>(CRON_QUEUE, async ([job]) => this.#fanOutCron(key, boss, job.data));
      await boss.work(MAINTENANCE_QUEUE, async () => this.#maintain(key));
      await boss.schedule(MAINTENANCE_QUEUE, '17 * * * *', {}, { key: 'outbox' });
      await this.syncSchedules(key);
      // tenants come and change zones: the schedules follow within minutes
      const timer = setInterval(() => this.syncSchedules(key).catch((err) => log.error({ err, database: key }, 'syncing cron schedules failed')), SCHEDULE_SYNC_MS);
      timer.unref();
      this.#timers.push(timer);
    }
  }

  async stop(): Promise<void> {
    this.#running = false;
    this.#timers.splice(0).forEach(clearInterval);
    this.#wake.splice(0).forEach((w) => w());
    await Promise.all(this.#loops.splice(0));
  }

  /** Runs the dispatcher of every database now (tests, and callers that just wrote); resolves when the outbox is drained. */
  async dispatchNow(): Promise<number> {
    let total = 0;
    for (const key of this.#deps.queues.keys) {
      for (let n = -1; n !== 0;) total += n = await this.#dispatch(key, this.#deps.queues.boss(key));
    }
    return total;
  }

  async #dispatchLoop(key: string, boss: PgBoss): Promise<void> {
    let failures = 0;
    while (this.#running) {
      let handed = 0;
      try {
        handed = await this.#dispatch(key, boss);
        failures = 0;
      } catch (err) {
        // the database is gone or restarting: back off, then try again (the rows stay pending)
        failures++;
        if (this.#running) this.#log.error({ err, database: key }, 'event dispatch failed');
      }
      if (handed < this.#deps.options.batchSize || failures) await this.#sleep(failures ? Math.min(30_000, 250 * 2 ** failures) : this.#deps.options.pollMs);
    }
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#wake = this.#wake.filter((w) => w !== done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.#wake.push(done);
    });
  }

  /** One batch: pending rows, fairly across tenants, become subscriber jobs in the transaction that marks them. */
  async #dispatch(key: string, boss: PgBoss): Promise<number> {
    const em = this.#deps.dbs.get(key).em.fork();
    return em.transactional(async (tx) => {
      const rows = await this.#claim(tx, key);
      if (!rows.length) return 0;
      // one job per (tenant, company, subscriber) and up to EVENTS_PER_JOB events: a burst costs a job per
      // hundred events, not per event
      const groups = new Map<string, SubscriberJob>();
      for (const row of rows) {
        const event = eventOf(row);
        for (const s of this.subscribers) {
          if (!s.def.events.some((p) => matchesPattern(p, event.type))) continue;
          const key = `${event.tenantId}\u0000${event.companyId ?? ''}\u0000${s.name}`;
          let group = groups.get(key);
          if (!group) groups.set(key, (group = { tenantId: event.tenantId, companyId: event.companyId, subscriber: s.name, events: [] }));
          group.events.push(event);
        }
      }
      const jobs: JobInsert<SubscriberJob>[] = [];
      for (const g of groups.values()) {
        for (let i = 0; i < g.events.length; i += EVENTS_PER_JOB) jobs.push({ data: { ...g, events: g.events.slice(i, i + EVENTS_PER_JOB) }, group: { id: g.tenantId } });
      }
      if (jobs.length) await boss.insert(SUBSCRIBER_QUEUE, jobs, { db: txDb(tx) });
      await run(tx, `update ${this.#deps.outbox.table} set dispatched_at = now() where id = any($1::uuid[])`, [rows.map((r) => r.id)]);
      return rows.length;
    });
  }

  /**
   * Locks up to batchSize pending rows, at most perTenant of each tenant, the
   * tenants taken in turn from where the last batch stopped (a skip scan of
   * the pending index: one probe per tenant, however long a tenant's backlog),
   * so a tenant's burst waits its turn like everyone else.
   */
  async #claim(tx: Parameters<typeof run>[0], key: string): Promise<Row[]> {
    const { outbox, options } = this.#deps;
    const t = outbox.table;
    const after = this.#cursor.get(key) ?? '';
    const pass = (from: string, upTo: string | null, limit: number) =>
      run(
        tx,
        `with recursive tenants(id) as (
           (select tenant_id from ${t} where dispatched_at is null and tenant_id > $1 order by tenant_id limit 1)
           union all
           select (select e.tenant_id from ${t} e where e.dispatched_at is null and e.tenant_id > tenants.id order by e.tenant_id limit 1) from tenants where tenants.id is not null)
         select x.* from tenants cross join lateral (
           select * from ${t} where dispatched_at is null and tenant_id = tenants.id order by id limit $2 for update skip locked) x
         where tenants.id is not null${upTo === null ? '' : ' and tenants.id <= $4'}
         limit $3`,
        upTo === null ? [from, options.perTenant, limit] : [from, options.perTenant, limit, upTo],
      );
    const rows = await pass(after, null, options.batchSize);
    // wrapped around: the tenants up to where the last batch stopped
    if (rows.length < options.batchSize && after) rows.push(...(await pass('', after, options.batchSize - rows.length)));
    if (rows.length) this.#cursor.set(key, rows[rows.length - 1].tenant_id);
    return rows;
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

  /**
   * Keeps one schedule per (cron job, time zone in use) on database `key`:
   * it fires at the cron time of that zone and fans out to its tenants.
   */
  async syncSchedules(key: string): Promise<void> {
    const boss = this.#deps.queues.boss(key);
    const zones = (await this.#registry(`select distinct time_zone as "tz" from ${this.#deps.registryTable} where connection_key = ? and status = 'active'`, [key])).map((r) => r.tz as string);
    const wanted = new Map<string, { job: string; tz: string; cron: string }>();
    // a schedule key allows [\w.\-/]: Etc/GMT+5 becomes Etc/GMT_2b5
    const scheduleKey = (job: string, tz: string) => `${job}/${tz.replace(/[^\w.\-/]/g, (c) => `_${c.charCodeAt(0).toString(16)}`)}`;
    for (const [job, def] of this.jobs) if (def.cron) for (const tz of zones) wanted.set(scheduleKey(job, tz), { job, tz, cron: def.cron });
    for (const s of await boss.getSchedules(CRON_QUEUE)) if (!wanted.has(s.key)) await boss.unschedule(CRON_QUEUE, s.key);
    for (const [k, w] of wanted) await boss.schedule(CRON_QUEUE, w.cron, { job: w.job, tz: w.tz }, { tz: w.tz, key: k });
  }

  async #fanOutCron(key: string, boss: PgBoss, { job, tz }: { job: string; tz: string }): Promise<void> {
    if (!this.jobs.has(job)) return;
    const tenants = await this.#registry(`select id from ${this.#deps.registryTable} where connection_key = ? and time_zone = ? and status = 'active' order by id`, [key, tz]);
    for (let i = 0; i < tenants.length; i += 500) {
      const jobs = tenants.slice(i, i + 500).map((t) => ({ data: { tenantId: t.id, companyId: null, data: {} }, group: { id: t.id as string } }));
      await boss.insert(job, jobs);
    }
  }

  async #maintain(key: string): Promise<void> {
    const { outbox, options } = this.#deps;
    const em = this.#deps.dbs.get(key).em.fork();
    const cutoff = `now() - make_interval(days => ${Math.max(1, Math.floor(options.retentionDays))})`;
    await run(em, `delete from ${outbox.table} where dispatched_at is not null and occurred_at < ${cutoff}`, []);
    await run(em, `delete from ${outbox.receiptTable} where handled_at < ${cutoff}`, []);
  }

  #registry(sql: string, params: unknown[]): Promise<Row[]> {
    return this.#deps.dbs.main.em.getConnection().execute(sql, params) as Promise<Row[]>;
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
