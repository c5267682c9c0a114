// Tenant administration for platform operators (users of the reserved
// "platform" tenant). Provisioning is idempotent: 201 when created, 200 when
// the tenant already existed.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Kernel } from '../kernel.ts';
import { isTimeZone, provisionTenant, type ProvisionInput } from '../tenancy/provision.ts';
import { TENANT_ID_PATTERN, PLATFORM_TENANT, type Tenant } from '../tenancy/registry.ts';
import { httpError } from '../errors.ts';
import { migrateTenant, migrationErrorOf } from '../tenancy/migrate-tenants.ts';
import { success } from './headers.ts';

const TenantSchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    connectionKey: Type.String(),
    schema: Type.String(),
    status: Type.Unsafe<string>({ type: 'string', enum: ['active', 'suspended'] }),
    defaultLanguage: Type.String(),
    timeZone: Type.String({ description: "IANA time zone of the tenant's scheduled work" }),
    migrationError: Type.Union(
      [
        Type.Object(
          {
            code: Type.String({ description: 'DESTRUCTIVE_MIGRATION (the change would lose data) or MIGRATION_FAILED (its data does not allow it)' }),
            message: Type.String(),
            statements: Type.Array(Type.String(), { description: 'the statements refused, or the one that failed' }),
            at: Type.String({ format: 'date-time' }),
          },
          { additionalProperties: false },
        ),
        Type.Null(),
      ],
      { description: 'why its schema could not be migrated to the loaded modules (it answers 503 TENANT_MIGRATION_FAILED until a migration succeeds); null when it is current' },
    ),
    createdAt: Type.String({ format: 'date-time' }),
  },
  { $id: 'PlatformTenant', additionalProperties: false },
);

const TenantList = Type.Object(
  {
    items: Type.Array(Type.Ref('PlatformTenant')),
    page: Type.Integer(),
    size: Type.Integer(),
    total: Type.Integer(),
  },
  { $id: 'PlatformTenantList', additionalProperties: false },
);

const TenantCreate = Type.Object(
  {
    id: Type.String({ pattern: TENANT_ID_PATTERN, description: 'lower-case slug; names the schema `tenant_<id>`' }),
    name: Type.String({ minLength: 1, maxLength: 200 }),
    connectionKey: Type.Optional(Type.String({ pattern: '^[a-z0-9_]{1,40}$', description: 'database connection (default main)' })),
    defaultLanguage: Type.Optional(Type.String({ pattern: '^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$' })),
    timeZone: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'IANA time zone (default UTC): scheduled jobs run on its clock', examples: ['Europe/Berlin'] })),
    company: Type.Object({ code: Type.String({ minLength: 1, maxLength: 40 }), name: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false }),
    admin: Type.Object(
      {
        email: Type.String({ format: 'email', maxLength: 254 }),
        name: Type.String({ minLength: 1, maxLength: 200 }),
        password: Type.String({ minLength: 8, maxLength: 1024 }),
      },
      { additionalProperties: false },
    ),
  },
  { $id: 'PlatformTenantCreate', additionalProperties: false },
);

const present = (t: Tenant) => ({
  id: t.id,
  name: t.name,
  connectionKey: t.connectionKey,
  schema: t.schema,
  status: t.status,
  defaultLanguage: t.defaultLanguage,
  timeZone: t.timeZone,
  migrationError: t.migrationError ?? null,
  createdAt: t.createdAt,
});

