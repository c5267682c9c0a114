// Liveness (the process can serve) and readiness (every database answers),
// both bounded in time: an orchestrator's probe never hangs (core/db/health.ts).
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Kernel } from '../kernel.ts';
import { httpError } from '../errors.ts';
import { RETRY_AFTER_SECONDS } from '../db/failures.ts';
import { unreadyDatabases, wedgedPools } from '../db/health.ts';
import { problemResponses } from './problem.ts';

const Health = Type.Object({ status: Type.Literal('ok') }, { $id: 'Health', additionalProperties: false });
const retry = { headers: { 'retry-after': String(RETRY_AFTER_SECONDS) } };

export function registerHealthRoutes(app: FastifyInstance, kernel: Kernel): void {
  app.addSchema(Health);
  const route = (operationId: string, summary: string) => ({
    config: { access: { auth: 'public' as const }, rateLimit: false as const },
    schema: { operationId, tags: ['Health'], summary, security: [], response: { 200: Type.Ref('Health'), ...problemResponses([503]) } },
  });
  app.get('/health/live', route('healthLive', 'The process can serve: its connection pools work, or the database itself is down'), async () => {
    const wedged = await wedgedPools(kernel.dbs, kernel.config.databases);
    if (wedged.length) throw httpError('SERVICE_UNAVAILABLE', `the connection pool of ${wedged.join(', ')} serves no connection while the database answers: restart the process`);
    return { status: 'ok' as const };
  });
  app.get('/health/ready', route('healthReady', 'Every database answers in time'), async () => {
    const down = await unreadyDatabases(kernel.dbs);
    if (down.length) throw httpError('DATABASE_UNAVAILABLE', `no answer in time from ${down.join(', ')}`, retry);
    return { status: 'ok' as const };
  });
}
