// Liveness (the process answers) and readiness (every database answers).
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Kernel } from '../kernel.ts';
import { httpError } from '../errors.ts';
import { problemResponses } from './problem.ts';

const Health = Type.Object({ status: Type.Literal('ok') }, { $id: 'Health', additionalProperties: false });

export function registerHealthRoutes(app: FastifyInstance, kernel: Kernel): void {
  app.addSchema(Health);
  const schema = (operationId: string, summary: string) => ({ operationId, tags: ['Health'], summary, security: [], response: { 200: Type.Ref('Health'), ...problemResponses([503]) } });
  app.get('/health/live', { config: { access: { auth: 'public' }, rateLimit: false }, schema: schema('healthLive', 'The process is up') }, async () => ({ status: 'ok' as const }));
  app.get('/health/ready', { config: { access: { auth: 'public' }, rateLimit: false }, schema: schema('healthReady', 'Every database connection answers') }, async () => {
    try {
      for (const orm of kernel.dbs.orms.values()) await orm.em.getConnection().execute('select 1');
    } catch {
      throw httpError('SERVICE_UNAVAILABLE', 'a database does not answer');
    }
    return { status: 'ok' as const };
  });
}
