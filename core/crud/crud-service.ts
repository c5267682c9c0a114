// Generic CRUD over one entity model, inside the caller's tenant schema
// (request.em), company and ability. Reads only ever see rows the company
// scope and the ability's conditions allow; writes lock the row, honour
// If-Match and the optimistic-lock version, so no write is silently lost.
import { LockMode, type EntityManager } from '@mikro-orm/core';
import { subject as asSubject } from '@casl/ability';
import { COMPANY_ENTITY, type EntityModel, type FieldModel } from '../model/entity-model.ts';
import type { SecretBox } from '../secrets.ts';
import { accessFilter, type Ability } from '../access/abilities.ts';
import { httpError, type FieldError } from '../errors.ts';
import { SqlReader } from './sql-reader.ts';
import { forMikroOrm } from './null-semantics.ts';
import { mergeTranslations, rowMapper, storedValue, type Dto, type ReadOptions, type Row } from './row-mapper.ts';
import { decimalBoundErrors, referenceErrors } from './body-checks.ts';
import type { Translations } from '../i18n.ts';
import { formatRounded } from './decimal.ts';
import { comparable, computeFormulas, diff, fitting, parseSum, type Changes } from './derived.ts';

export interface CrudContext {
  em: EntityManager;
  /** the tenant's schema, for the SQL read path */
  schema: string;
  ability: Ability;
  companyId: string | null;
  read: ReadOptions;
  /** language a plain-string write of a translatable field is stored under */
  writeLanguage: string;
  /** the caller, recorded by the audit trail */
  userId?: string | null;
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
  /** runs inside the transaction once the write's statements are sent, before commit; throwing rolls it back */
  inTransaction?: InTransaction;
}
/** The row's API-visible values around the write: `before` null on create, `after` null on delete. */
export type InTransaction = (em: EntityManager, change: { id: string; before: Row | null; after: Row | null }) => Promise<void>;
export type { Changes };

export interface ListQuery { page?: number; size?: number; sort?: string; search?: string; [filter: string]: unknown }
export interface Page { items: Dto[]; page: number; size: number; total: number }

type Where = Record<string, unknown>;

export class CrudService {
  readonly model: EntityModel;
  readonly toDto: ReturnType<typeof rowMapper>;
  #models: Map<string, EntityModel>;
  #reader: SqlReader;
  #secrets?: SecretBox;
  #writable: Set<string>;

  constructor(model: EntityModel, models: Map<string, EntityModel>, secrets?: SecretBox) {
    this.model = model;
    this.#models = models;
    this.#secrets = secrets;
    this.toDto = rowMapper(model);
    this.#reader = new SqlReader(model);
    this.#writable = new Set(model.writable.map((f) => f.name));
  }

  /** Company scope ∧ the ability's conditions for the action; null when no row can qualify. */
  scopeFilter(ctx: CrudContext, action: string): Where | null {
    const access = accessFilter(ctx.ability, action, this.model.name);
    if (access === null) return null;
    const parts: Where[] = [];
    if (this.model.scope === 'company') parts.push({ companyId: ctx.companyId });
    if (Object.keys(access).length) parts.push(access);
    return parts.length === 1 ? parts[0] : { $and: parts };
  }

  /** `within` narrows the list further, e.g. { companyId } of a sub-resource path. */
  async list(ctx: CrudContext, q: ListQuery, languagesUsed?: Set<string>, within?: Where): Promise<Page> {
    const page = q.page ?? 1;
    const size = q.size ?? 50;
    const allowed = this.scopeFilter(ctx, 'read');
    if (allowed === null) return { items: [], page, size, total: 0 };
    const scope = within ? { $and: [allowed, within] } : allowed;
    const { rows, total } = await this.#reader.list(ctx.em, ctx.schema, scope, q, ctx.read.prefs);
    return { items: rows.map((r) => this.toDto(r, ctx.read, languagesUsed)), page, size, total };
  }

  async read(ctx: CrudContext, id: string, bound?: Bound): Promise<Row> {
    const allowed = this.scopeFilter(ctx, 'read');
    const scope = allowed && bound ? { $and: [allowed, bound] } : allowed;
    const row = scope && await this.#reader.byId(ctx.em, ctx.schema, scope, id);
    if (!row) throw httpError('NOT_FOUND', `${this.model.name} ${id} does not exist`);
    return row;
  }

