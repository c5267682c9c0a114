// Client jobs: work queued for an API-key client (or for any client of a
// user), taken with a lease, extended by heartbeats, completed or failed. A
// failed try, or a lease that ran out, sends the job back to the queue after
// a backoff (10 s, doubling, at most an hour) until `maxAttempts` tries have
// failed; then it is dead. Jobs live in the tenant's own schema, so one
// tenant's burst never sits in front of another's.
import { httpError, validationError, type ModuleContext, type Row } from '../../core/plugin-api.ts';

export const JOB_STATES = ['queued', 'leased', 'done', 'failed', 'dead'] as const;
/** states a client can take a job in, once its availableAt has come */
const TAKEABLE = ['queued', 'failed'];
export const DEFAULT_LEASE_SECONDS = 120;
/** JSON text of a payload or result, at most */
const MAX_JSON_BYTES = 64 * 1024;
const RETRY_BASE_SECONDS = 10;
const RETRY_MAX_SECONDS = 3600;
const EXPIRE_BATCH = 200;

/** Seconds before the next try after `failed` failed tries. */
const backoffSeconds = (failed: number) => Math.min(RETRY_BASE_SECONDS * 2 ** Math.max(0, failed - 1), RETRY_MAX_SECONDS);

const later = (now: Date, seconds: number) => new Date(now.getTime() + seconds * 1000);

/** Who is woken when a job for a user's clients arrives. */
export const jobTopic = (ownerId: string) => `ai.jobs.${ownerId}`;

export function checkJsonSize(path: string, value: unknown): void {
  if (Buffer.byteLength(JSON.stringify(value ?? null)) > MAX_JSON_BYTES) {
    throw httpError('PAYLOAD_TOO_LARGE', `${path} holds more than ${MAX_JSON_BYTES} bytes of JSON`);
  }
}

export interface QueueJob {
  /** the client that must run it; or */
  clientId?: string;
  /** any active client of this user may take it */
  ownerId?: string;
  kind: string;
  payload?: object;
  maxAttempts?: number;
  /** not before (default now) */
  availableAt?: Date;
}

/**
 * Queues a job, in the caller's transaction if any (the assistant, reports
 * and the route below all come here): the client (or the user's clients)
 * waiting in a long poll wake once it commits. The caller must be able to
 * read the client and create jobs for its owner.
 */
export async function queueJob(ctx: ModuleContext, job: QueueJob): Promise<Row> {
  checkJsonSize('/payload', job.payload);
  let ownerId = job.ownerId;
  if (job.clientId) {
    const client = await ctx.data('AiClient').read(job.clientId);
    if (client.status !== 'active') throw httpError('CONFLICT', `client ${client.id} is revoked`);
    ownerId = client.ownerId;
  }
  if (!ownerId) throw validationError([{ path: '/clientId', message: 'a job needs a client or an owner' }]);
  const input: Record<string, unknown> = { kind: job.kind, payload: job.payload ?? {} };
  if (job.maxAttempts !== undefined) input.maxAttempts = job.maxAttempts;
  const row = await ctx.data('AiJob').create(input, {
    internal: { ownerId, clientId: job.clientId ?? null, anyClient: !job.clientId, availableAt: job.availableAt ?? ctx.now() },
  });
  await ctx.signal(jobTopic(ownerId));
  return row;
}

/** Takes the next job the calling client may run, leased for `leaseSeconds`; null when none is ready. */
export function claimNext(ctx: ModuleContext, now: Date, leaseSeconds: number): Promise<Row | null> {
  return ctx
    .data('AiJob')
    .claim(
      { state: { $in: TAKEABLE }, availableAt: { $lte: now.toISOString() } },
      { state: 'leased', clientId: ctx.principal.id, leasedAt: now, leaseExpiresAt: later(now, leaseSeconds), error: null },
      { orderBy: 'availableAt,createdAt' },
    );
}

/** The job, locked, if the calling client holds its lease; 409 when it does not (any more). */
export async function heldJob(tx: ModuleContext, id: string): Promise<Row> {
  const job = await tx.data('AiJob').lock(id);
  if (job.state !== 'leased' || job.clientId !== tx.principal.id) throw httpError('CONFLICT', `job ${id} is ${job.state}, not leased by this client`);
  return job;
}

/**
 * A try that failed (or a lease that ran out, or a client that went away):
 * back to the queue after a backoff, or dead once `maxAttempts` tries failed.
 * `retry: false`: dead at once (the client knows it cannot succeed).
 */
export async function failTry(tx: ModuleContext, job: Row, now: Date, error: string, retry = true): Promise<Row> {
  const failed = (job.attempts as number) + 1;
  const dead = !retry || failed >= (job.maxAttempts as number);
  const set: Record<string, unknown> = { attempts: failed, error: error.slice(0, 2000), leaseExpiresAt: null };
  if (dead) Object.assign(set, { state: 'dead', finishedAt: now });
  // a job for any of the owner's clients is free for all of them again
  else Object.assign(set, { state: 'failed', availableAt: later(now, backoffSeconds(failed)), clientId: job.anyClient ? null : job.clientId });
  const row = await tx.data('AiJob').update(job.id, {}, { set });
  if (!dead) await tx.signal(jobTopic(job.ownerId));
  return row;
}

/** Returns a client's leased jobs to the queue (it went offline, or was revoked); how many. */
export async function releaseJobsOf(tx: ModuleContext, clientId: string, now: Date, why: string): Promise<number> {
  const jobs = tx.system().data('AiJob');
  let released = 0;
  for (;;) {
    const held = await jobs.find({ clientId, state: 'leased' }, { limit: EXPIRE_BATCH });
    for (const job of held) await failTry(tx.system(), await jobs.lock(job.id), now, why);
    released += held.length;
    if (held.length < EXPIRE_BATCH) return released;
  }
}

/** Leases that ran out: each job goes back to the queue (or dies), one transaction per job. */
export async function expireLeases(ctx: ModuleContext, now: Date): Promise<number> {
  let expired = 0;
  for (;;) {
    const due = await ctx.data('AiJob').find({ state: 'leased', leaseExpiresAt: { $lte: now.toISOString() } }, { limit: EXPIRE_BATCH });
    for (const { id } of due) {
      await ctx.transaction(async (tx) => {
        const job = await tx.data('AiJob').lock(id);
        // a heartbeat may have come in between
        if (job.state === 'leased' && new Date(job.leaseExpiresAt).getTime() <= now.getTime()) await failTry(tx, job, now, 'the lease expired');
      });
    }
    expired += due.length;
    if (due.length < EXPIRE_BATCH) return expired;
  }
}

/**
 * A revoked client runs nothing more: the jobs meant for it alone end dead,
 * and those queued for any of its owner's clients that it held go back to
 * the queue. How many it held.
 */
export async function settleJobsOfRevoked(tx: ModuleContext, clientId: string, now: Date): Promise<number> {
  const jobs = tx.system().data('AiJob');
  let settled = 0;
  for (;;) {
    const open = await jobs.find({ clientId, state: { $in: ['queued', 'leased', 'failed'] } }, { limit: EXPIRE_BATCH });
    for (const job of open) {
      if (job.anyClient) await failTry(tx.system(), await jobs.lock(job.id), now, 'the client was revoked');
      else await jobs.update(job.id, {}, { set: { state: 'dead', finishedAt: now, leaseExpiresAt: null, error: 'the client was revoked' } });
    }
    settled += open.length;
    if (open.length < EXPIRE_BATCH) return settled;
  }
}
