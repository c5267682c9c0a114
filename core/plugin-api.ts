// What a module's plugins/<module>/index.ts may export. Handlers get the
// request with the kernel's context already resolved (request.em is forked
// for the tenant, request.ability checked the route's access), so a plugin
// never opens its own EntityManager or checks roles by hand.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Kernel } from './kernel.ts';

export type PluginHandler = (request: FastifyRequest, reply: FastifyReply, kernel: Kernel) => Promise<unknown>;

export interface PluginModule {
  handlers?: Record<string, PluginHandler>;
}