  /** `internal`: values of fields the API never writes (a password hash), set by a module's handler. */
  async create(ctx: CrudContext, body: Record<string, unknown>, internal: Row = {}, bound: Bound = {}, opts: WriteOptions = {}): Promise<Row> {
    await this.#check(ctx, body);
    return ctx.em.transactional(async (em) => {
      const data: Row = {};
      for (const f of this.model.fields) {
        if (f.translatable) continue;
        if (bound[f.name] !== undefined) data[f.name] = bound[f.name];
        else if (this.#writable.has(f.name) && body[f.name] !== undefined) data[f.name] = this.#stored(f, body[f.name]);
        else if (f.default !== undefined) data[f.name] = storedValue(f, f.default);
      }
      Object.assign(data, internal);
      this.#applyTranslations(ctx, data, undefined, body, false);
      this.#requireTranslations(data);
      computeFormulas(this.model, data);
      if (this.model.scope === 'company') data.companyId = ctx.companyId;
      const tr = this.model.transitions;
      if (tr && !tr.initial.includes(data[tr.field])) throw httpError('INVALID_TRANSITION', `a ${this.model.name} starts as ${tr.initial.join(' or ')}, not ${data[tr.field]}`);
      if (tr?.reserved?.includes(data[tr.field]) && !opts.system) throw httpError('INVALID_TRANSITION', `only the module moves a ${this.model.name} to ${data[tr.field]}`);
      if (!ctx.ability.can('create', asSubject(this.model.name, { ...data }))) throw httpError('FORBIDDEN', `not allowed to create this ${this.model.name}`);
      const parents = await this.#lockParents(em, ctx, data);
      const row = em.create(this.model.schema, data as never) as Row;
      this.audit(em, ctx, 'create', row.id, diff({}, this.#snapshot(row)));
      await em.flush();
      await this.#rollUp(em, ctx, parents);
      await this.#inTransaction(em, opts, row.id, null, row);
      return row;
    });
  }

  async update(ctx: CrudContext, id: string, body: Record<string, unknown>, opts: WriteOptions & { ifMatch?: string; replace: boolean }, bound?: Bound): Promise<Row> {
    await this.#check(ctx, body);
    return ctx.em.transactional(async (em) => {
      const row = await this.#load(em, ctx, id, true, bound);
      checkIfMatch(opts.ifMatch, row.version);
      this.#assertCan(ctx, 'update', row);
      const before = this.#snapshot(row);
      const parents = await this.#lockParents(em, ctx, row);
      const data: Row = {};
      for (const f of this.model.writable) if (!f.translatable && body[f.name] !== undefined) data[f.name] = this.#stored(f, body[f.name]);
      this.#applyTranslations(ctx, data, row, body, opts.replace);
      Object.assign(data, opts.set ?? {});
      em.assign(row, data);
      computeFormulas(this.model, row);
      this.#requireTranslations(row);
      this.#assertCan(ctx, 'update', row);
      const changes = diff(before, this.#snapshot(row));
      this.#checkTransition(before, row, changes, opts);
      if (Object.keys(changes).length) this.audit(em, ctx, opts.auditAction ?? 'update', id, changes);
      await em.flush();
      await this.#rollUp(em, ctx, parents);
      await this.#inTransaction(em, opts, id, before, row);
      return row;
    });
  }

  async remove(ctx: CrudContext, id: string, ifMatch?: string, bound?: Bound, opts: Pick<WriteOptions, 'inTransaction'> = {}): Promise<void> {
    await ctx.em.transactional(async (em) => {
      const row = await this.#load(em, ctx, id, true, bound);
      checkIfMatch(ifMatch, row.version);
      this.#assertCan(ctx, 'delete', row);
      const tr = this.model.transitions;
      if (tr?.lockedIn?.includes(row[tr.field])) throw httpError('STATE_LOCKED', `a ${this.model.name} in state ${row[tr.field]} cannot be deleted`);
      const parents = await this.#lockParents(em, ctx, row);
      await this.#assertUnreferenced(em, id);
      const before = this.#snapshot(row);
      this.audit(em, ctx, 'delete', id, diff(before, {}));
      em.remove(row);
      await em.flush();
      await this.#rollUp(em, ctx, parents);
      await this.#inTransaction(em, opts, id, before, null);
    });
  }

  /** The caller's in-transaction rule, after the write's statements (its queries see them); what it changes is flushed too. */
  async #inTransaction(em: EntityManager, opts: Pick<WriteOptions, 'inTransaction'>, id: string, before: Row | null, after: Row | null): Promise<void> {
    if (!opts.inTransaction) return;
    await opts.inTransaction(em, { id, before, after: after && this.#snapshot(after) });
    await em.flush();
  }

  /** Queues an audit record of this write in `em` (flushed with it), when the entity is audited. */
  audit(em: EntityManager, ctx: CrudContext, action: string, id: string, changes: Changes): void {
    if (!this.model.auditLog) return;
    const log = this.#models.get(this.model.auditLog)!;
    const data: Row = { entity: this.model.name, entityId: id, action, userId: ctx.userId ?? null, changes, at: new Date() };
    if (log.scope === 'company') data.companyId = ctx.companyId;
    em.create(log.schema, data as never);
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
  async #lockParents(em: EntityManager, ctx: CrudContext, row: Row): Promise<{ model: EntityModel; row: Row }[]> {
    const out: { model: EntityModel; row: Row }[] = [];
    const refs = new Set([...this.model.pathBound.map((f) => f.name), ...this.model.feeds.map((r) => r.by)]);
    for (const name of refs) {
      const id = row[name];
      if (typeof id !== 'string') continue;
      const model = this.#models.get(this.model.byName.get(name)!.entity!)!;
      const where: Where = { id };
      if (model.scope === 'company') where.companyId = ctx.companyId;
      const parent = await em.findOne(model.schema, where as never, { lockMode: LockMode.PESSIMISTIC_WRITE }) as Row | null;
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
  async #rollUp(em: EntityManager, ctx: CrudContext, parents: { model: EntityModel; row: Row }[]): Promise<void> {
    let changed = false;
    for (const { model, row } of parents) {
      const data: Row = {};
      for (const r of model.rollups.filter((x) => x.child === this.model.name)) {
        const sql = `select coalesce(sum("${r.summed.column}"), 0)::text as "total" from "${ctx.schema}"."${this.model.table}" where "${this.model.byName.get(r.by)!.column}" = ?`;
        const [res] = await em.getConnection().execute(sql, [row.id], 'all', em.getTransactionContext()) as { total: string }[];
        data[r.field.name] = fitting(r.field, formatRounded(parseSum(res.total), r.field.scale ?? 2));
      }
      if (!Object.keys(data).length) continue;
      em.assign(row, data);
      computeFormulas(model, row);
      changed = true;
    }
    if (changed) await em.flush();
  }

  /** A written value as stored: secrets sealed, decimals normalised. */
  #stored(f: FieldModel, value: unknown): unknown {
    if (!f.secret || typeof value !== 'string') return storedValue(f, value);
    if (!this.#secrets) throw new Error(`${this.model.name}.${f.name} is secret, but no SecretBox was given`);
    return this.#secrets.encrypt(value);
  }

  async #load(em: EntityManager, ctx: CrudContext, id: string, forUpdate: boolean, bound?: Bound): Promise<Row> {
    const scope = this.scopeFilter(ctx, 'read');
    const row = scope && await em.findOne(this.model.schema, { $and: [{ id }, forMikroOrm(scope), ...(bound ? [bound] : [])] } as never,
      forUpdate ? { lockMode: LockMode.PESSIMISTIC_WRITE } : {}) as Row | null;
    if (!row) throw httpError('NOT_FOUND', `${this.model.name} ${id} does not exist`);
    return row;
  }

  /**
   * 409 while rows that restrict deletion still point at this one, checked
   * here rather than left to the foreign key: PostgreSQL 17+ (and PGlite)
   * report RESTRICT as SQLSTATE 23001, which the driver maps to no known
   * exception. Counting under the row lock cannot race: a concurrent insert's
   * key check waits for it. Rows of every company count, as the key does.
   */
  async #assertUnreferenced(em: EntityManager, id: string): Promise<void> {
    for (const other of this.#models.values()) {
      for (const f of other.refs) {
        if (f.entity !== this.model.name || (f.onDelete ?? 'restrict') !== 'restrict') continue;
        // a row pointing at itself goes with it
        const where = other === this.model ? { [f.name]: id, id: { $ne: id } } : { [f.name]: id };
        if (await em.count(other.schema, where) > 0) {
          throw httpError('CONFLICT', `${other.name} rows still reference this ${this.model.name} through ${f.name}`);
        }
      }
    }
    // company-scoped rows belong to their company through companyId, a column with no foreign key
    if (this.model.name !== COMPANY_ENTITY) return;
    for (const other of this.#models.values()) {
      if (other.scope === 'company' && await em.count(other.schema, { companyId: id }) > 0) {
        throw httpError('CONFLICT', `${other.name} rows still belong to this ${this.model.name}`);
      }
    }
  }

  #assertCan(ctx: CrudContext, action: string, row: Row): void {
    if (!ctx.ability.can(action, asSubject(this.model.name, { ...row }))) throw httpError('FORBIDDEN', `not allowed to ${action} this ${this.model.name}`);
  }

  async #check(ctx: CrudContext, body: Record<string, unknown>): Promise<void> {
    const errors: FieldError[] = decimalBoundErrors(this.model, body);
    if (!errors.length) errors.push(...await referenceErrors(ctx.em, this.model, this.#models, body, ctx.companyId));
    if (errors.length) throw httpError('VALIDATION_FAILED', errors.map((e) => `${e.path} ${e.message}`).join('; '), { errors });
  }

  #applyTranslations(ctx: CrudContext, data: Row, stored: Row | undefined, body: Record<string, unknown>, replace: boolean): void {
    const perField = (body.translations ?? {}) as Record<string, Translations | undefined>;
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
    const errors = this.model.translatable.filter((f) => f.required && !Object.values(row[f.name] ?? {}).some((t) => typeof t === 'string' && t.length))
      .map((f) => ({ path: `/${f.name}`, message: 'is required in at least one language' }));
    if (errors.length) throw httpError('VALIDATION_FAILED', errors.map((e) => `${e.path} ${e.message}`).join('; '), { errors });
  }
}

/** If-Match: "*" or a list of strong ETags; a mismatch is 412. */
export function checkIfMatch(header: string | undefined, version: number): void {
  if (header === undefined) return;
  const tags = header.split(',').map((t) => t.trim());
  if (tags.includes('*') || tags.includes(etag(version))) return;
  throw httpError('PRECONDITION_FAILED', `If-Match ${header} does not match the current version ${etag(version)}`);
}

export const etag = (version: number) => `"${version}"`;
