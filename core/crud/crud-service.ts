// Generic CRUD over one entity model, inside the caller's tenant schema,
// company and ability. Every statement carries the scope the kernel's one
// compiler (data/scope.ts) makes of the caller's company and grant conditions:
// lists, reads, the row lock of a write, the check that a written row stays in
// reach, references and parents. Writes are SQL built once per model
// (data/table.ts), lock the row, honour If-Match and the version, so no write
// is silently lost.
import type { EntityManager } from '@mikro-orm/core';
import { COMPANY_ENTITY, type EntityModel, type FieldModel } from '../model/entity-model.ts';
import type { SecretBox } from '../secrets.ts';
import { accessFilter, type Ability } from '../access/abilities.ts';
import { httpError, type FieldError } from '../errors.ts';
import { SqlReader, type ListQuery } from './sql-reader.ts';
import { namedFilterConditions, withListDefaults } from './list-filters.ts';
import { embedRows, itemFields, listShape, pickFields } from './list-shape.ts';
import { mergeTranslations, rowMapper, storedValue, type Dto, type ReadOptions, type Row } from './row-mapper.ts';
import { decimalBoundErrors } from './body-checks.ts';
import { formatRounded } from '../decimal.ts';
import { comparable, computeFormulas, diff, fitting, parseSum, type Changes } from './derived.ts';
import { Params, q, run } from '../data/sql.ts';
import { and, columnOf, compileCondition, compileScope, matching, type Condition, type Fragment } from '../data/scope.ts';
import { FLAGS, tableOf, type Flags, type Table } from '../data/table.ts';
import { numberRow } from '../data/sequence.ts';
import { v7 as uuidv7 } from 'uuid';
import { readColumns, readableColumn, writeFieldFlags } from '../data/field-access.ts';
import type { Principal } from '../access/principal.ts';
import { onLane } from '../db/lane-pool.ts';
import { isTransactionConflict } from '../db/failures.ts';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Outbox } from '../data/outbox.ts';
import { CRUD_ACTIONS, crudEventType } from '../manifest/events.ts';
import type { DataChanges } from '../data/changes.ts';
import type { ResultCache } from './result-cache.ts';
import { aggregate, compileAggregate, type AggregateColumn, type AggregateQuery, type AggregateRow, type AggregateSource, type TypedColumn } from './aggregate.ts';
import { compileColumnAggregate } from './column-aggregate.ts';

/** How analyze() runs: its timeout and row cap, the result cache, and an aggregate over its groups. */
export interface AnalyzeOptions {
  /** the statement's time limit (set local statement_timeout); past it the call fails with 422 UNPROCESSABLE */
  timeoutMs: number;
  /** most groups answered; more sets `truncated` */
  maxRows: number;
  /** false: run it, whatever the cache holds */
  cache?: boolean;
  /** aggregate the groups again, as a table named `name` (a saved query used as a table); its limit is the answer's */
  then?: { name: string; query: AggregateQuery };
}

/** An aggregate's result for analytics (CrudService.analyze). */
export interface Analysis {
  /** the groups, as aggregate() answers them */
  rows: AggregateRow[];
  /** each group key and measure: key, type and label */
  columns: AggregateColumn[];
  /** more groups matched than the row cap let through */
  truncated: boolean;
  /** the statement's text: identifiers and $n placeholders, no value */
  sql: string;
  /** the result came from the result cache (or from the same statement running for another caller) */
  cached: boolean;
}

/** What a service shares with every other: the record of committed changes, and the cache of results derived from them. */
export interface DataRuntime {
  changes: DataChanges;
  results: ResultCache<Omit<Analysis, 'cached'>>;
}

export interface CrudContext {
  em: EntityManager;
  tenantId: string;
  /** the tenant's PostgreSQL schema */
  schema: string;
  principal: Principal;
  ability: Ability;
  companyId: string | null;
  read: ReadOptions;
  /** language a plain-string write of a translatable field is stored under */
  writeLanguage: string;
  /** the tenant's IANA time zone, whose clock its scheduled work keeps (default UTC) */
  timeZone?: string;
  /** the caller, recorded by the audit trail */
  userId?: string | null;
  /** set inside a transaction: writes join it, after-commit work waits for it and runs on `outside` */
  tx?: {
    afterCommit: (() => Promise<void>)[];
    outside: CrudContext;
    /** what module code keeps for this transaction (ModuleContext.transactionState) */
    state?: Map<string, unknown>;
    /** tables written, announced once it committed (data/changes.ts) */
    changed?: Set<string>;
  };
}

/** How many times the kernel runs a transaction that lost a deadlock or a serialization conflict, in all. */
export const TRANSACTION_TRIES = 3;
/** The longest pause before the second try, in milliseconds (twice that before the third). */
const RETRY_PAUSE_MS = 20;

/**
 * Runs `fn` in one transaction on `ctx`'s connection, or in the transaction
 * `ctx` is already in; after-commit work runs once the outermost one commits.
 *
 * The outermost transaction that PostgreSQL rolls back for a deadlock (40P01)
 * or a serialization conflict (40001) runs again from the start, `fn` and all,
 * up to TRANSACTION_TRIES times in all, after a short random pause (so the
 * transactions that collided do not collide again in step); then the error
 * answers 503. A try that failed leaves nothing behind: its writes, outbox
 * events and audit records rode in its transaction, and its after-commit work
 * and transaction state are dropped with it. A nested call joins the outer
 * transaction and is never retried alone. So `fn` must be safe to run again:
 * keep what it builds inside it, not in variables around it.
 */
