// What a module's plugins/<module>/index.ts may export: handlers for the
// custom routes its manifest names, and write hooks by entity name (its own
// entities or another module's). Both receive a ModuleContext.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ModuleContext } from './module-context.ts';
import type { EntityHooks } from './hooks.ts';

export type PluginHandler = (ctx: ModuleContext, request: FastifyRequest, reply: FastifyReply) => Promise<unknown>;

export interface PluginModule {
  handlers?: Record<string, PluginHandler>;
  hooks?: Record<string, EntityHooks>;
}
