// The client's side of its jobs (/api/ai/client/*, client tokens only): list
// them, claim the next one with a lease (long polling with ?wait=), extend
// the lease with heartbeats, complete with a result or fail with an error.
import { etag, handler, Type } from '../../core/plugin-api.ts';
import { claimNext, checkJsonSize, DEFAULT_LEASE_SECONDS, failTry, heldJob, jobTopic } from './jobs.ts';
import { Id, JobQuery, Page } from './clients.ts';

const MAX_WAIT_SECONDS = 30;
/** a long poll looks again this often even without a wake-up (one missed while a listener reconnected) */
const POLL_MS = 2000;

const Lease = Type.Integer({ minimum: 10, maximum: 3600, description: `seconds the lease lasts (default ${DEFAULT_LEASE_SECONDS}); a heartbeat renews it` });
const Job = (description: string) => Type.Ref('AiJob', { description, headers: ['ETag'] });

export const listOwnJobs = handler({ querystring: JobQuery, response: { 200: Page(Type.Ref('AiJob'), 'The jobs this client holds or may take, newest first') } }, async (ctx, request) =>
  ctx.data('AiJob').list({ ...request.query }),
);

export const claimJob = handler(
  {
    querystring: Type.Object(
      {
        wait: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_WAIT_SECONDS, description: 'seconds to wait for a job when none is ready (long poll); it answers as soon as one is queued' })),
        leaseSeconds: Type.Optional(Lease),
      },
      { additionalProperties: false },
    ),
    response: { 200: Job('The job, leased to this client'), 204: Type.Null({ description: 'No job was ready (within the wait)' }) },
  },
  async (ctx, request, reply) => {
    const lease = request.query.leaseSeconds ?? DEFAULT_LEASE_SECONDS;
    const deadline = Date.now() + (request.query.wait ?? 0) * 1000;
    // the client hung up: stop waiting for it
    const gone = new AbortController();
    reply.raw.once('close', () => gone.abort());
    const owner = (await ctx.data('AiClient').read(ctx.principal.id!)).ownerId as string;
    for (;;) {
      const job = await claimNext(ctx, ctx.now(), lease);
      if (job) {
        reply.header('etag', etag(job.version));
        return ctx.data('AiJob').toDto(job);
      }
      const left = deadline - Date.now();
      if (left <= 0 || gone.signal.aborted) return reply.code(204).send();
      await ctx.waitForSignal(jobTopic(owner), Math.min(left, POLL_MS), gone.signal);
    }
  },
);

export const heartbeatJob = handler(
  {
    params: Id,
    querystring: Type.Object({ leaseSeconds: Type.Optional(Lease) }, { additionalProperties: false }),
    response: { 200: Job('The job, its lease renewed') },
    problems: ['CONFLICT'],
  },
  async (ctx, request, reply) => {
    const now = ctx.now();
    const seconds = request.query.leaseSeconds ?? DEFAULT_LEASE_SECONDS;
    const row = await ctx.transaction(async (tx) => {
      const job = await heldJob(tx, request.params.id);
      return tx.data('AiJob').update(job.id, {}, { set: { leaseExpiresAt: new Date(now.getTime() + seconds * 1000) } });
    });
    reply.header('etag', etag(row.version));
    return ctx.data('AiJob').toDto(row);
  },
);

export const completeJob = handler(
  {
    params: Id,
    body: Type.Object({ result: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'what the job produced: a JSON object, up to 64 KiB' })) }, { additionalProperties: false }),
    response: { 200: Job('The job, done') },
    problems: ['CONFLICT', 'PAYLOAD_TOO_LARGE'],
  },
  async (ctx, request, reply) => {
    checkJsonSize('/result', request.body.result);
    const now = ctx.now();
    const row = await ctx.transaction(async (tx) => {
      const job = await heldJob(tx, request.params.id);
      return tx.data('AiJob').update(job.id, {}, { set: { state: 'done', result: request.body.result ?? null, finishedAt: now, leaseExpiresAt: null, error: null } });
    });
    reply.header('etag', etag(row.version));
    return ctx.data('AiJob').toDto(row);
  },
);

export const failJob = handler(
  {
    params: Id,
    body: Type.Object(
      {
        error: Type.String({ minLength: 1, maxLength: 2000, description: 'what went wrong' }),
        retry: Type.Optional(Type.Boolean({ description: 'false: it cannot succeed, dead at once (default true: tried again after a backoff until maxAttempts)' })),
      },
      { additionalProperties: false },
    ),
    response: { 200: Job('The job: failed (queued again later) or dead') },
    problems: ['CONFLICT'],
  },
  async (ctx, request, reply) => {
    const now = ctx.now();
    const row = await ctx.transaction(async (tx) => failTry(tx, await heldJob(tx, request.params.id), now, request.body.error, request.body.retry ?? true));
    reply.header('etag', etag(row.version));
    return ctx.data('AiJob').toDto(row);
  },
);