export async function inTransaction<T>(ctx: CrudContext, fn: (tx: CrudContext) => Promise<T>): Promise<T> {
  if (ctx.tx) return fn(ctx);
  for (let tries = 1; ; tries++) {
    let done: { result: T; afterCommit: (() => Promise<void>)[] };
    try {
      done = await tryTransaction(ctx, fn);
    } catch (err) {
      if (tries >= TRANSACTION_TRIES || !isTransactionConflict(err)) throw err;
      await sleep(Math.random() * RETRY_PAUSE_MS * tries);
      continue;
    }
    // outside the try: after-commit work runs once, and a failure of it never runs the committed transaction again
    for (const f of done.afterCommit) await f();
    return done.result;
  }
}

async function tryTransaction<T>(ctx: CrudContext, fn: (tx: CrudContext) => Promise<T>): Promise<{ result: T; afterCommit: (() => Promise<void>)[] }> {
  const afterCommit: (() => Promise<void>)[] = [];
  // begin and commit on the connection, without em.transactional's unit-of-work flush: writes are
  // SQL (data/table.ts); an EntityManager bound to the transaction still serves kernel code using one
  const connection = ctx.em.getConnection();
  const trx = await onLane(ctx.em.schema, () => connection.begin());
  try {
    const em = ctx.em.fork();
    em.setTransactionContext(trx);
    const result = await fn({ ...ctx, em, tx: { afterCommit, outside: ctx, state: new Map() } });
    await connection.commit(trx);
    return { result, afterCommit };
  } catch (err) {
    try {
      await connection.rollback(trx);
    } catch {
      /* the connection died: the pool discards it (db/pool-guard.ts) */
    }
    throw err;
  }
}

export type WriteOp = 'create' | 'replace' | 'update' | 'delete';

/** A write before its checks: `before` is the locked old row (null on create), `input` the body (absent on delete). */
export interface BeforeWriteEvent {
  /** create, update, replace (PUT) or delete */
  op: WriteOp;
  /** the row's id; absent on create */
  id?: string;
  /** the values sent (as an earlier hook changed them); absent on delete */
  input?: Record<string, unknown>;
  /** the row as stored, locked until the transaction ends; null on create */
  before: Row | null;
  /** create: the parents a nested route takes from its path (module code passes them as internal values), e.g. { quoteId } */
  parents?: Row;
}
/** A write done: the row's values before (null on create) and after (null on delete). */
export interface WriteEvent {
  /** create, update, replace (PUT) or delete */
  op: WriteOp;
  /** the row's id */
  id: string;
  /** the values written, as the beforeWrite hooks left them; absent on delete */
  input?: Record<string, unknown>;
  /** the row before the write; null on create */
  before: Row | null;
  /** the row as written; null on delete */
  after: Row | null;
}

/** What the kernel runs around each write of an entity (module hooks, adapted by the context layer). */
export interface WriteHooks {
  beforeWrite?(ctx: CrudContext, event: BeforeWriteEvent): Promise<Record<string, unknown> | undefined>;
  afterWrite?(ctx: CrudContext, event: WriteEvent): Promise<void>;
  afterCommit?(ctx: CrudContext, event: WriteEvent): Promise<void>;
}
/** Where a service's writes record their events. */
export interface WriteEvents {
  outbox: Outbox;
  /** the event a move into `state` emits besides "updated" */
  stateEvent(state: string): string | undefined;
  /** the service of another entity, whose events a write of this one causes (a parent's new totals) */
  serviceOf(entity: string): CrudService;
}
/** Values a nested route takes from its path, e.g. { quoteId } of /quotes/:quoteId/lines. */
export type Bound = Record<string, string>;
export interface WriteOptions {
  /** module code may move a row into a reserved state; generated routes may not */
  system?: boolean;
  /** update: values of read-only fields module code sets (a lead's customerId on conversion) */
  set?: Row;
  /** update: the action the audit record names (default "update") */
  auditAction?: string;
  /** the hooks' name for the write (a PUT is "replace"); default: the method's */
  op?: WriteOp;
}
export type { Changes };

export type { ListQuery };
/** A list page: `page` when asked by page (absent for a cursor), `nextCursor` the cursor of the page after it (null: none). */
export interface Page {
  /** the page's rows in the API shape */
  items: Dto[];
  /** the page number asked for (from 1); absent when asked by cursor */
  page?: number;
  /** rows per page asked for (default 50) */
  size: number;
  /** rows matching, on every page */
  total: number;
  /** the cursor of the next page; null on the last */
  nextCursor: string | null;
}

export class CrudService {
  readonly model: EntityModel;
  readonly toDto: ReturnType<typeof rowMapper>;
  #models: Map<string, EntityModel>;
  #reader: SqlReader;
  #table: Table;
  #secrets?: SecretBox;
  /** fields a write's input may set (the request body was checked against the writable ones before) */
  #settable: Set<string>;
  #readable: Set<string>;
  #itemFields: Set<string>;
  #hooks: WriteHooks;
  #outbox?: Outbox;
  #eventTypes: Record<WriteOp, string>;
  #stateEvent: (state: string) => string | undefined;
  #serviceOf?: (entity: string) => CrudService;
  #data?: DataRuntime;

