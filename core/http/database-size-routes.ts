// GET /api/auth/db: how much room data takes, for the dashboard's size card.
// A tenant's user sees their own schema split by table (nothing of other
// tenants, not even the database total); a platform operator sees the whole
// main database split by schema. Catalog functions over one schema's dozen
// tables: cheap enough for every dashboard load. Table names and sizes tell
// what a tenant holds and how much: the dashboard's permission is needed.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Kernel } from '../kernel.ts';
import { ADMIN_ROLE } from '../access/role-directory.ts';
import { PLATFORM_TENANT } from '../tenancy/registry.ts';
import { success } from './headers.ts';
import { SCHEMAS_SQL, tableSizes } from '../data/table-sizes.ts';

/** The seed's dashboard permission (core:dashboard:view) grants this; the size card is part of the dashboard. */
const DASHBOARD = { action: 'view', subject: 'Dashboard' };

const Size = Type.Integer({ minimum: 0, description: 'bytes, indexes and TOAST included' });

const DatabaseSize = Type.Object(
  {
    scope: Type.Unsafe<string>({ type: 'string', enum: ['tenant', 'database'], description: "tenant: the caller's schema; database: every schema (platform operators)" }),
    totalBytes: Size,
    schemas: Type.Array(
      Type.Object(
        {
          name: Type.String(),
          tenant: Type.Union([Type.String(), Type.Null()], { description: 'the tenant living in this schema, if any' }),
          bytes: Size,
          tables: Type.Optional(Type.Array(Type.Object({ name: Type.String(), bytes: Size }, { additionalProperties: false }), { description: 'tenant scope: largest first' })),
        },
        { additionalProperties: false },
      ),
      { description: 'largest first' },
    ),
  },
  { $id: 'AuthDatabaseSize', additionalProperties: false },
);

type Row = { name: string; bytes: string | number };

export function registerDatabaseSizeRoutes(app: FastifyInstance, kernel: Kernel): void {
  app.addSchema(DatabaseSize);
  app.get(
    '/api/auth/db',
    {
      config: { access: { auth: 'user', can: DASHBOARD } },
      schema: {
        operationId: 'authGetDatabaseSize',
        tags: ['Auth'],
        summary: "Size of the caller's tenant schema by table; for a platform operator, of the whole database by schema",
        description: 'Needs core:dashboard:view.',
        security: [{ bearerAuth: [] }],
        querystring: Type.Object({}, { additionalProperties: false }),
        response: { 200: success(Type.Ref('AuthDatabaseSize'), 'Sizes in bytes, largest first') },
      },
    },
    async (request) => {
      const tenant = request.tenant!;
      const conn = request.em!.getConnection();
      if (tenant.id === PLATFORM_TENANT && request.principal!.roles.includes(ADMIN_ROLE)) {
        const [rows, [db]] = await Promise.all([
          conn.execute(SCHEMAS_SQL) as Promise<Row[]>,
          conn.execute('select pg_database_size(current_database())::bigint as "bytes"') as Promise<{ bytes: string | number }[]>,
        ]);
        const bySchema = new Map(kernel.tenants.list().map((t) => [t.schema, t.id]));
        return {
          scope: 'database',
          totalBytes: Number(db.bytes),
          schemas: rows.map((r) => ({ name: r.name, tenant: bySchema.get(r.name) ?? null, bytes: Number(r.bytes) })),
        };
      }
      const tables = await tableSizes(request.em!, tenant.schema);
      const bytes = tables.reduce((sum, t) => sum + t.bytes, 0);
      return { scope: 'tenant', totalBytes: bytes, schemas: [{ name: tenant.schema, tenant: tenant.id, bytes, tables }] };
    },
  );
}
