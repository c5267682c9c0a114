// What module code works with: the caller's scoped data access per entity, in
// one tenant and company, with transactions, after-commit callbacks and the
// few kernel capabilities modules need. Handlers and hooks receive one; a
// request gets one from the kernel's request pipeline, jobs and scripts from
// kernel.contextFor(). It holds no Kernel, no unscoped EntityManager and no
// secret: every read and write goes through CrudService and so through the
// scope compiler. `system()` is the one, greppable, escape hatch.
import type { Analysis, AnalyzeOptions, CrudContext, ListQuery, Page, WriteOptions, Bound } from '../crud/crud-service.ts';
import type { TypedColumn } from '../crud/aggregate.ts';
import type { CrudService } from '../crud/crud-service.ts';
import type { Dto, Row } from '../crud/row-mapper.ts';
import type { AggregateQuery, AggregateRow } from '../crud/aggregate.ts';
import type { Ability } from '../access/abilities.ts';
import { httpError } from '../errors.ts';
import type { Condition } from '../data/scope.ts';
import { run } from '../data/sql.ts';
import { SYSTEM, type Principal } from '../access/principal.ts';
import { inTransaction } from '../crud/crud-service.ts';
import type { PlinthEvent } from '../data/outbox.ts';
import { matchesPattern } from '../manifest/events.ts';
import { dayIn } from '../calendar.ts';
import { tenantFiles, type FileStore, type TenantFiles } from '../files/file-store.ts';
import type { Clock } from '../clock.ts';
import type { EntityModel } from '../model/entity-model.ts';
import { describeEntities, type EntityInfo } from './model-info.ts';
import { opensFor, type MenuEntry } from './menu-access.ts';
import { ADMIN_ROLE } from '../access/role-directory.ts';
import { serverVersion, tableSizes } from '../data/table-sizes.ts';
import type { ExternalDatabases, ExternalDb, ExternalTarget } from '../db/external-db.ts';

export type { Principal };

/** Kernel capabilities a context uses, given by the kernel (the context layer imports no Kernel). */
export interface ContextServices {
  service(entity: string): CrudService;
  /** every loaded entity's model, in load order */
  models: ReadonlyMap<string, EntityModel>;
  /** every permission code; what the system principal may do */
  systemAbility: Ability;
  /** permission codes a role set holds in a tenant */
  codesOf(tenantId: string, roles: string[]): Promise<string[]>;
  /** an active user of the context's tenant as a principal with their current roles and companies, and its ability; null when there is none */
  actingAs(crud: CrudContext, userId: string): Promise<{ principal: Principal; ability: Ability } | null>;
  isKnownCode(code: string): boolean;
  /** revokes every refresh token of a user, on the context's connection (inside its transaction, if any) */
  revokeRefreshTokens(ctx: CrudContext, userId: string): Promise<void>;
  /** revokes every access token of a user issued until now, in every process (the registry's connection) */
  revokeAccessTokens(tenantId: string, userId: string): Promise<void>;
  /** after a committed role or role-holder change: every process drops cached role codes */
  rolesChanged(tenantId: string): Promise<void>;
  /** writes a declared domain event to the outbox, on the context's connection (inside its transaction, if any) */
  emit(crud: CrudContext, type: string, event: EmittedEvent): Promise<void>;
  /** sends a module job for the context's tenant and company, inside its transaction if any */
  enqueue(crud: CrudContext, job: string, data: unknown, opts: EnqueueOptions): Promise<string | null>;
  enqueueMany(crud: CrudContext, job: string, items: EnqueueItem[]): Promise<void>;
  /** an event of the context's tenant still in the outbox (kept for the configured retention) */
  readEvent(crud: CrudContext, id: string): Promise<PlinthEvent | null>;
  outbound: Outbound;
  /** every event type of the loaded modules */
  eventTypes: string[];
  /** where uploaded files are kept (config "files") */
  files: FileStore;
  /** what "now" is (config "clock") */
  clock: Clock;
  /** wakes the waiters on a tenant's topic, in every process */
  signal(tenantId: string, topic: string): Promise<void>;
  /** true once the tenant's topic is signalled within `ms`; false when the time ran out or `abort` fired */
  waitForSignal(tenantId: string, topic: string, ms: number, abort?: AbortSignal): Promise<boolean>;
  /** every loaded module's menu entries, in load order */
  menu: MenuEntry[];
  /** read-only connections to PostgreSQL databases tenants configure, under the kernel's target policy (config "externalDb") */
  externalDb: ExternalDatabases;
}

