// Brings every tenant schema to the loaded modules' version, a few schemas at
// once (MIGRATE_CONCURRENCY), each in its own transaction under its own lock
// (db/migrator.ts). Cheap when nothing changed: one registry query. Resumable:
// each tenant commits on its own, so a rerun continues with the tenants still
// outdated. A tenant whose schema cannot take the change (data the change does
// not fit, a change that would lose data) is that tenant's problem alone: it is
// marked in the registry with the reason and the statements (it answers 503
// TENANT_MIGRATION_FAILED), and the others go on. Any other error (the database
// went away) stops the run: no tenant begins after it, those under way finish.
import { DestructiveChangeError, MigrationFailedError, MigrationPlans, migrateSchema, type SchemaMigration } from '../db/migrator.ts';
import type { Config } from '../config.ts';
import type { Databases } from '../db/databases.ts';
import type { ModuleVersion } from '../db/schema-versions.ts';
import type { MigrationError, Tenant, TenantRegistry } from './registry.ts';

/** What migrating a tenant needs of the kernel: connections, the registry and the loaded modules' versions. */
export interface TenantMigrateDeps {
  dbs: Pick<Databases, 'get'>;
  tenants: Pick<TenantRegistry, 'setDigest' | 'outdated' | 'setMigrationError'>;
  versions: ModuleVersion[];
  digest: string;
}

/** ...and migrating many: how many at once. */
export interface MigrateDeps extends TenantMigrateDeps {
  config: Pick<Config, 'migrateConcurrency' | 'poolSize'>;
}

export interface FailedMigration {
  tenant: Tenant;
  error: MigrationError;
}

/** One tenant finished: migrated (`applied` statements; tables the modules do not know are kept and named), or failed on its own schema. */
export type MigrationStep = ({ tenant: Tenant } & SchemaMigration) | { tenant: Tenant; error: MigrationError };

export interface MigrationProgress {
  total: number;
  /** finished, migrated or failed */
  done: number;
  migrated: number;
  failed: number;
  /** not finished yet (under way included) */
  remaining: number;
  elapsedMs: number;
  /** tenants finished per second since the run began */
  rate: number;
  /** estimated ms until every tenant is finished; null before the first one is */
  etaMs: number | null;
}

export interface MigrateOptions {
  /** tenants migrated at once; default config.migrateConcurrency; never more than half the pool (see concurrencyFor) */
  concurrency?: number;
  /** after each tenant, with the counts as they are then */
  onProgress?: (progress: MigrationProgress, step: MigrationStep) => void;
  /** once aborted, no further tenant begins; those under way finish. The next run takes the rest. */
  signal?: AbortSignal;
}

export interface MigrationResult {
  migrated: number;
  /** in tenant id order */
  failed: FailedMigration[];
  /** migrated tenants whose schema holds tables the modules do not know (kept, never dropped), in tenant id order */
  unknownTables: { tenant: Tenant; tables: string[] }[];
  /** diffs made: one per distinct schema state, the other tenants took the same plan */
  plans: number;
}

/**
 * Schemas migrated at once: MIGRATE_CONCURRENCY, but at most half of each
 * database's pool. A migration holds one connection at a time (its transaction,
 * or the diff between its two transactions), and the other half keeps serving
 * requests and the registry's writes while a started server migrates.
 */
export function concurrencyFor(config: MigrateDeps['config'], wanted = config.migrateConcurrency): number {
  return Math.max(1, Math.min(Math.floor(wanted), Math.floor(config.poolSize / 2)));
}

/** The failure of one schema, as the registry keeps it; undefined for an error that is no schema's own (a lost connection). */
export function migrationErrorOf(err: unknown): MigrationError | undefined {
  const at = new Date().toISOString();
  if (err instanceof DestructiveChangeError) return { code: err.code, message: err.message, statements: err.statements, at };
  if (err instanceof MigrationFailedError) return { code: err.code, message: err.message, statements: [err.statement], at };
  return undefined;
}

/** One tenant's migration: its schema's own failure is recorded in the registry and returned; any other error is thrown. */
async function attempt(kernel: TenantMigrateDeps, tenant: Tenant, plans = new MigrationPlans()): Promise<SchemaMigration | { error: MigrationError; cause: unknown }> {
  let done: SchemaMigration;
  try {
    done = await migrateSchema(kernel.dbs.get(tenant.connectionKey), tenant.schema, kernel.versions, plans, tenant.connectionKey);
  } catch (cause) {
    const error = migrationErrorOf(cause);
    if (!error) throw cause;
    await kernel.tenants.setMigrationError(tenant.id, error);
    return { error, cause };
  }
  await kernel.tenants.setDigest(tenant.id, kernel.digest);
  return done;
}

/** Migrates one tenant; a failure of its schema is recorded in the registry, then thrown. */
export async function migrateTenant(kernel: TenantMigrateDeps, tenant: Tenant): Promise<number> {
  const result = await attempt(kernel, tenant);
  if ('cause' in result) throw result.cause;
  return result.applied;
}

/**
 * The tenants one run migrates, in id order unless one is asked for sooner
 * (prioritize: a request waits for it). Knows which are still to be done, so
 * the server can tell a tenant that is not yet migrated from one that is.
 */
