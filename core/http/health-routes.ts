// Liveness (the process can serve) and readiness (every database answers),
// both bounded in time: an orchestrator's probe never hangs (core/db/health.ts).
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Kernel } from '../kernel.ts';
import { httpError } from '../errors.ts';
import { RETRY_AFTER_SECONDS } from '../db/failures.ts';
import { unreadyDatabases, wedgedPools } from '../db/health.ts';
import { success } from './headers.ts';
import type { ErrorCode } from '../errors.ts';

const Health = Type.Object({ status: Type.Literal('ok') }, { $id: 'Health', additionalProperties: false });
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
  app.get('/health/ready', route('healthCheckReadiness', 'Every database answers in time', ['DATABASE_UNAVAILABLE']), async () => {
    const down = await unreadyDatabases(kernel.dbs);
    if (down.length) throw httpError('DATABASE_UNAVAILABLE', `no answer in time from ${down.join(', ')}`, retry);
    return { status: 'ok' as const };
  });
}