  /** `events`: where writes record their events, and the event a move into a state emits besides "updated" */
  constructor(model: EntityModel, models: Map<string, EntityModel>, secrets?: SecretBox, hooks: WriteHooks = {}, events?: WriteEvents, data?: DataRuntime) {
    this.model = model;
    this.#data = data;
    this.#hooks = hooks;
    this.#outbox = model.events ? events?.outbox : undefined;
    this.#stateEvent = events?.stateEvent ?? (() => undefined);
    this.#serviceOf = events?.serviceOf;
    const type = (action: (typeof CRUD_ACTIONS)[keyof typeof CRUD_ACTIONS]) => crudEventType(model.module, model.name, action);
    this.#eventTypes = { create: type('created'), replace: type('updated'), update: type('updated'), delete: type('deleted') };
    this.#models = models;
    this.#secrets = secrets;
    this.toDto = rowMapper(model);
    this.#reader = new SqlReader(model);
    this.#table = tableOf(model);
    this.#settable = new Set(model.settable.map((f) => f.name));
    this.#readable = new Set(model.readable.map((f) => f.name));
    this.#itemFields = new Set(itemFields(model));
  }

  /** The rows of `model` the caller may `action`: company ∧ grant conditions; null when none. */
  scope(ctx: CrudContext, action: string, model = this.model): Fragment | null {
    const access = accessFilter(ctx.ability, action, model.name);
    return access && compileScope(this.#models, model, access);
  }

  /** Whether the action's grant has conditions a row must meet (beyond the company). */
  #conditional(ctx: CrudContext, action: string): boolean {
    const access = accessFilter(ctx.ability, action, this.model.name);
    return access !== null && Object.keys(access).length > 0;
  }

  params(ctx: CrudContext): Params {
    return new Params(ctx.schema, ctx.companyId, ctx.principal, ctx.timeZone);
  }