/** One of many jobs of a kind sent at once: its data, and its tries if not the job's declaration. */
export interface EnqueueItem {
  /** what the job's handler gets as `data` (JSON) */
  data: unknown;
  /** tries before the job is dead, instead of its declaration's */
  attempts?: number;
}

export interface EnqueueOptions {
  /** not before this time (or this many seconds from now) */
  startAfter?: Date | number;
  /** tries before the job is dead; default: the job's declaration */
  attempts?: number;
}

/** HTTP calls out of the runtime, under the kernel's SSRF policy, timeout and response cap (config "outbound"). */
export interface Outbound {
  /** POSTs once; `timeoutMs` shortens the kernel's timeout for this call (never lengthens it) */
  postJson(url: string, body: string, headers: Record<string, string>, opts?: { timeoutMs?: number }): Promise<{ status: number; durationMs: number; body: string; truncated: boolean }>;
  /** why the kernel would refuse to call `url`, or null */
  checkUrl(url: string): string | null;
}

/** A domain event as module code emits it; tenant, company, actor, id and time come from the context. */
export interface EmittedEvent {
  /** the row the event is about; its entity is the one the manifest declares for the event */
  entityId?: string | null;
  /** the entity the event is about; optional, and if given it must be the one the manifest declares for the event (else the emit throws) */
  entity?: string;
  /** the event's data, checked against the payload schema the manifest declares for the event type (a mismatch throws) */
  payload: Record<string, unknown>;
}

