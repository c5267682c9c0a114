// Liveness (the process can serve) and readiness (every database answers),
// both bounded in time: an orchestrator's probe never hangs (core/db/health.ts).
// Readiness also says how far the background migration of tenants is.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Kernel } from '../kernel.ts';
import { httpError } from '../errors.ts';
import { RETRY_AFTER_SECONDS } from '../db/failures.ts';
import { unreadyDatabases, wedgedPools } from '../db/health.ts';
import { success } from './headers.ts';
import type { ErrorCode } from '../errors.ts';

const Migrating = Type.Object(
  {
    total: Type.Integer(),
    done: Type.Integer({ description: 'migrated or failed' }),
    failed: Type.Integer(),
    remaining: Type.Integer(),
    rate: Type.Number({ description: 'tenants per second' }),
    etaSeconds: Type.Union([Type.Integer(), Type.Null()], { description: 'estimated time left; null before the first tenant is done' }),
  },
  {
    additionalProperties: false,
    description: 'present while this process migrates outdated tenants in the background after its start: the current ones are served, the others answer 503 TENANT_MIGRATING',
  },
);
const Health = Type.Object({ status: Type.Literal('ok'), migrating: Type.Optional(Migrating) }, { $id: 'Health', additionalProperties: false });
const retry = { headers: { 'retry-after': String(RETRY_AFTER_SECONDS) } };

export function registerHealthRoutes(app: FastifyInstance, kernel: Kernel): void {
  app.addSchema(Health);
  const route = (operationId: string, summary: string, problems: ErrorCode[]) => ({
    config: { access: { auth: 'public' as const }, rateLimit: false as const, problems },
    schema: {
      operationId,
      tags: ['Health'],
      summary,
      security: [],
      // declared empty so an unknown parameter is a 400, as on every other route
      querystring: Type.Object({}, { additionalProperties: false }),
      response: { 200: success(Type.Ref('Health'), 'Healthy') },
    },
  });
  app.get('/health/live', route('healthCheckLiveness', 'The process can serve: its connection pools work, or the database itself is down', []), async () => {
    const wedged = await wedgedPools(kernel.dbs, kernel.config.databases);
    if (wedged.length) throw httpError('SERVICE_UNAVAILABLE', `the connection pool of ${wedged.join(', ')} serves no connection while the database answers: restart the process`);
    return { status: 'ok' as const };
  });
  app.get('/health/ready', route('healthCheckReadiness', 'Every database answers in time (and how far the migration of outdated tenants is, while one runs)', ['DATABASE_UNAVAILABLE']), async () => {
    const down = await unreadyDatabases(kernel.dbs);
    if (down.length) throw httpError('DATABASE_UNAVAILABLE', `no answer in time from ${down.join(', ')}`, retry);
    // still ready: the tenants already current are served meanwhile
    const p = kernel.migrations.progress();
    if (!p) return { status: 'ok' as const };
    const migrating = { total: p.total, done: p.done, failed: p.failed, remaining: p.remaining, rate: Math.round(p.rate * 100) / 100, etaSeconds: p.etaMs === null ? null : Math.ceil(p.etaMs / 1000) };
    return { status: 'ok' as const, migrating };
  });
}
