// Rules a module runs around the writes of an entity, its own or another
// module's, declared as `hooks: { Entity: EntityHooks }` in its plugin. They
// run for every write of the entity: generated routes and module code alike.
import type { WriteEvent, BeforeWriteEvent } from '../crud/crud-service.ts';
import type { ModuleContext } from './module-context.ts';
import type { ErrorCode } from '../errors.ts';

export type { WriteEvent, BeforeWriteEvent };

/**
 * One set of rules around an entity's writes, declared by entity name in a module's `hooks`
 * (a list of sets runs each in turn). Each hook gets the writer's context, so what it reads
 * and writes is scoped like the write itself; a coded error (httpError, validationError) refuses the write.
 */
export interface EntityHooks {
  /**
   * Problem codes the hooks' refusals answer beyond the kernel's own, per
   * write (e.g. { update: ['INVALID_TRANSITION'] } for a flow the module
   * checks): the entity's generated write routes document them in OpenAPI.
   */
  problems?: Partial<Record<'create' | 'update' | 'delete', ErrorCode[]>>;
  /**
   * Inside the write's transaction, once the old row is locked (`before`;
   * null on create) and before the input is checked: may return a changed
   * input (normalised), or throw a coded error to refuse the write.
   */
  beforeWrite?(ctx: ModuleContext, event: BeforeWriteEvent): Promise<Record<string, unknown> | void>;
  /**
   * Inside the write's transaction, after its statements (queries through
   * `ctx` see the new row): for rules that must hold under concurrency.
   * Throwing rolls the write back.
   */
  afterWrite?(ctx: ModuleContext, event: WriteEvent): Promise<void>;
  /** Once the write committed: side effects (sessions ended, caches dropped). Not run when it rolls back. */
  afterCommit?(ctx: ModuleContext, event: WriteEvent): Promise<void>;
}