export function registerPlatformRoutes(app: FastifyInstance, kernel: Kernel): void {
  for (const s of [TenantSchema, TenantList, TenantCreate]) app.addSchema(s);
  const tags = ['Platform'];
  const access = { auth: 'platform' as const, admin: true };
  const IdParams = Type.Object({ id: Type.String({ pattern: TENANT_ID_PATTERN }) }, { additionalProperties: false });

  app.post(
    '/api/platform/tenants',
    {
      config: { access, problems: ['CONFLICT'] },
      schema: {
        operationId: 'platformCreateTenant',
        tags,
        summary: 'Provision a tenant: schema, tables, built-in roles, first company and admin (idempotent)',
        security: [{ bearerAuth: [] }],
        body: Type.Ref('PlatformTenantCreate'),
        response: {
          200: success(Type.Ref('PlatformTenant'), 'The tenant already existed: nothing changed', ['Location']),
          201: success(Type.Ref('PlatformTenant'), 'The tenant provisioned', ['Location']),
        },
      },
    },
    async (request, reply) => {
      const body = request.body as ProvisionInput;
      if (body.id === PLATFORM_TENANT) throw httpError('CONFLICT', 'the platform tenant is reserved');
      if (body.connectionKey && !kernel.dbs.orms.has(body.connectionKey)) {
        throw httpError('VALIDATION_FAILED', `no database connection "${body.connectionKey}"`, { errors: [{ path: '/connectionKey', message: 'is not a configured connection' }] });
      }
      if (body.timeZone !== undefined && !isTimeZone(body.timeZone)) {
        throw httpError('VALIDATION_FAILED', `"${body.timeZone}" is no IANA time zone`, { errors: [{ path: '/timeZone', message: 'is no IANA time zone (e.g. Europe/Berlin)' }] });
      }
      const result = await provisionTenant(kernel, body);
      reply.header('location', `/api/platform/tenants/${result.tenant.id}`);
      return reply.code(result.created ? 201 : 200).send(present(result.tenant));
    },
  );

  app.get(
    '/api/platform/tenants',
    {
      config: { access },
      schema: {
        operationId: 'platformListTenants',
        tags,
        summary: 'List tenants',
        security: [{ bearerAuth: [] }],
        querystring: Type.Object(
          { page: Type.Optional(Type.Integer({ minimum: 1, default: 1 })), size: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 50 })) },
          { additionalProperties: false },
        ),
        response: { 200: success(Type.Ref('PlatformTenantList'), 'A page of tenants') },
      },
    },
    async (request) => {
      const { page = 1, size = 50 } = request.query as { page?: number; size?: number };
      await kernel.tenants.reload();
      const all = kernel.tenants.list();
      return { items: all.slice((page - 1) * size, page * size).map(present), page, size, total: all.length };
    },
  );

  app.get(
    '/api/platform/tenants/:id',
    {
      config: { access, problems: ['NOT_FOUND'] },
      schema: {
        operationId: 'platformGetTenant',
        tags,
        summary: 'Read one tenant',
        security: [{ bearerAuth: [] }],
        params: IdParams,
        response: { 200: success(Type.Ref('PlatformTenant'), 'The tenant') },
      },
    },
    async (request) => {
      const t = await kernel.tenants.find((request.params as { id: string }).id);
      if (!t) throw httpError('NOT_FOUND', 'no such tenant');
      return present(t);
    },
  );

  // Suspending takes effect at once: every request checks the tenant's status
  // (other processes drop their cached copy on NOTIFY), so its tokens stop working.
  for (const [verb, status] of [
    ['suspend', 'suspended'],
    ['resume', 'active'],
  ] as const) {
    app.post(
      `/api/platform/tenants/:id/${verb}`,
      {
        config: { access, problems: ['NOT_FOUND', 'CONFLICT'] },
        schema: {
          operationId: `platform${verb[0].toUpperCase()}${verb.slice(1)}Tenant`,
          tags,
          summary: verb === 'suspend' ? 'Suspend a tenant: its users are refused at once (403 TENANT_UNAVAILABLE); idempotent' : 'Resume a suspended tenant; idempotent',
          security: [{ bearerAuth: [] }],
          params: IdParams,
          response: { 200: success(Type.Ref('PlatformTenant'), `The tenant, ${status}`) },
        },
      },
      async (request) => {
        const { id } = request.params as { id: string };
        if (id === PLATFORM_TENANT) throw httpError('CONFLICT', 'the platform tenant cannot be suspended or resumed');
        const t = await kernel.tenants.find(id);
        if (!t) throw httpError('NOT_FOUND', 'no such tenant');
        await kernel.tenants.setStatus(id, status);
        return present({ ...t, status });
      },
    );
  }

  app.post(
    '/api/platform/tenants/:id/migrate',
    {
      config: { access, problems: ['NOT_FOUND', 'CONFLICT'] },
      schema: {
        operationId: 'platformMigrateTenant',
        tags,
        summary: "Migrate a tenant's schema to the loaded modules now (after its migration failed and its data or the modules were fixed)",
        description: 'On success the migration error is cleared and the tenant answers again; when it fails again, 409 says why and the tenant keeps the new reason.',
        security: [{ bearerAuth: [] }],
        params: IdParams,
        response: { 200: success(Type.Ref('PlatformTenant'), 'The tenant, current') },
      },
    },
    async (request) => {
      const { id } = request.params as { id: string };
      const t = await kernel.tenants.find(id);
      if (!t) throw httpError('NOT_FOUND', 'no such tenant');
      try {
        await migrateTenant(kernel, t);
      } catch (err) {
        const failure = migrationErrorOf(err);
        if (failure) throw httpError('CONFLICT', failure.message);
        throw err;
      }
      return present((await kernel.tenants.find(id))!);
    },
  );
}
