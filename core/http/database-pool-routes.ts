// GET /api/platform/database-pools: the connection pools of this process, for
// platform operators. Routing by tenant (db/lane-pool.ts) trades a little waiting
// for warm backends; these counts show how often a tenant's work left its home
// lane, how often a checkout waited, and whether waits ran into the timeout.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Kernel } from '../kernel.ts';
import { success } from './headers.ts';

const count = (description: string) => Type.Integer({ minimum: 0, description });

const DatabasePool = Type.Object(
  {
    database: Type.String({ description: 'the connection key' }),
    lanes: Type.Integer({ minimum: 1, description: 'DB_POOL_SIZE: one connection per lane' }),
    connections: count('open now'),
    idle: count('open and not in use'),
    waiting: count('callers waiting for a connection now'),
    checkouts: Type.Object(
      {
        home: count("a tenant's work on its home lane"),
        otherLane: count("a tenant's work on another lane: its home was busy (DB_LANE_WAIT_MS)"),
        unrouted: count('work of no tenant (registry, jobs), on any lane'),
      },
      { additionalProperties: false },
    ),
    waited: count('checkouts that had to wait'),
    timedOut: count('waits that ended in DB_ACQUIRE_TIMEOUT_MS (answered 503 DATABASE_UNAVAILABLE)'),
  },
  { $id: 'DatabasePool', additionalProperties: false, description: 'counts since this process started' },
);

export function registerDatabasePoolRoutes(app: FastifyInstance, kernel: Kernel): void {
  app.addSchema(DatabasePool);
  app.get(
    '/api/platform/database-pools',
    {
      config: { access: { auth: 'platform', admin: true } },
      schema: {
        operationId: 'platformListDatabasePools',
        tags: ['Platform'],
        summary: "This process's connection pools, one per PostgreSQL database, with how their lanes were used (platform operators)",
        description: 'Each Plinth process has its own pools: ask each. Empty on embedded PGlite, which has no pool.',
        security: [{ bearerAuth: [] }],
        querystring: Type.Object({}, { additionalProperties: false }),
        response: { 200: success(Type.Array(Type.Ref('DatabasePool')), 'Every pool with its counts') },
      },
    },
    async () => kernel.dbs.laneStats(),
  );
}
