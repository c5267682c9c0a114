// The HTTP application: infrastructure first (validation, problems, OpenAPI,
// rate limit, the request pipeline), then kernel routes, then each module's
// routes in dependency order.
import Fastify, { LogController, type FastifyInstance } from 'fastify';
import rateLimit from '@fastify/rate-limit';
import type { Kernel } from './kernel.ts';
import { TokenService } from './auth/tokens.ts';
import type { AbilityFactory } from './access/abilities.ts';
import { installValidators } from './http/validation.ts';
import { cachedSerializerFactory } from './http/serializers.ts';
import { installProblemHandling, ProblemSchema, frameworkErrors } from './http/problem.ts';
import { clientErrorHandler, installRefusals } from './http/framework-errors.ts';
import { installInputGuard } from './http/input-guard.ts';
import { installMultipart } from './http/multipart.ts';
import { installOpenApi } from './http/openapi.ts';
import { installSecurityHeaders, withSecurityHeaders } from './http/security-headers.ts';
import { installRequestIdHeader, requestIdOf, withRequestId } from './http/request-id.ts';
import { installCors } from './http/cors.ts';
import { installRequestContext } from './http/request-context.ts';
import { registerAuthRoutes } from './http/auth-routes.ts';
import { registerJobRoutes } from './http/job-routes.ts';
import { registerPlatformRoutes } from './http/platform-routes.ts';
import { registerDatabaseSizeRoutes } from './http/database-size-routes.ts';
import { registerDatabasePoolRoutes } from './http/database-pool-routes.ts';
import { registerHealthRoutes } from './http/health-routes.ts';
import { registerMetaRoutes } from './http/meta-routes.ts';
import { registerTranslationRoutes } from './http/translation-routes.ts';
import { InterfaceTexts } from './http/interface-texts.ts';
import { entitySchemas, namedSchemas, registerModuleRoutes } from './http/module-routes.ts';
import { httpError } from './errors.ts';
import { installConsole } from './console/index.ts';
import { loggerOptions, installRequestLog } from './logging.ts';

export interface AppOptions {
  logger?: boolean | Record<string, unknown>;
}

declare module 'fastify' {
  interface FastifyInstance {
    kernel: Kernel;
    abilities: AbilityFactory;
    tokens: TokenService;
  }
}

export async function buildApp(kernel: Kernel, opts: AppOptions = {}): Promise<FastifyInstance> {
  const { config } = kernel;
  const app = Fastify({
    logger: opts.logger === false ? false : loggerOptions(config.logLevel, opts.logger),
    // one line per request, written by installRequestLog once tenant and user are known
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: config.bodyLimit,
    // not requestIdHeader: Fastify would take the header as is, unchecked (see http/request-id.ts)
    requestIdHeader: false,
    genReqId: requestIdOf,
    // refusals before any route, as problem details: see http/framework-errors.ts
    return503OnClosing: false,
    http: { requireHostHeader: false },
    trustProxy: config.trustProxy,
    clientErrorHandler,
    schemaController: { compilersFactory: { buildSerializer: cachedSerializerFactory as never } },
    // router errors (bad URL encoding, over-long params) as problem details too
    frameworkErrors: withRequestId(withSecurityHeaders(frameworkErrors)),
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 200 },
  });
  const tokens = new TokenService(config.jwtSecret, config.accessTokenTtlSeconds, config.refreshTokenTtlSeconds);
  const abilities = kernel.abilities;
  app.decorate('kernel', kernel);
  app.decorate('abilities', abilities);
  app.decorate('tokens', tokens);
  installRequestIdHeader(app);
  installSecurityHeaders(app);

  // by $id once: a module routing another module's entity (AI's tasks) needs the same schemas as its owner;
  // the manifests' named schemas too, which entity schemas and handlers' schemas refer to by name
  const shared = [ProblemSchema, ...kernel.modules.flatMap(namedSchemas), ...new Map(kernel.modules.flatMap((m) => entitySchemas(kernel, m)).map((s) => [(s as { $id?: string }).$id, s])).values()];
  installProblemHandling(app);
  installRefusals(app);
  // preflights are answered here, before the input guard and authentication
  await installCors(app, config.corsOrigins);
  installInputGuard(app);
  // the API speaks JSON only: other bodies are 415, not parsed as text
  app.removeContentTypeParser('text/plain');
  // except uploads, on the routes that declare one (a handler's `upload` schema)
  await installMultipart(app, config);
  for (const s of shared.slice(1)) app.addSchema(s);
  installRequestLog(app);
  await installOpenApi(app, kernel);
  await app.register(rateLimit, {
    global: true,
    hook: 'preHandler',
    max: config.rateLimit.max,
    timeWindow: config.rateLimit.windowMs,
    // counted together with every other process on the database (PGlite: this process alone)
    ...(kernel.rateLimits ? { store: kernel.rateLimits.Store } : {}),
    keyGenerator: (request) => (request.principal && request.tenant ? `${request.tenant.id}:${request.principal.id}` : request.ip),
    errorResponseBuilder: (_request, ctx) => httpError('RATE_LIMITED', `limit of ${ctx.max} requests per ${ctx.after} reached`),
  });
  installRequestContext(app, kernel, tokens, abilities);
  registerHealthRoutes(app, kernel);
  registerAuthRoutes(app, kernel, tokens, abilities);
  registerDatabaseSizeRoutes(app, kernel);
  const texts = new InterfaceTexts(kernel);
  registerMetaRoutes(app, kernel, texts);
  registerTranslationRoutes(app, kernel, texts);
  registerPlatformRoutes(app, kernel);
  registerJobRoutes(app, kernel);
  registerDatabasePoolRoutes(app, kernel);
  for (const module of kernel.modules) registerModuleRoutes(app, kernel, module);
  await installConsole(app, kernel);
  // Validators compile when the app is ready; by then every shared schema is added.
  installValidators(app, () => Object.values(app.getSchemas()) as never[]);
  return app;
}
