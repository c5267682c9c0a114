// What a module's plugins/<module>/index.ts may export: handlers for the
// custom routes its manifest names, and write hooks by entity name (its own
// entities or another module's). Both receive a ModuleContext.
//
// A handler declares its route's schemas in TypeBox beside its code, so the
// request it receives is typed from them (no `request.body as …`), and the
// kernel validates, documents and serialises the route from the same schemas.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Static, TSchema } from 'typebox';
import type { ModuleContext } from './module-context.ts';
import type { EntityHooks } from './hooks.ts';
import type { Authenticator } from './authenticators.ts';

/** A custom route's schemas; `response` by status code ($ref to an entity's schema by id, e.g. Type.Ref('CrmLead')). */
export interface RouteSchemas {
  params?: TSchema;
  querystring?: TSchema;
  body?: TSchema;
  response?: Record<number, TSchema>;
}

type Part<S extends RouteSchemas, K extends 'params' | 'querystring' | 'body'> = S[K] extends TSchema ? Static<S[K]> : unknown;

/** The request as the route's schemas type it. */
export type TypedRequest<S extends RouteSchemas> = FastifyRequest<{ Params: Part<S, 'params'>; Querystring: Part<S, 'querystring'>; Body: Part<S, 'body'> }>;

export interface PluginHandler<S extends RouteSchemas = RouteSchemas> {
  schema: S;
  handle(ctx: ModuleContext, request: TypedRequest<S>, reply: FastifyReply): Promise<unknown>;
}

/** A custom route's handler: `handler({ params, body, response }, async (ctx, request, reply) => …)`. */
export function handler<S extends RouteSchemas>(schema: S, handle: (ctx: ModuleContext, request: TypedRequest<S>, reply: FastifyReply) => Promise<unknown>): PluginHandler<S> {
  return { schema, handle };
}

export interface PluginModule {
  // each handler has its own schemas
  handlers?: Record<string, PluginHandler<any>>;
  hooks?: Record<string, EntityHooks>;
  /** by name; a custom route accepts one with `"auth": "<name>"` */
  authenticators?: Record<string, Authenticator>;
}
