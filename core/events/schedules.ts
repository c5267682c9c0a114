// Cron jobs per tenant, in the tenant's time zone: one pg-boss schedule per
// (cron job, time zone in use) on each database fires at that zone's cron time
// and fans out one job per active tenant of the zone. The schedules follow the
// tenants (new ones, other zones) within SYNC_MS.
import type { PgBoss } from 'pg-boss';
import type { Databases } from '../db/databases.ts';
import type { Row } from '../data/sql.ts';
import type { JobDefinition } from '../context/plugin-module.ts';
import type { JobQueues } from './job-queues.ts';
import type { Log } from './dispatcher.ts';

export const CRON_QUEUE = 'plinth.cron';
const SYNC_MS = 5 * 60_000;

/** A module job as queued: its tenant and company, the sender's data, and tries if the sender chose them. */
export interface ModuleJob {
  tenantId: string;
  companyId: string | null;
  data: unknown;
  attempts?: number;
}

interface ScheduleDeps {
  dbs: Databases;
  queues: JobQueues;
  /** the registry table (tenants' connection keys and time zones) */
  registryTable: string;
  jobs: Map<string, JobDefinition>;
}

export class CronSchedules {
  #deps: ScheduleDeps;
  #timers: NodeJS.Timeout[] = [];

  constructor(deps: ScheduleDeps) {
    this.#deps = deps;
  }

  /** Works the cron queue of database `key` and keeps its schedules in line. */
  async start(key: string, log: Log): Promise<void> {
    const boss = this.#deps.queues.boss(key);
    await boss.work<{ job: string; tz: string }>(CRON_QUEUE, async ([job]) => this.#fanOut(key, boss, job.data));
    await this.sync(key);
    const timer = setInterval(() => this.sync(key).catch((err) => log.error({ err, database: key }, 'syncing cron schedules failed')), SYNC_MS);
    timer.unref();
    this.#timers.push(timer);
  }

  stop(): void {
    this.#timers.splice(0).forEach(clearInterval);
  }

  /** One schedule per (cron job, time zone of an active tenant) on database `key`; others removed. */
  async sync(key: string): Promise<void> {
    const boss = this.#deps.queues.boss(key);
    const zones = (await this.#registry(`select distinct time_zone as "tz" from ${this.#deps.registryTable} where connection_key = ? and status = 'active'`, [key])).map((r) => r.tz as string);
    const wanted = new Map<string, { job: string; tz: string; cron: string }>();
    // a schedule key allows [\w.\-/]: Etc/GMT+5 becomes Etc/GMT_2b5
    const scheduleKey = (job: string, tz: string) => `${job}/${tz.replace(/[^\w.\-/]/g, (c) => `_${c.charCodeAt(0).toString(16)}`)}`;
    for (const [job, def] of this.#deps.jobs) if (def.cron) for (const tz of zones) wanted.set(scheduleKey(job, tz), { job, tz, cron: def.cron });
    for (const s of await boss.getSchedules(CRON_QUEUE)) if (!wanted.has(s.key)) await boss.unschedule(CRON_QUEUE, s.key);
    for (const [k, w] of wanted) await boss.schedule(CRON_QUEUE, w.cron, { job: w.job, tz: w.tz }, { tz: w.tz, key: k });
  }

  async #fanOut(key: string, boss: PgBoss, { job, tz }: { job: string; tz: string }): Promise<void> {
    if (!this.#deps.jobs.has(job)) return;
    // a tenant whose schema could not be migrated answers nothing until it is: its cron jobs would only fail
    const tenants = await this.#registry(`select id from ${this.#deps.registryTable} where connection_key = ? and time_zone = ? and status = 'active' and migration_error is null order by id`, [
      key,
      tz,
    ]);
    for (let i = 0; i < tenants.length; i += 500) {
      const jobs = tenants.slice(i, i + 500).map((t) => ({ data: { tenantId: t.id, companyId: null, data: {} } satisfies ModuleJob, group: { id: t.id as string } }));
      await boss.insert(job, jobs);
    }
  }

  #registry(sql: string, params: unknown[]): Promise<Row[]> {
    return this.#deps.dbs.main.em.getConnection().execute(sql, params) as Promise<Row[]>;
  }
}