/** Scoped data access to one entity. */
export interface EntityData {
  /**
   * a page of the rows the caller may read, as the generated list route answers it (DTOs in the caller's
   * languages): `query` as that route's query string (page, size (default 50), sort, search, cursor, filters);
   * `within` narrows it to rows with these field values, e.g. { quoteId } of a nested path
   */
  list(query?: ListQuery, within?: Bound): Promise<Page>;
  /** rows meeting `where` (grant-condition syntax) within the caller's scope, at most `limit` */
  find(where?: Condition, opts?: { limit?: number; orderBy?: string }): Promise<Row[]>;
  /** how many rows meeting `where` (grant-condition syntax) the caller may read; 0 when they may read none */
  count(where?: Condition): Promise<number>;
  /**
   * Counts, sums, averages, minima and maxima over the rows the caller may
   * read, grouped by fields (dates by day, week, month, quarter or year), each
   * measure optionally filtered: one SQL statement (crud/aggregate.ts). E.g.
   * `aggregate({ groupBy: ['projectId.name', { field: 'dueDate', by: 'week' }], measures: { open: { count: true, where: { category: { $nin: ['done'] } } }, hours: { sum: 'estimate' } } })`
   * answers one row per project and week with `open` (a measure's `where` is SQL's `filter`) and `hours`.
   */
  aggregate(query: AggregateQuery): Promise<AggregateRow[]>;
  /**
   * The same aggregate for analytics: in a read-only transaction of its own
   * with a statement timeout (422 beyond it) and a row cap (`truncated`),
   * answering the columns (key, type, label) and the statement's text without
   * values. Outside ctx.transaction() only. Cached per statement and the
   * generations of the tables it reads unless `cache: false`
   * (crud/result-cache.ts). `then`: aggregate its groups again, in the same
   * statement (crud/column-aggregate.ts).
   */
  analyze(query: AggregateQuery, opts: AnalyzeOptions): Promise<Analysis>;
  /** the result columns of `query` for this caller, typed as a table `then` may read (400/403 as analyze); nothing runs */
  resultColumns(query: AggregateQuery): TypedColumn[];
  /** 404 unless the caller can read it */
  read(id: string): Promise<Row>;
  /**
   * read, and locked until the transaction ends (call inside ctx.transaction);
   * `shared`: writes of the row wait for it, other shared lockers do not (a
   * rule that depends on a parent row's state, while a change of that state waits)
   */
  lock(id: string, opts?: { shared?: boolean }): Promise<Row>;
  /**
   * Creates a row as the caller, with every check, state flow, formula, sum, audit record, event and hook of
   * the entity, and answers it as stored; `internal`: values of fields the API never writes (a password hash).
   * 403 unless the caller may create it
   */
  create(input: Record<string, unknown>, opts?: WriteOptions & { internal?: Row }): Promise<Row>;
  /**
   * Changes the fields `input` names as create does (hooks see op "update", "replace" with `replace`, whose
   * `translations` are each field's whole new map), and answers the row as stored. 404 unless the caller can read it; 412 PRECONDITION_FAILED when `ifMatch` (an ETag, etag(version)) is
   * stale; `set` writes read-only fields, `system` allows reserved states
   */
  update(id: string, input: Record<string, unknown>, opts?: WriteOptions & { ifMatch?: string; replace?: boolean }): Promise<Row>;
  /**
   * Deletes the row, with its hooks, audit record and event. 404 unless the caller can read it; 412 when `ifMatch`
   * is stale; 409 STATE_LOCKED in a locked state, CONFLICT while other rows reference it
   */
  remove(id: string, opts?: { ifMatch?: string }): Promise<void>;
  /**
   * A work queue's claim: sets `set` on the first row (by `orderBy`, default
   * oldest first) meeting `where` that the caller may read and update and no
   * concurrent transaction holds, in one statement (FOR UPDATE SKIP LOCKED);
   * null when none is free. No hooks, events or audit: for entities declaring
   * `"events": false` and none of those.
   */
  claim(where: Condition, set: Record<string, unknown>, opts?: { orderBy?: string }): Promise<Row | null>;
  /** the API shape of a row, in the context's languages */
  toDto(row: Row): Dto;
  /** the row as read plus the plain values of the named secret fields (a signing key to use, never to show) or internal fields (a storage key); null unless the context can read it */
  reveal(id: string, secrets: string[]): Promise<Row | null>;
}

export class ModuleContext {
  /** the data layer's view of this context: for the kernel, not for modules */
  readonly crud: CrudContext;
  #services: ContextServices;

  constructor(services: ContextServices, crud: CrudContext) {
    this.#services = services;
    this.crud = crud;
  }

  /** the tenant this context works in: every statement runs in its schema */
  get tenantId(): string {
    return this.crud.tenantId;
  }
  /** who acts: a user, a module's client or the system (SYSTEM); their roles and companies */
  get principal(): Principal {
    return this.crud.principal;
  }
  /** the company the context works in (X-Company-Id, else the caller's primary one); null when there is none (the system, a tenant-wide job) */
  get companyId(): string | null {
    return this.crud.companyId;
  }
  /** the tenant's IANA time zone (Europe/Berlin): "today" for its scheduled work, e.g. a daily reminder */
  get timeZone(): string {
    return this.crud.timeZone ?? 'UTC';
  }
  /** the acting user's id; null for clients and the system */
  get userId(): string | null {
    return this.principal.kind === 'user' ? this.principal.id : null;
  }

  /**
   * The kernel's current time (config "clock"), for time-based rules such as leases, expiry and presence: tests
   * give the kernel a ManualClock (core/clock.ts) and move it with set()/advance() instead of sleeping; today() follows it.
   */
  now(): Date {
    return this.#services.clock.now();
  }

