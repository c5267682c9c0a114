// Jobs through the API: a tenant's administrators see their tenant's jobs
// (webhook deliveries, subscriber runs, module jobs) and retry a failed one;
// platform operators see every tenant's jobs and the queues' counts.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Kernel } from '../kernel.ts';
import { httpError } from '../errors.ts';
import { JOB_STATES, listJobs } from '../events/job-log.ts';
import { success } from './headers.ts';

const Nullable = <T extends ReturnType<typeof Type.String>>(s: T) => Type.Union([s, Type.Null()]);
const Time = Type.String({ format: 'date-time' });

const Job = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    queue: Type.String({ description: '`plinth.subscriber` (an event for a module subscriber), `<module>.<job>` (a module job), `… .dead` (dead letters)' }),
    tenant: Nullable(Type.String()),
    state: Type.Unsafe<string>({ type: 'string', enum: [...JOB_STATES] }),
    attempt: Type.Integer({ minimum: 1, description: 'the try running or last run' }),
    attempts: Type.Integer({ minimum: 1, description: 'tries before it is dead' }),
    createdAt: Time,
    startAfter: Type.String({ format: 'date-time', description: 'not before: a retry waits until then' }),
    startedAt: Nullable(Time),
    completedAt: Nullable(Time),
    error: Nullable(Type.String({ description: 'why the last try failed' })),
    events: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], { description: "a subscriber job's events (it carries up to 100 of one tenant and company)" }),
  },
  { $id: 'Job', additionalProperties: false },
);
const JobPage = Type.Object({ items: Type.Array(Type.Ref('Job')), page: Type.Integer(), size: Type.Integer(), total: Type.Integer() }, { $id: 'JobPage', additionalProperties: false });
const Queue = Type.Object(
  {
    name: Type.String(),
    database: Type.String({ description: 'the connection key of the database the queue lives on' }),
    queued: Type.Integer({ description: 'created or waiting to be retried' }),
    active: Type.Integer(),
    deferred: Type.Integer({ description: 'waiting for their start time (retries among them)' }),
    failed: Type.Integer({ description: 'failed for good (dead)' }),
    total: Type.Integer(),
  },
  { $id: 'JobQueue', additionalProperties: false },
);

const jobQuery = (extra: Record<string, ReturnType<typeof Type.Optional>> = {}) =>
  Type.Object(
    {
      queue: Type.Optional(Type.String({ maxLength: 200, pattern: '^[\\w.\\-/]+$' })),
      state: Type.Optional(Type.Unsafe<(typeof JOB_STATES)[number]>({ type: 'string', enum: [...JOB_STATES] })),
      page: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000, default: 1 })),
      size: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
      ...extra,
    },
    { additionalProperties: false },
  );

type JobQuery = { queue?: string; state?: (typeof JOB_STATES)[number]; page?: number; size?: number; tenant?: string; database?: string };

export function registerJobRoutes(app: FastifyInstance, kernel: Kernel): void {
  for (const s of [Job, JobPage, Queue]) app.addSchema(s);
  const schema = `${kernel.config.registrySchema}_jobs`;

  app.get(
    '/api/jobs',
    {
      config: { access: { auth: 'user', admin: true } },
      schema: {
        operationId: 'jobsListJobs',
        tags: ['Jobs'],
        summary: "The tenant's jobs, newest first: webhook deliveries, subscriber runs, module jobs (administrators)",
        security: [{ bearerAuth: [] }],
        querystring: jobQuery(),
        response: { 200: success(Type.Ref('JobPage'), "A page of the tenant's jobs") },
      },
    },
    async (request) => {
      const { page = 1, size = 50, queue, state } = request.query as JobQuery;
      const em = kernel.dbs.get(request.tenant!.connectionKey).em.fork();
      return { ...(await listJobs(em, schema, { tenantId: request.tenant!.id, queue, state, page, size })), page, size };
    },
  );

  app.post(
    '/api/jobs/:id/retry',
    {
      config: { access: { auth: 'user', admin: true }, problems: ['NOT_FOUND', 'CONFLICT'] },
      schema: {
        operationId: 'jobsRetryJob',
        tags: ['Jobs'],
        summary: 'Run a failed job of the tenant again, from its first try (administrators)',
        security: [{ bearerAuth: [] }],
        params: Type.Object({ id: Type.String({ format: 'uuid' }) }, { additionalProperties: false }),
        response: { 202: success(Type.Ref('Job'), 'The job, queued to run again') },
      },
    },
    async (request, reply) => {
      const { id } = request.params as { id: string };
      const tenant = request.tenant!;
      const em = kernel.dbs.get(tenant.connectionKey).em.fork();
      const one = async () => (await listJobs(em, schema, { id, tenantId: tenant.id, page: 1, size: 1 })).items[0];
      const job = await one();
      if (!job) throw httpError('NOT_FOUND', `job ${id} does not exist`);
      if (job.state !== 'failed') throw httpError('CONFLICT', `job ${id} is ${job.state}: only a failed job is retried`);
      await kernel.queues.boss(tenant.connectionKey).retry(job.queue, id);
      // a retry sends no NOTIFY: this process's workers look now, other processes' within their next scan
      kernel.queues.wakeUps.wake(tenant.connectionKey, job.queue);
      return reply.code(202).send(await one());
    },
  );

  app.get(
    '/api/platform/jobs',
    {
      config: { access: { auth: 'platform', admin: true } },
      schema: {
        operationId: 'platformListJobs',
        tags: ['Platform'],
        summary: "Every tenant's jobs on one database, newest first (platform operators)",
        security: [{ bearerAuth: [] }],
        querystring: jobQuery({
          tenant: Type.Optional(Type.String({ maxLength: 40 })),
          database: Type.Optional(Type.String({ pattern: '^[a-z0-9_]{1,40}$', description: 'connection key (default main)' })),
        }),
        response: { 200: success(Type.Ref('JobPage'), 'A page of jobs') },
      },
    },
    async (request) => {
      const { page = 1, size = 50, queue, state, tenant, database = 'main' } = request.query as JobQuery;
      if (!kernel.dbs.orms.has(database)) throw httpError('VALIDATION_FAILED', `no database connection "${database}"`, { errors: [{ path: '/database', message: 'is not a configured connection' }] });
      const em = kernel.dbs.get(database).em.fork();
      return { ...(await listJobs(em, schema, { tenantId: tenant, queue, state, page, size })), page, size };
    },
  );

  app.get(
    '/api/platform/queues',
    {
      config: { access: { auth: 'platform', admin: true } },
      schema: {
        operationId: 'platformListQueues',
        tags: ['Platform'],
        summary: 'The job queues of every database with their counts (platform operators)',
        security: [{ bearerAuth: [] }],
        response: { 200: success(Type.Array(Type.Ref('JobQueue')), 'Every queue with its counts') },
      },
    },
    async () => {
      const out = [];
      for (const database of kernel.queues.keys) {
        for (const q of await kernel.queues.boss(database).getQueues()) {
          out.push({ name: q.name, database, queued: q.queuedCount, active: q.activeCount, deferred: q.deferredCount, failed: q.failedCount, total: q.totalCount });
        }
      }
      return out;
    },
  );
}