  /** `within` narrows the list further, e.g. { quoteId } of a nested path; `where` too, a condition in grant syntax (a declared sub-list). */
  async list(ctx: CrudContext, q: ListQuery, languagesUsed?: Set<string>, within?: Bound, where?: Condition): Promise<Page> {
    const shape = listShape(this.model, q);
    const paging = q.cursor === undefined ? { page: q.page ?? 1 } : {};
    const size = q.size ?? 50;
    const allowed = this.scope(ctx, 'read');
    if (allowed === null) return { items: [], ...paging, size, total: 0, nextCursor: null };
    q = withListDefaults(this.model, q);
    const named = namedFilterConditions(this.model, q).map(({ where, negate }): Fragment => {
      const holds = compileCondition(this.#models, this.model, where);
      // false: every row the condition does not hold for, those it is unknown for (a null date) included
      return negate ? (p) => `not coalesce((${holds(p)}), false)` : holds;
    });
    const scope = and([allowed, ...(within ? [matching(this.model, within)] : []), ...(where ? [compileCondition(this.#models, this.model, where)] : []), ...named]);
    const limited = (f: FieldModel) => readableColumn(this.#models, this.model, ctx.ability, f.name);
    const { rows, total, nextCursor } = await this.#reader.list(ctx.em, this.params(ctx), scope, q, ctx.read.prefs, this.#columns(ctx), limited);
    let items = rows.map((r) => this.toDto(r, ctx.read, languagesUsed));
    for (const f of shape.include) {
      const target = this.#models.get(f.entity!)!;
      const source = { target, scope: this.scope(ctx, 'read', target), columns: readColumns(this.#models, target, ctx.ability) ?? undefined };
      await embedRows(ctx.em, this.params(ctx), items, f, source, ctx.read, languagesUsed);
    }
    if (shape.fields) items = items.map((i) => pickFields(i, shape.fields!, this.#itemFields));
    return { items, ...paging, size, total, nextCursor };
  }

  async read(ctx: CrudContext, id: string, bound?: Bound): Promise<Row> {
    const row = await this.#find(ctx, id, 'read', false, bound);
    if (!row) throw httpError('NOT_FOUND', `${this.model.name} ${id} does not exist`);
    return row;
  }

  /** Whether the caller can read row `id`. */
  async visible(ctx: CrudContext, id: string): Promise<boolean> {
    const scope = this.scope(ctx, 'read');
    return scope !== null && this.#table.exists(ctx.em, this.params(ctx), and([matching(this.model, { id }), scope]));
  }

  /**
   * Row `id`, locked until the transaction of `ctx` ends (module code runs
   * it inside ctx.transaction); 404 unless the caller can read it.
   */
  async lock(ctx: CrudContext, id: string, shared = false): Promise<Row> {
    const row = await this.#find(ctx, id, 'read', shared ? 'share' : true);
    if (!row) throw httpError('NOT_FOUND', `${this.model.name} ${id} does not exist`);
    return row;
  }

  /**
   * The row the caller reaches through the read scope: as they may see it
   * for a read, whole (field rules aside) for a write, whose `may` flag says
   * whether `check` allows it too, and `fields` flags which fields they may change.
   */
  async #find(ctx: CrudContext, id: string, check: string, lock: boolean | 'share', bound?: Bound, fields: Flags = {}): Promise<Row | null> {
    const scope = this.scope(ctx, 'read');
    if (!scope) return null;
    const where = bound ? and([scope, matching(this.model, bound)]) : scope;
    if (check === 'read') return this.#table.byId(ctx.em, this.params(ctx), id, where, { lock, columns: this.#columns(ctx) });
    const flags = { ...this.#mayFlag(ctx, check), ...fields };
    return this.#table.byId(ctx.em, this.params(ctx), id, where, { lock, flags });
  }

  /** The select list field rules leave the caller; undefined: every readable field. */
  #columns(ctx: CrudContext): Fragment | undefined {
    return readColumns(this.#models, this.model, ctx.ability) ?? undefined;
  }

  /** The model's fields a write's input names (translations included). */
  #named(input: Record<string, unknown>): string[] {
    const names = Object.keys(input).filter((k) => this.model.byName.has(k));
    const translations = input.translations as Record<string, unknown> | undefined;
    return translations ? [...new Set([...names, ...Object.keys(translations)])] : names;
  }

  /** A `may` column when the action's grant is conditional (else the route's check settled it). */
  #mayFlag(ctx: CrudContext, action: string): Record<string, Fragment> | undefined {
    if (!this.#conditional(ctx, action)) return this.scope(ctx, action) ? undefined : { may: () => 'false' };
    return { may: this.scope(ctx, action)! };
  }

  #assertMay(row: Row, action: string): void {
    const flags = (row as Record<symbol, Row | undefined>)[FLAGS];
    if (!flags) return;
    if (flags.may === false) throw httpError('FORBIDDEN', `not allowed to ${action} this ${this.model.name}`);
    for (const [key, ok] of Object.entries(flags)) {
      if (ok === false && key.startsWith('field:')) {
        const name = key.slice('field:'.length);
        throw httpError('FORBIDDEN', `not allowed to ${action === 'create' ? 'set' : 'change'} ${this.model.name}.${name} of this ${this.model.name}`, {
          errors: [{ path: `/${name}`, message: 'is not a field you may change here' }],
        });
      }
    }
  }

  /**
   * Row `id` as the caller reads it plus the plain values of secret fields
   * `secrets`, for module code that must use them (a webhook's signing key),
   * or of internal fields as stored (a file's storage key); null unless the
   * caller can read the row. Never for a response.
   */
  async reveal(ctx: CrudContext, id: string, secrets: string[]): Promise<Row | null> {
    const fields = secrets.map((name) => {
      const f = this.model.byName.get(name);
      if (!f?.secret && !f?.internal) throw new Error(`${this.model.name}.${name} is no secret or internal field`);
      return f;
    });
    const scope = this.scope(ctx, 'read');
    if (!scope) return null;
    const columns = this.#columns(ctx);
    const sealed = fields.map((f) => `t.${q(f.column)} as ${q(`sealed:${f.name}`)}`).join(', ');
    const row = await this.#table.byId(ctx.em, this.params(ctx), id, scope, { columns: (p) => `${columns?.(p) ?? this.#table.columns}, ${sealed}` });
    if (!row) return null;
    for (const f of fields) {
      const value = row[`sealed:${f.name}`];
      delete row[`sealed:${f.name}`];
      if (!f.secret) {
        row[f.name] = value ?? null;
        continue;
      }
      if (typeof value === 'string' && !this.#secrets) throw new Error(`${this.model.name}.${f.name} is secret, but no SecretBox was given`);
      row[f.name] = typeof value === 'string' ? this.#secrets!.decrypt(value) : null;
    }
    return row;
  }

  /** Rows meeting `where` (grant-condition syntax) within the caller's read scope, oldest first unless `orderBy` (a sort spec) says otherwise. */
  async find(ctx: CrudContext, where: Condition = {}, opts: { limit?: number; orderBy?: string } = {}): Promise<Row[]> {
    const scope = this.scope(ctx, 'read');
    if (!scope) return [];
    return this.#reader.find(
      ctx.em,
      this.params(ctx),
      and([scope, compileCondition(this.#models, this.model, where)]),
      opts.orderBy ?? 'createdAt',
      opts.limit ?? 1000,
      ctx.read.prefs,
      this.#columns(ctx),
    );
  }

  async count(ctx: CrudContext, where: Condition = {}): Promise<number> {
    const scope = this.scope(ctx, 'read');
    if (!scope) return 0;
    return this.#table.count(ctx.em, this.params(ctx), and([scope, compileCondition(this.#models, this.model, where)]));
  }

  /** Counts, sums and other measures over the rows the caller may read, grouped in the database (crud/aggregate.ts). */
  async aggregate(ctx: CrudContext, query: AggregateQuery): Promise<AggregateRow[]> {
    const source = { models: this.#models, model: this.model, ability: ctx.ability };
    return aggregate(ctx.em, this.params(ctx), source, this.scope(ctx, 'read') ?? (() => 'false'), query);
  }

  /**
   * A work queue's claim, in one statement: the first row (by `orderBy`, a
   * sort spec; default oldest first) meeting `where` that the caller may read
   * and update and no other transaction holds locked gets `set` (read-only
   * fields included) and a new version; null when there is none. Concurrent
   * claims never take the same row. It runs no hooks and records no event or
   * audit record, so only entities with none of them may use it.
   */
  async claim(ctx: CrudContext, where: Condition, set: Row, opts: { orderBy?: string } = {}): Promise<Row | null> {
    const h = this.#hooks;
    if (this.#outbox || this.model.auditLog || h.beforeWrite || h.afterWrite || h.afterCommit) {
      throw new Error(`${this.model.name}: claim() runs no hooks and records no event or audit: only for entities with "events": false, no audit and no hooks`);
    }
    const read = this.scope(ctx, 'read');
    const update = this.scope(ctx, 'update');
    if (!read || !update) return null;
    const data: Row = {};
    for (const [name, value] of Object.entries(set)) {
      const f = this.model.byName.get(name);
      if (!f || f.translatable) throw new Error(`claim() cannot set ${this.model.name}.${name}`);
      data[name] = this.#stored(f, value);
    }
    const order = (opts.orderBy ?? 'createdAt').split(',').map((part) => {
      const desc = part.startsWith('-');
      const column = columnOf(this.model, desc ? part.slice(1) : part);
      if (!column) throw new Error(`claim() cannot order ${this.model.name} by "${part}"`);
      return `t.${q(column)}${desc ? ' desc' : ''}`;
    });
    const where_ = and([read, update, compileCondition(this.#models, this.model, where)]);
    const row = await tableOf(this.model).claim(ctx.em, this.params(ctx), where_, [...order, 't."id"'].join(', '), data, { columns: this.#columns(ctx) });
    if (row) this.#changed(ctx, this.model.table);
    return row;
  }

  /**
   * An aggregate for analytics: in a read-only transaction of its own under a
   * statement timeout, at most `maxRows` groups (`truncated` when there were
   * more), with its columns and the statement's text (values only as $n, the
   * tenant's schema left out) to show how it ran. 422 when it runs too long.
   */
  async analyze(ctx: CrudContext, query: AggregateQuery, opts: AnalyzeOptions): Promise<Analysis> {
    if (ctx.tx) throw new Error('analyze() runs in a read-only transaction of its own: call it outside ctx.transaction()');
    const limit = Math.min(opts.maxRows, 1000);
    const params = this.params(ctx);
    let statement: { sql: string; values: unknown[]; columns: AggregateColumn[]; shape: (rows: Record<string, unknown>[]) => AggregateRow[] };
    let wanted: number;
    if (opts.then) {
      // the groups of `query` as a table, aggregated again: one statement, the caller's scope inside
      const groups = compileAggregate(params, this.#source(ctx), this.#readScope(ctx), query, { maxLimit: opts.maxRows, derived: true });
      const over = compileColumnAggregate(`(${groups.sql})`, { name: opts.then.name, columns: groups.derived }, opts.then.query, { maxRows: opts.maxRows, values: params.values });
      statement = over;
      wanted = over.wanted;
    } else {
      statement = compileAggregate(params, this.#source(ctx), this.#readScope(ctx), { limit, ...query }, { maxLimit: opts.maxRows, peek: true });
      wanted = query.limit ?? limit;
    }
    const load = async () => {
      const rows = await inTransaction(ctx, async (tx) => {
        await run(tx.em, 'set transaction read only', []);
        await run(tx.em, `set local statement_timeout = ${Math.max(1, Math.trunc(opts.timeoutMs))}`, []);
        try {
          return await run(tx.em, statement.sql, statement.values);
        } catch (err) {
          if ((err as { code?: string }).code === '57014') throw httpError('UNPROCESSABLE', `the query ran longer than ${opts.timeoutMs} ms: narrow it (filters, a date range, fewer dimensions)`);
          throw err;
        }
      });
      return { rows: statement.shape(rows.slice(0, wanted)), columns: statement.columns, truncated: rows.length > wanted, sql: statement.sql.replaceAll(`${q(ctx.schema)}.`, '') };
    };
    const data = this.#data;
    if (!data || opts.cache === false) return { ...(await load()), cached: false };
    // the statement and its values hold the caller's whole scope; the stamp is read before it runs (data/changes.ts);
    // the columns name the result's keys, which the statement's aliases (g0, m0) do not: the same statement under other names is another result
    const key = [ctx.tenantId, data.changes.stamp(ctx.tenantId, params.tables), wanted, statement.sql, JSON.stringify(statement.values), JSON.stringify(statement.columns)].join('\n');
    const { value, cached } = await data.results.get(key, load);
    return { ...value, cached };
  }

  /** The result columns of an aggregate as the caller would get them, typed as a table another aggregate may read (analyze's `then`); nothing runs. */
  resultColumns(ctx: CrudContext, query: AggregateQuery): TypedColumn[] {
    return compileAggregate(this.params(ctx), this.#source(ctx), this.#readScope(ctx), query, { derived: true }).derived;
  }

  #source(ctx: CrudContext): AggregateSource {
    return { models: this.#models, model: this.model, ability: ctx.ability };
  }

  #readScope(ctx: CrudContext): Fragment {
    return this.scope(ctx, 'read') ?? (() => 'false');
  }

  /** `internal`: values of fields the API never writes (a password hash), set by a module's handler. */
  async create(ctx: CrudContext, body: Record<string, unknown>, internal: Row = {}, bound: Bound = {}, opts: WriteOptions = {}): Promise<Row> {
    if (!this.scope(ctx, 'create')) throw httpError('FORBIDDEN', `not allowed to create a ${this.model.name}`);
    return this.#write(ctx, async (tx) => {
      const pathParents = Object.fromEntries(this.model.pathBound.flatMap((f) => ((bound[f.name] ?? internal[f.name]) === undefined ? [] : [[f.name, bound[f.name] ?? internal[f.name]]])));
      const input = await this.#before(tx, { op: 'create', input: body, before: null, parents: pathParents });
      const fieldFlags = writeFieldFlags(this.#models, this.model, tx.ability, 'create', this.#named(input));
      await this.#check(tx, input);
      const data: Row = {};
      for (const f of this.model.fields) {
        if (f.translatable) continue;
        if (bound[f.name] !== undefined) data[f.name] = bound[f.name];
        else if (this.#settable.has(f.name) && input[f.name] !== undefined) data[f.name] = this.#stored(f, input[f.name]);
        else if (f.default !== undefined) data[f.name] = storedValue(f, f.default);
      }
      Object.assign(data, internal);
      this.#applyTranslations(tx, data, undefined, input, false);
      this.#requireTranslations(data);
      computeFormulas(this.model, data);
      if (this.model.scope === 'company') data.companyId = tx.companyId;
      const tr = this.model.transitions;
      if (tr && !tr.initial.includes(data[tr.field])) throw httpError('INVALID_TRANSITION', `a ${this.model.name} starts as ${tr.initial.join(' or ')}, not ${data[tr.field]}`);
      if (tr?.reserved?.includes(data[tr.field]) && !opts.system) throw httpError('INVALID_TRANSITION', `only the module moves a ${this.model.name} to ${data[tr.field]}`);
      const parents = await this.#lockParents(tx, data);
      await numberRow(tx.em, tx.schema, this.model, data);
      data.id ??= uuidv7();
      const now = new Date().toISOString();
      // the new row must be one the caller may create: checked on the row as stored, in the same SQL as every read
      const row = await this.#table.insert(tx.em, this.params(tx), data, {
        flags: { ...this.#mayFlag(tx, 'create'), ...fieldFlags },
        columns: this.#columns(tx),
        now,
        with: this.eventInsert(tx, 'create', null, { ...data, createdAt: now, updatedAt: now, version: 1 }),
      });
      this.#assertMay(row, 'create');
      await this.audit(tx, 'create', row.id, diff({}, this.#snapshot(row)));
      await this.#rollUp(tx, parents);
      return { row, event: { op: 'create', id: row.id, input, before: null, after: row } };
    });
  }

  async update(ctx: CrudContext, id: string, body: Record<string, unknown>, opts: WriteOptions & { ifMatch?: string; replace: boolean }, bound?: Bound): Promise<Row> {
    return this.#write(ctx, async (tx) => {
      const old = await this.#find(tx, id, 'update', true, bound, writeFieldFlags(this.#models, this.model, tx.ability, 'update', this.#named(body)));
      if (!old) throw httpError('NOT_FOUND', `${this.model.name} ${id} does not exist`);
      checkIfMatch(opts.ifMatch, old.version);
      this.#assertMay(old, 'update');
      const op = opts.op ?? (opts.replace ? 'replace' : 'update');
      const input = await this.#before(tx, { op, id, input: body, before: old });
      await this.#check(tx, input);
      const parents = await this.#lockParents(tx, old);
      const data: Row = {};
      for (const f of this.model.settable) if (!f.translatable && input[f.name] !== undefined) data[f.name] = this.#stored(f, input[f.name]);
      this.#applyTranslations(tx, data, old, input, opts.replace);
      Object.assign(data, opts.set ?? {});
      const merged: Row = { ...old, ...data };
      computeFormulas(this.model, merged);
      for (const { field } of this.model.formulas) data[field.name] = merged[field.name];
      this.#requireTranslations(merged);
      const before = this.#snapshot(old);
      const changes = diff(before, this.#snapshot(merged));
      this.#checkTransition(before, merged, changes, opts);
      // nothing the API shows changed and nothing hidden (a secret) is written: no write, no new version
      if (!Object.keys(changes).length && Object.keys(data).every((k) => this.#readable.has(k))) {
        return { row: this.#columns(tx) ? (await this.#find(tx, id, 'read', false))! : old };
      }
      const now = new Date().toISOString();
      const row = (await this.#table.update(tx.em, this.params(tx), id, data, {
        flags: this.#mayFlag(tx, 'update'),
        columns: this.#columns(tx),
        now,
        with: this.eventInsert(tx, op, old, { ...merged, updatedAt: now, version: old.version + 1 }),
      }))!;
      // a write may not move a row out of the caller's reach
      this.#assertMay(row, 'update');
      await this.audit(tx, opts.auditAction ?? 'update', id, diff(before, this.#snapshot(row)));
      await this.#rollUp(tx, parents);
      return { row, event: { op, id, input, before: old, after: row } };
    });
  }

  async remove(ctx: CrudContext, id: string, ifMatch?: string, bound?: Bound): Promise<void> {
    await this.#write(ctx, async (tx) => {
      const row = await this.#find(tx, id, 'delete', true, bound);
      if (!row) throw httpError('NOT_FOUND', `${this.model.name} ${id} does not exist`);
      checkIfMatch(ifMatch, row.version);
      this.#assertMay(row, 'delete');
      await this.#before(tx, { op: 'delete', id, before: row });
      const tr = this.model.transitions;
      if (tr?.lockedIn?.includes(row[tr.field])) throw httpError('STATE_LOCKED', `a ${this.model.name} in state ${row[tr.field]} cannot be deleted`);
      const parents = await this.#lockParents(tx, row);
      await this.#assertUnreferenced(tx, id);
      await this.audit(tx, 'delete', id, diff(this.#snapshot(row), {}));
      await this.#table.delete(tx.em, this.params(tx), id, { with: this.eventInsert(tx, 'delete', row, null) });
      await this.#rollUp(tx, parents);
      return { row, event: { op: 'delete', id, before: row, after: null } };
    });
  }

  /**
   * One write in its transaction (or the caller's): `fn` locks, checks and
   * writes, its event going to the outbox in the same statement; then the
   * afterWrite hooks run inside the transaction (a throw rolls the write and
   * its event back), and the afterCommit hooks run once it committed.
   */
  async #write(ctx: CrudContext, fn: (tx: CrudContext) => Promise<{ row: Row; event?: WriteEvent }>): Promise<Row> {
    return inTransaction(ctx, async (tx) => {
      const { row, event } = await fn(tx);
      this.#changed(tx, this.model.table);
      if (event && this.#hooks.afterWrite) await this.#hooks.afterWrite(tx, event);
      if (event && this.#hooks.afterCommit) tx.tx!.afterCommit.push(() => this.#hooks.afterCommit!(tx.tx!.outside, event));
      return row;
    });
  }

  /**
   * The outbox insert of a write (and of a move into a state, besides), sent
   * with the write's own statement: the row after it (before it, for a
   * delete) as the API shows it, with every translation, and what changed.
   * `after` is the row as the write stores it, known before it runs.
   */
  eventInsert(tx: CrudContext, op: WriteOp, before: Row | null, after: Row | null): Fragment | undefined {
    if (!this.#outbox) return undefined;
    if (after) after = this.#asStored(after);
    const row = (after ?? before)!;
    const changes = diff(before ? this.#snapshot(before) : {}, after ? this.#snapshot(after) : {});
    const payload = { row: this.toDto(row, { prefs: tx.read.prefs, translations: true }), changes };
    const companyId = (row.companyId as string | undefined) ?? tx.companyId;
    const events = [{ type: this.#eventTypes[op], entity: this.model.name, entityId: row.id as string, payload }];
    const state = this.model.transitions?.field;
    if (state && before && after && state in changes) {
      const moved = this.#stateEvent(String(after[state]));
      if (moved) events.push({ ...events[0], type: moved });
    }
    return (p) => this.#outbox!.insert(p, { tenantId: tx.tenantId, companyId, principal: tx.principal }, events);
  }

  /** A row about to be written with its readable values as a read will return them (module code may set a decimal as a number, an instant as a Date). */
  #asStored(row: Row): Row {
    const out = { ...row };
    for (const f of this.model.readable) {
      const v = out[f.name];
      if (v === undefined || v === null || f.translatable) continue;
      if (f.type === 'datetime') out[f.name] = new Date(v).toISOString();
      else if (f.type === 'date' && v instanceof Date) out[f.name] = v.toISOString().slice(0, 10);
      else out[f.name] = storedValue(f, v);
    }
    return out;
  }

  async #before(tx: CrudContext, event: BeforeWriteEvent): Promise<Record<string, unknown>> {
    const input = event.input ?? {};
    return (this.#hooks.beforeWrite && (await this.#hooks.beforeWrite(tx, event))) ?? input;
  }

  /** Writes an audit record of this write in `em`'s transaction, when the entity is audited. */
  async audit(ctx: CrudContext, action: string, id: string, changes: Changes): Promise<void> {
    if (!this.model.auditLog) return;
    const log = this.#models.get(this.model.auditLog)!;
    const data: Row = { entity: this.model.name, entityId: id, action, userId: ctx.userId ?? null, changes, at: new Date() };
    if (log.scope === 'company') data.companyId = ctx.companyId;
    await tableOf(log).insert(ctx.em, this.params(ctx), data);
  }

  /** The API-visible values of a row, comparable across a write. */
  #snapshot(row: Row): Row {
    return Object.fromEntries(this.model.readable.map((f) => [f.name, comparable(row[f.name])]));
  }
  /** Moves of the state field follow the manifest's transitions; a locked state keeps the row as it is. */
  #checkTransition(before: Row, row: Row, changes: Changes, opts: WriteOptions): void {
    const tr = this.model.transitions;
    if (!tr) return;
    const from = before[tr.field] as string;
    const to = row[tr.field] as string;
    if (tr.lockedIn?.includes(from) && Object.keys(changes).some((f) => f !== tr.field)) {
      throw httpError('STATE_LOCKED', `a ${this.model.name} in state ${from} cannot be changed`);
    }
    if (from === to) return;
    if (!(tr.moves[from] ?? []).includes(to)) throw httpError('INVALID_TRANSITION', `a ${this.model.name} cannot move from ${from} to ${to}`);
    if (tr.reserved?.includes(to) && !opts.system) throw httpError('INVALID_TRANSITION', `only the module moves a ${this.model.name} to ${to}`);
  }

  /**
   * Rows this write belongs to, locked for the transaction: the parent a
   * nested route addresses (a locked state freezes its children too) and
   * every parent whose sums this write changes (so concurrent writes of
   * sibling rows add up in turn).
   */
  async #lockParents(ctx: CrudContext, row: Row): Promise<{ model: EntityModel; row: Row }[]> {
    const out: { model: EntityModel; row: Row }[] = [];
    const refs = new Set([...this.model.pathBound.map((f) => f.name), ...this.model.feeds.map((r) => r.by)]);
    for (const name of refs) {
      const id = row[name];
      if (typeof id !== 'string') continue;
      const model = this.#models.get(this.model.byName.get(name)!.entity!)!;
      // a parent the caller cannot read is as unknown as none
      const scope = this.scope(ctx, 'read', model);
      const parent = scope && (await tableOf(model).byId(ctx.em, this.params(ctx), id, scope, { lock: true }));
      if (!parent) throw httpError('NOT_FOUND', `${model.name} ${id} does not exist`);
      const tr = model.transitions;
      if (this.model.pathBound.some((f) => f.name === name) && tr?.lockedIn?.includes(parent[tr.field])) {
        throw httpError('STATE_LOCKED', `the ${model.name} is ${parent[tr.field]}: its ${this.model.label} rows cannot be changed`);
      }
      out.push({ model, row: parent });
    }
    return out;
  }

  /** Recomputes the sums of the locked parents from their child rows, in the database's exact numeric. */
  async #rollUp(ctx: CrudContext, parents: { model: EntityModel; row: Row }[]): Promise<void> {
    for (const { model, row } of parents) {
      const data: Row = {};
      for (const r of model.rollups.filter((x) => x.child === this.model.name)) {
        const p = this.params(ctx);
        const sql = `select coalesce(sum(${q(r.summed.column)}), 0)::text as "total" from ${p.table(this.model.table)} where ${q(this.model.byName.get(r.by)!.column)} = ${p.add(row.id)}`;
        const [res] = await run(ctx.em, sql, p.values);
        data[r.field.name] = fitting(r.field, formatRounded(parseSum(res.total as string), r.field.scale ?? 2));
      }
      if (!Object.keys(data).length) continue;
      const merged = { ...row, ...data };
      computeFormulas(model, merged);
      for (const { field } of model.formulas) data[field.name] = merged[field.name];
      // new totals are news of the parent: its "updated" event rides in the same statement
      const now = new Date().toISOString();
      const event = this.#serviceOf?.(model.name).eventInsert(ctx, 'update', row, { ...merged, updatedAt: now, version: row.version + 1 });
      await tableOf(model).update(ctx.em, this.params(ctx), row.id, data, { now, with: event });
      this.#changed(ctx, model.table);
    }
  }

  /** `table` was written in `ctx`: caches of results read from it end once that commits (data/changes.ts). */
  #changed(ctx: CrudContext, table: string): void {
    const changes = this.#data?.changes;
    if (!changes) return;
    const tx = ctx.tx;
    if (!tx) return changes.changed(ctx.tenantId, [table]);
    if (!tx.changed) {
      const changed = (tx.changed = new Set());
      // first of the after-commit work, ahead of hooks that may take their time
      tx.afterCommit.unshift(async () => changes.changed(ctx.tenantId, changed));
    }
    tx.changed.add(table);
  }

  /** A written value as stored: secrets sealed, decimals normalised. */
  #stored(f: FieldModel, value: unknown): unknown {
    if (!f.secret || typeof value !== 'string') return storedValue(f, value);
    if (!this.#secrets) throw new Error(`${this.model.name}.${f.name} is secret, but no SecretBox was given`);
    return this.#secrets.encrypt(value);
  }

  /**
   * 409 while rows that restrict deletion still point at this one, checked
   * here rather than left to the foreign key: PostgreSQL 17+ (and PGlite)
   * report RESTRICT as SQLSTATE 23001, which the driver maps to no known
   * exception. Counting under the row lock cannot race: a concurrent insert's
   * key check waits for it. Rows of every company count, as the key does.
   */
  async #assertUnreferenced(ctx: CrudContext, id: string): Promise<void> {
    const referencing = async (other: EntityModel, column: string, self: boolean) => {
      // a row pointing at itself goes with it
      const p = this.params(ctx);
      const at = p.add(id);
      const sql = `select 1 from ${p.table(other.table)} where ${q(column)} = ${at}${self ? ` and "id" <> ${at}` : ''} limit 1`;
      return (await run(ctx.em, sql, p.values)).length > 0;
    };
    for (const other of this.#models.values()) {
      for (const f of other.refs) {
        if (f.entity !== this.model.name || (f.onDelete ?? 'restrict') !== 'restrict') continue;
        if (await referencing(other, f.column, other === this.model)) {
          throw httpError('CONFLICT', `${other.name} rows still reference this ${this.model.name} through ${f.name}`);
        }
      }
    }
    // company-scoped rows belong to their company through companyId, a column with no foreign key
    if (this.model.name !== COMPANY_ENTITY) return;
    for (const other of this.#models.values()) {
      if (other.scope === 'company' && (await referencing(other, 'company_id', false))) {
        throw httpError('CONFLICT', `${other.name} rows still belong to this ${this.model.name}`);
      }
    }
  }

  /**
   * Decimal bounds, and references: each must point at a row the caller can
   * read (another company's row, or one their grant conditions hide, is as
   * unknown as none).
   */
  async #check(ctx: CrudContext, body: Record<string, unknown>): Promise<void> {
    const errors: FieldError[] = decimalBoundErrors(this.model, body);
    if (!errors.length) {
      for (const f of this.model.refs) {
        const id = body[f.name];
        if (typeof id !== 'string') continue;
        const target = this.#models.get(f.entity!)!;
        const scope = this.scope(ctx, 'read', target);
        const found = scope && (await tableOf(target).exists(ctx.em, this.params(ctx), and([matching(target, { id }), scope])));
        if (!found) errors.push({ path: `/${f.name}`, message: `no ${target.name} with id ${id}` });
      }
    }
    if (errors.length) throw httpError('VALIDATION_FAILED', errors.map((e) => `${e.path} ${e.message}`).join('; '), { errors });
  }

  #applyTranslations(ctx: CrudContext, data: Row, stored: Row | undefined, body: Record<string, unknown>, replace: boolean): void {
    const perField = (body.translations ?? {}) as Record<string, Record<string, string | null> | undefined>;
    for (const f of this.model.translatable) {
      const text = body[f.name] as string | null | undefined;
      const map = perField[f.name];
      if (text === undefined && map === undefined && stored) continue;
      // null empties the field in every language (PATCH too: a null that changed nothing
      // would be a silent no-op); PUT's translations object is the whole new map
      data[f.name] = mergeTranslations(stored?.[f.name], text, map, ctx.writeLanguage, text === null || (replace && map !== undefined));
    }
  }

  #requireTranslations(row: Row): void {
    const errors = this.model.translatable
      .filter((f) => f.required && !Object.values(row[f.name] ?? {}).some((t) => typeof t === 'string' && t.length))
      .map((f) => ({ path: `/${f.name}`, message: 'is required in at least one language' }));
    if (errors.length) throw httpError('VALIDATION_FAILED', errors.map((e) => `${e.path} ${e.message}`).join('; '), { errors });
  }
}

/** If-Match: "*" or a list of strong ETags; a mismatch is 412. */
function checkIfMatch(header: string | undefined, version: number): void {
  if (header === undefined) return;
  const tags = header.split(',').map((t) => t.trim());
  if (tags.includes('*') || tags.includes(etag(version))) return;
  throw httpError('PRECONDITION_FAILED', `If-Match ${header} does not match the current version ${etag(version)}`);
}

export const etag = (version: number) => `"${version}"`;