  /** The tenant's calendar date at `at` (default now), YYYY-MM-DD: "today" for conditions on date fields. */
  today(at: Date = this.now()): string {
    return dayIn(this.timeZone, at);
  }

  /** Whether the principal may `action` on `subject` at all (row conditions apply per statement). */
  can(action: string, subject: string): boolean {
    return this.crud.ability.can(action, subject);
  }

  /** The caller's scoped access to an entity (by name: 'Lead'): every read and write through it sees only what the caller's roles allow. */
  data(entity: string): EntityData {
    const service = this.#services.service(entity);
    const ctx = this.crud;
    return {
      list: (query = {}, within) => service.list(ctx, query, undefined, within),
      find: (where = {}, opts) => service.find(ctx, where, opts),
      count: (where = {}) => service.count(ctx, where),
      aggregate: (query) => service.aggregate(ctx, query),
      analyze: (query, opts) => service.analyze(ctx, query, opts),
      resultColumns: (query) => service.resultColumns(ctx, query),
      read: (id) => service.read(ctx, id),
      lock: async (id, opts = {}) => {
        if (!ctx.tx) throw new Error('lock() needs a transaction: call it inside ctx.transaction()');
        return service.lock(ctx, id, opts.shared);
      },
      create: (input, opts = {}) => service.create(ctx, input, opts.internal ?? {}, {}, opts),
      update: (id, input, opts = {}) => service.update(ctx, id, input, { replace: false, ...opts }),
      remove: (id, opts = {}) => service.remove(ctx, id, opts.ifMatch),
      claim: (where, set, opts) => service.claim(ctx, where, set, opts),
      toDto: (row) => service.toDto(row, ctx.read),
      reveal: (id, secrets) => service.reveal(ctx, id, secrets),
    };
  }

