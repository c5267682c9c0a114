// OpenAPI 3.1 from the route schemas. Shared schemas carry an $id, which
// becomes the component name (CatalogProduct, never def-0).
import type { FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { Kernel } from '../kernel.ts';

export async function installOpenApi(app: FastifyInstance, kernel: Kernel): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Plinth API', version: '0.1.0',
        description: 'Multi-tenant business platform. Log in with POST /api/auth/login, then send Authorization: Bearer <accessToken>. '
          + 'Company data is scoped to X-Company-Id (default: your primary company). Errors are RFC 9457 problem details.',
        license: { name: 'UNLICENSED', identifier: 'UNLICENSED' },
      },
      servers: [{ url: '/', description: 'this server' }],
      tags: [
        { name: 'Auth', description: 'Tokens and the caller' },
        { name: 'Platform', description: 'Tenant administration (platform operators)' },
        { name: 'Health', description: 'Liveness and readiness' },
        ...kernel.modules.filter((m) => m.manifest.routes?.length).map((m) => ({ name: m.manifest.name, description: m.manifest.description ?? m.manifest.name })),
      ],
      components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } } },
      security: [{ bearerAuth: [] }],
    },
    refResolver: { buildLocalReference: (json, _base, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `Schema${i}`) },
  });
  await app.register(swaggerUi, { routePrefix: '/api-docs', uiConfig: { deepLinking: true, persistAuthorization: true } });
}
