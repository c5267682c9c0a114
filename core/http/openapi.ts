// OpenAPI 3.1 from the route schemas. Shared schemas carry an $id, which
// becomes the component name (CatalogProduct, never def-0).
import type { FastifyInstance, RouteOptions } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { Kernel } from '../kernel.ts';
import { problemResponses } from './problem.ts';
import { routeProblems } from './route-problems.ts';
import { COMPANY_HEADER } from './headers.ts';
import { webhookDocs } from './webhook-docs.ts';

type RouteSchema = Record<string, unknown> & { response?: Record<string, unknown>; security?: unknown; hide?: boolean; headers?: { properties?: Record<string, unknown> } };

/** Every authenticated route reads X-Company-Id (request-context.ts), so each documents it. */
function withCompanyHeader(headers: RouteSchema['headers']) {
  if (headers?.properties?.['x-company-id']) return headers;
  return { type: 'object', ...headers, properties: { ...headers?.properties, 'x-company-id': COMPANY_HEADER } };
}

/**
 * Completes each route's schema from what the kernel guarantees, so no route
 * can forget it: the problems it can answer (routeProblems), the security
 * its access config implies (an explicit [] for public routes), and the
 * X-Company-Id header of authenticated routes.
 */
function completeRouteSchema(route: RouteOptions): void {
  const schema = route.schema as RouteSchema | undefined;
  const access = route.config?.access;
  if (!schema || schema.hide || !access) return;
  const security = schema.security ?? (access.auth === 'public' ? [] : [{ [access.authenticator ?? 'bearerAuth']: [] }]);
  route.schema = {
    ...schema,
    security,
    ...(access.auth === 'public' ? {} : { headers: withCompanyHeader(schema.headers) }),
    response: { ...schema.response, ...problemResponses(routeProblems(route)) },
  } as RouteOptions['schema'];
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
          'Multi-tenant business platform. Log in with `POST /api/auth/login`, then send `Authorization: Bearer <accessToken>`. ' +
          'Company data is scoped to `X-Company-Id` (default: your primary company). Errors are RFC 9457 problem details (`application/problem+json`) with a stable `code`.',
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