  /**
   * Runs `fn` in one transaction: everything done through the context it
   * receives commits or rolls back together. Inside a transaction already,
   * `fn` joins it. One that loses a deadlock or a serialization conflict runs
   * again from the start, a few times at most (crud/crud-service.ts,
   * inTransaction): keep what `fn` builds inside it, and leave calls out of the
   * runtime to afterCommit.
   */
  async transaction<T>(fn: (tx: ModuleContext) => Promise<T>): Promise<T> {
    return inTransaction(this.crud, (crud) => fn(crud === this.crud ? this : new ModuleContext(this.#services, crud)));
  }

  /**
   * Values module code keeps for the length of the current transaction, seen
   * by every hook that runs in it: a handler tells the hooks of its writes
   * what it is doing (a dashboard layout saved in one call, whose widgets may
   * overlap until the last one moved). Undefined outside a transaction.
   */
  get transactionState(): Map<string, unknown> | undefined {
    return this.crud.tx?.state;
  }

  /** Runs `fn` once the current transaction commits (at once outside one); not if it rolls back. */
  afterCommit(fn: () => Promise<void>): Promise<void> | void {
    if (this.crud.tx) this.crud.tx.afterCommit.push(fn);
    else return fn();
  }

  /**
   * Holds a lock named `key` in this tenant until the transaction ends, so
   * checks that span rows (the last administrator) run one after another.
   */
  async serialize(key: string): Promise<void> {
    if (!this.crud.tx) throw new Error('serialize() needs a transaction: call it inside ctx.transaction()');
    await run(this.crud.em, 'select pg_advisory_xact_lock(hashtext($1))', [`plinth:${key}:${this.crud.schema}`]);
  }

  /**
   * Records an action on a row of an audited entity in its module's audit log,
   * in the current transaction if there is one (a rollback takes it back);
   * nothing for an entity that is not audited.
   */
  audit(entity: string, id: string, action: string, changes: Record<string, { before: unknown; after: unknown }> = {}): Promise<void> {
    return this.#services.service(entity).audit(this.crud, action, id, changes);
  }

  /**
   * Records a domain event the module's manifest declares ("events"), as
   * `<module>.<name>`, in the current transaction if there is one: it reaches
   * subscribers and webhooks only if the transaction commits. The payload
   * must fit the declared schema.
   */
  emit(type: string, event: EmittedEvent): Promise<void> {
    return this.#services.emit(this.crud, type, event);
  }

  /**
   * Sends job `name` ("<module>.<job>" a plugin declares) for this tenant and
   * company; inside a transaction it is sent only if the transaction commits.
   */
  enqueue(name: string, data: unknown, opts: EnqueueOptions = {}): Promise<string | null> {
    return this.#services.enqueue(this.crud, name, data, opts);
  }

  /** Sends many jobs of one kind at once (one statement), like enqueue. */
  enqueueMany(name: string, items: EnqueueItem[]): Promise<void> {
    return this.#services.enqueueMany(this.crud, name, items);
  }

  /** An event of this tenant, by id, while the outbox keeps it; null otherwise. */
  event(id: string): Promise<PlinthEvent | null> {
    return this.#services.readEvent(this.crud, id);
  }

  /**
   * Wakes whoever waits on `topic` of this tenant (ctx.waitForSignal), in
   * every process, once the current transaction commits (at once outside
   * one). A hint that something changed, never the data itself.
   */
  signal(topic: string): Promise<void> | void {
    checkTopic(topic);
    return this.afterCommit(() => this.#services.signal(this.tenantId, topic));
  }

  /**
   * Waits until `topic` of this tenant is signalled (true) or `ms` passed or
   * `abort` fired (false): a long poll sleeps here between looks. Wake-ups
   * can be missed (a listener reconnecting): look again after a timeout.
   */
  waitForSignal(topic: string, ms: number, abort?: AbortSignal): Promise<boolean> {
    checkTopic(topic);
    return this.#services.waitForSignal(this.tenantId, topic, ms, abort);
  }

  /** The event types of the loaded modules a subscription pattern ("crm.*") matches. */
  eventTypesMatching(pattern: string): string[] {
    return this.#services.eventTypes.filter((t) => matchesPattern(pattern, t));
  }

  /** HTTP calls to addresses outside the runtime (webhook targets), under the kernel's SSRF policy. */
  get http(): Outbound {
    return this.#services.outbound;
  }

  /**
   * A PostgreSQL database the tenant configured (a BI data source), read-only:
   * its schema's tables, and selects with bound values, each in a read-only
   * transaction with a statement timeout and a row cap, under the kernel's
   * target policy (no loopback or private address unless configured). Its
   * connections are this tenant's own. Failures are ExternalDbError, by code.
   */
  externalDb(target: ExternalTarget): ExternalDb {
    return this.#services.externalDb.of(this.tenantId, target);
  }

  /**
   * This tenant's files (uploads): put a stream under a new key, read, delete.
   * The store knows no rows: keep the key in a row (an internal field) and
   * check access through the row before serving or deleting its file.
   */
  get files(): TenantFiles {
    return tenantFiles(this.#services.files, this.tenantId);
  }

  /**
   * The menu entries of the loaded modules whose pages open for the principal
   * (their permission code, and full access where the page's route needs it;
   * every entry for the system), in load order: the pages of the web console
   * this caller sees.
   */
  async menu(): Promise<MenuEntry[]> {
    const all = this.#services.menu;
    if (this.principal.kind === 'system') return all;
    const { roles } = this.principal;
    const caller = { isAdmin: roles.includes(ADMIN_ROLE), codes: new Set(await this.codesOf(roles)) };
    return all.filter((e) => opensFor(e, caller));
  }

  /**
   * The loaded entities with their fields, types, labels and references, and
   * whether this context may read each entity and field: read-only metadata
   * for modules that describe data (reports, BI). Rows still come only
   * through data().
   */
  model(): EntityInfo[] {
    return describeEntities(this.#services.models.values(), this.crud.ability);
  }

  /**
   * The database server's version and the size in bytes (indexes and TOAST
   * included) of the table of each entity this context may read, largest
   * first: what a data module may show of the tenant's storage.
   */
  async storage(): Promise<{ serverVersion: string; entities: { entity: string; module: string; bytes: number }[] }> {
    const byTable = new Map([...this.#services.models.values()].filter((m) => this.crud.ability.can('read', m.name)).map((m) => [m.table, m] as const));
    const [version, tables] = await Promise.all([serverVersion(this.crud.em), tableSizes(this.crud.em, this.crud.schema)]);
    const entities = tables.flatMap((t) => {
      const m = byTable.get(t.name);
      return m ? [{ entity: m.name, module: m.module, bytes: t.bytes }] : [];
    });
    return { serverVersion: version, entities };
  }

  /** Permission codes a set of roles holds in this tenant. */
  codesOf(roles: string[]): Promise<string[]> {
    return this.#services.codesOf(this.tenantId, roles);
  }

  /** Whether a loaded module declares the permission code ("erp:crm:view"): to check codes before they are granted. */
  isKnownCode(code: string): boolean {
    return this.#services.isKnownCode(code);
  }

  /**
   * Ends every session of a user of this tenant: refresh tokens in the
   * current transaction (so they die with the change that ends them), access
   * tokens in every process once it commits (at once outside one).
   */
  async revokeUserSessions(userId: string): Promise<void> {
    await this.#services.revokeRefreshTokens(this.crud, userId);
    // refresh tokens first, so a racing refresh cannot mint a token the revocation list would miss; the list
    // is written on another connection, so inside a transaction it waits for the commit (embedded PGlite has one connection)
    await this.afterCommit(() => this.#services.revokeAccessTokens(this.tenantId, userId));
  }

  /** Every process drops its cached role codes of this tenant, once the transaction commits. */
  rolesChanged(): Promise<void> | void {
    return this.afterCommit(() => this.#services.rolesChanged(this.tenantId));
  }

  /**
   * The same tenant, connection and transaction acting as the user `userId`,
   * with the roles and companies they hold now (not a token's): what they
   * could read and write themselves, never more. For work done on a user's
   * behalf without their request (a report scheduled by its owner) and for
   * asking whether a user could read a row (an assignee). The company stays
   * when the user belongs to it, else their primary one. Null when no active
   * user has that id.
   */
  async as(userId: string): Promise<ModuleContext | null> {
    const acting = await this.#services.actingAs(this.crud, userId);
    if (!acting) return null;
    const { principal, ability } = acting;
    const companyId = this.crud.companyId && principal.companyIds.includes(this.crud.companyId) ? this.crud.companyId : (principal.companyIds[0] ?? null);
    const as = (crud: CrudContext): CrudContext => ({ ...crud, principal, ability, userId: principal.id, companyId });
    const tx = this.crud.tx && { ...this.crud.tx, outside: as(this.crud.tx.outside) };
    return new ModuleContext(this.#services, { ...as(this.crud), ...(tx ? { tx } : {}) });
  }

  /**
   * ESCAPE HATCH: the same tenant, company and transaction with every
   * permission and no grant condition. For rules that must see rows the
   * caller cannot (counting a tenant's administrators); never for serving
   * the caller rows they could not read themselves.
   */
  system(): ModuleContext {
    return new ModuleContext(this.#services, { ...this.crud, principal: SYSTEM, ability: this.#services.systemAbility });
  }
}

/** Topics are module-chosen names, small enough for a NOTIFY payload. */
function checkTopic(topic: string): void {
  if (typeof topic !== 'string' || !topic.length || topic.length > 200) throw new Error('a signal topic is a string of 1 to 200 characters');
}

/** 400 VALIDATION_FAILED naming each field error. */
export function validationError(errors: { path: string; message: string }[]) {
  return httpError('VALIDATION_FAILED', errors.map((e) => `${e.path} ${e.message}`).join('; '), { errors });
}