export class MigrationRun {
  readonly total: number;
  readonly #kernel: MigrateDeps;
  /** not begun, in id order */
  readonly #queue: Map<string, Tenant>;
  /** not begun, asked for: these go first, in the order they were asked for */
  readonly #urgent: Tenant[] = [];
  /** not finished: queued or under way (a tenant under way when the run stopped stays here) */
  readonly #unfinished: Set<string>;
  #migrated = 0;
  readonly #failed: FailedMigration[] = [];
  readonly #unknownTables: MigrationResult['unknownTables'] = [];
  /** one diff per distinct schema state (fingerprint): tenants alike share it */
  readonly #plans = new MigrationPlans();
  #startedAt: number | undefined;
  #result: Promise<MigrationResult> | undefined;
  /** callers waiting for a tenant to be finished, by tenant id */
  readonly #waiting = new Map<string, (() => void)[]>();

  constructor(kernel: MigrateDeps, tenants: Tenant[]) {
    this.#kernel = kernel;
    this.#queue = new Map(tenants.map((t) => [t.id, t]));
    this.#unfinished = new Set(this.#queue.keys());
    this.total = this.#queue.size;
  }

  /** Whether the tenant is one this run has still to finish. */
  has(id: string): boolean {
    return this.#unfinished.has(id);
  }

  /** Moves a tenant that has not begun to the front of the queue; false when it is not waiting (begun, finished, or none of this run's). */
  prioritize(id: string): boolean {
    const tenant = this.#queue.get(id);
    if (!tenant) return false;
    this.#queue.delete(id);
    this.#urgent.push(tenant);
    return true;
  }

  /** Resolves once the tenant is finished (migrated or failed), or the run stopped; at once for a tenant this run has not to do. */
  finished(id: string): Promise<void> {
    if (!this.#unfinished.has(id) || this.#stopped) return Promise.resolve();
    return new Promise((resolve) => this.#waiting.set(id, [...(this.#waiting.get(id) ?? []), resolve]));
  }

  #stopped = false;

  #release(id?: string): void {
    for (const key of id === undefined ? [...this.#waiting.keys()] : [id]) {
      for (const resolve of this.#waiting.get(key) ?? []) resolve();
      this.#waiting.delete(key);
    }
  }

  progress(): MigrationProgress {
    const failed = this.#failed.length;
    const done = this.#migrated + failed;
    const remaining = this.total - done;
    const elapsedMs = this.#startedAt === undefined ? 0 : performance.now() - this.#startedAt;
    const rate = done / Math.max(elapsedMs / 1000, 0.001);
    return { total: this.total, done, migrated: this.#migrated, failed, remaining, elapsedMs, rate, etaMs: done ? (remaining / rate) * 1000 : null };
  }

  /** Runs the workers, once (a second call gets the first one's result); rejects with the first error that is no tenant's own. */
  run(opts: MigrateOptions = {}): Promise<MigrationResult> {
    this.#result ??= this.#work(opts);
    return this.#result;
  }

  #next(): Tenant | undefined {
    const urgent = this.#urgent.shift();
    if (urgent) return urgent;
    const first = this.#queue.values().next();
    if (first.done) return undefined;
    this.#queue.delete(first.value.id);
    return first.value;
  }

  async #work({ concurrency, onProgress, signal }: MigrateOptions): Promise<MigrationResult> {
    this.#startedAt = performance.now();
    let stop: { err: unknown } | undefined;
    const worker = async () => {
      while (!stop && !signal?.aborted) {
        const tenant = this.#next();
        if (!tenant) return;
        try {
          const result = await attempt(this.#kernel, tenant, this.#plans);
          this.#unfinished.delete(tenant.id);
          this.#release(tenant.id);
          if ('error' in result) this.#failed.push({ tenant, error: result.error });
          else this.#migrated++;
          if ('unknownTables' in result && result.unknownTables.length) this.#unknownTables.push({ tenant, tables: result.unknownTables });
          onProgress?.(this.progress(), 'error' in result ? { tenant, error: result.error } : { tenant, ...result });
        } catch (err) {
          // the database went away (or a reporter threw): no tenant begins after this one
          stop ??= { err };
        }
      }
    };
    const workers = Math.min(concurrencyFor(this.#kernel.config, concurrency), Math.max(1, this.total));
    await Promise.all(Array.from({ length: workers }, worker));
    this.#stopped = true;
    this.#release();
    if (stop) throw stop.err;
    const byId = (a: { tenant: Tenant }, b: { tenant: Tenant }) => a.tenant.id.localeCompare(b.tenant.id);
    return { migrated: this.#migrated, failed: [...this.#failed].sort(byId), unknownTables: [...this.#unknownTables].sort(byId), plans: this.#plans.computed };
  }
}

/** Every outdated tenant; see MigrateOptions. A schema's own failure is recorded and reported, any other error stops the run, to be resumed. */
export async function migrateOutdatedTenants(kernel: MigrateDeps, opts: MigrateOptions = {}): Promise<MigrationResult> {
  return new MigrationRun(kernel, await kernel.tenants.outdated(kernel.digest)).run(opts);
}
