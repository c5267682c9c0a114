// OpenAPI 3.1 from the route schemas. Shared schemas carry an $id, which
// becomes the component name (CatalogProduct, never def-0).
import type { FastifyInstance, RouteOptions } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { Kernel } from '../kernel.ts';
import { problemResponses } from './problem.ts';
import { webhookDocs } from './webhook-docs.ts';

type RouteSchema = Record<string, unknown> & { response?: Record<string, unknown>; security?: unknown; hide?: boolean };

/** Problems the kernel answers before any handler runs, so every route that can reach them documents them. */
function kernelProblems(schema: RouteSchema): number[] {
  if (schema.body) return [400, 413, 415];
  return schema.querystring || schema.params || schema.headers ? [400] : [];
}

/**
 * Completes each route's schema from what the kernel guarantees, so no route
 * can forget it: the body parser's 400/413/415, the validators' 400, and the
 * security its access config implies (an explicit [] for public routes).
 */
function completeRouteSchema(route: RouteOptions): void {
  const schema = route.schema as RouteSchema | undefined;
  if (!schema || schema.hide) return;
  const declared = schema.response ?? {};
  const missing = kernelProblems(schema).filter((s) => !(s in declared) && !('4xx' in declared || '4XX' in declared));
  const access = route.config?.access;
  const security = schema.security ?? (access ? (access.auth === 'public' ? [] : [{ [access.authenticator ?? 'bearerAuth']: [] }]) : undefined);
  if (!missing.length && security === schema.security) return;
  route.schema = { ...schema, ...(security ? { security } : {}), response: { ...declared, ...problemResponses(missing) } } as RouteOptions['schema'];
}

export async function installOpenApi(app: FastifyInstance, kernel: Kernel): Promise<void> {
  app.addHook('onRoute', completeRouteSchema);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Plinth API',
        version: '0.1.0',
        description:
          'Multi-tenant business platform. Log in with POST /api/auth/login, then send Authorization: Bearer <accessToken>. ' +
          'Company data is scoped to X-Company-Id (default: your primary company). Errors are RFC 9457 problem details.',
        license: { name: 'UNLICENSED', identifier: 'UNLICENSED' },
      },
      servers: [{ url: '/', description: 'this server' }],
      tags: [
        { name: 'Auth', description: 'Tokens and the caller' },
        { name: 'Platform', description: 'Tenant administration (platform operators)' },
        { name: 'Health', description: 'Liveness and readiness' },
        { name: 'Jobs', description: 'Background work: webhook deliveries, subscriber runs, module jobs' },
        ...kernel.modules.filter((m) => m.manifest.routes?.length).map((m) => ({ name: m.manifest.name, description: m.manifest.description ?? m.manifest.name })),
      ],
      components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' }, ...Object.fromEntries([...kernel.authenticators].map(([name, a]) => [name, a.scheme])) } },
      security: [{ bearerAuth: [] }],
      // @fastify/swagger passes it through; its types do not know the 3.1 field
      ...({ webhooks: webhookDocs(kernel, new Set(Object.keys(app.getSchemas()))) } as object),
    },
    refResolver: { buildLocalReference: (json, _base, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `Schema${i}`) },
  });
  await app.register(swaggerUi, { routePrefix: '/api-docs', uiConfig: { deepLinking: true, persistAuthorization: true } });
}
