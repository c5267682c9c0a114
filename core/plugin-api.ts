// What a module's plugins/<module>/index.ts may export. Handlers get the
// request with the kernel's context already resolved (request.em is forked
// for the tenant, request.ability checked the route's access), so a plugin
// never opens its own EntityManager or checks roles by hand.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { EntityManager } from '@mikro-orm/core';
import type { Kernel } from './kernel.ts';

export type PluginHandler = (request: FastifyRequest, reply: FastifyReply, kernel: Kernel) => Promise<unknown>;

export type WriteOp = 'create' | 'replace' | 'update' | 'delete';

export interface WriteEvent {
  op: WriteOp;
  /** the row's id; absent before a create */
  id?: string;
  /** the validated request body; absent on delete */
  body?: Record<string, unknown>;
}

/** A write as its transaction sees it, before commit. */
export interface TransactionEvent extends WriteEvent {
  id: string;
  /** the write's transaction: its queries see the write; rows changed through it commit with it */
  em: EntityManager;
  /** the row's API-visible values before the write; null on create */
  before: Record<string, unknown> | null;
  /** the row's API-visible values after the write; null on delete */
  after: Record<string, unknown> | null;
}

/**
 * Rules of one entity the generated CRUD routes run around each write. All
 * run inside the request's context (request.em, request.ability); they throw
 * coded errors (httpError) to refuse a write.
 */
export interface EntityHooks {
  /** Before the write; may return a changed body (e.g. normalised). */
  beforeWrite?(request: FastifyRequest, event: WriteEvent, kernel: Kernel): Promise<Record<string, unknown> | void>;
  /**
   * Inside the write's transaction, once the row is locked and changed and
   * the write's statements are sent, before commit: for rules that must hold
   * under concurrency (take a lock, count rows). Throwing rolls the write back.
   */
  inTransaction?(request: FastifyRequest, event: TransactionEvent, kernel: Kernel): Promise<void>;
  /** After the write was committed. */
  afterWrite?(request: FastifyRequest, event: WriteEvent & { id: string }, kernel: Kernel): Promise<void>;
}

export interface PluginModule {
  handlers?: Record<string, PluginHandler>;
  /** by entity name, for entities this module declares */
  hooks?: Record<string, EntityHooks>;
}

// The kernel parts a handler builds on, so plugins need no deep imports.
export { CrudService, etag, checkIfMatch } from './crud/crud-service.ts';
export { crudContext } from './http/crud-routes.ts';
export { httpError } from './errors.ts';
export { hashPassword } from './auth/passwords.ts';
export { revokeUserSessions } from './auth/sessions.ts';
export { languagePreference, pick } from './i18n.ts';
export { ADMIN_ROLE } from './access/role-directory.ts';

/** After a committed write to the caller's tenant's roles or role holders: every process drops its cached role codes. */
export function rolesChanged(request: FastifyRequest): Promise<void> {
  return request.server.kernel.roleChanges.announce(request.tenant!.id);
}
