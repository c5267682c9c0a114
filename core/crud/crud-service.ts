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
import { mergeTranslations, rowMapper, storedValue, type Dto, type ReadOptions, type Row } from './row-mapper.ts';
import { decimalBoundErrors, referenceErrors, storableErrors } from './body-checks.ts';
import type { Translations } from '../i18n.ts';

export interface CrudContext {
  em: EntityManager;
  /** the tenant's schema, for the SQL read path */
  schema: string;
  ability: Ability;
  companyId: string | null;
  read: ReadOptions;
  /** language a plain-string write of a translatable field is stored under */
  writeLanguage: string;
}

export interface ListQuery { page?: number; size?: number; sort?: string; search?: string; [filter: string]: unknown }
export interface Page { items: Dto[]; page: number; size: number; total: number }

type Where = Record<string, unknown>;

export class CrudService {
  readonly model: EntityModel;
  readonly toDto: ReturnType<typeof rowMapper>;
  #models: Map<string, EntityModel>;
  #reader: SqlReader;
  #secrets?: SecretBox;

  constructor(model: EntityModel, models: Map<string, EntityModel>, secrets?: SecretBox) {
    this.model = model;
    this.#models = models;
    this.#secrets = secrets;
    this.toDto = rowMapper(model);
    this.#reader = new SqlReader(model);
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

  async read(ctx: CrudContext, id: string): Promise<Row> {
    const scope = this.scopeFilter(ctx, 'read');
    const row = scope && await this.#reader.byId(ctx.em, ctx.schema, scope, id);
    if (!row) throw httpError('NOT_FOUND', `${this.model.name} ${id} does not exist`);
    return row;
  }

  /** `internal`: values of fields the API never writes (a password hash), set by a module's handler. */
  async create(ctx: CrudContext, body: Record<string, unknown>, internal: Row = {}): Promise<Row> {
    await this.#check(ctx, body);
    const data: Row = {};
    for (const f of this.model.fields) {
      if (f.translatable) continue;
      if (!f.readOnly && body[f.name] !== undefined) data[f.name] = this.#stored(f, body[f.name]);
      else if (f.default !== undefined) data[f.name] = storedValue(f, f.default);
    }
    Object.assign(data, internal);
    this.#applyTranslations(ctx, data, undefined, body, false);
    this.#requireTranslations(data);
    if (this.model.scope === 'company') data.companyId = ctx.companyId;
    if (!ctx.ability.can('create', asSubject(this.model.name, { ...data }))) throw httpError('FORBIDDEN', `not allowed to create this ${this.model.name}`);
    const row = ctx.em.create(this.model.schema, data as never) as Row;
    await ctx.em.flush();
    return row;
  }

  async update(ctx: CrudContext, id: string, body: Record<string, unknown>, opts: { ifMatch?: string; replace: boolean }): Promise<Row> {
    await this.#check(ctx, body);
    return ctx.em.transactional(async (em) => {
      const row = await this.#load(em, ctx, id, true);
      checkIfMatch(opts.ifMatch, row.version);
      this.#assertCan(ctx, 'update', row);
      const data: Row = {};
      for (const f of this.model.writable) if (!f.translatable && body[f.name] !== undefined) data[f.name] = this.#stored(f, body[f.name]);
      this.#applyTranslations(ctx, data, row, body, opts.replace);
      em.assign(row, data);
      this.#requireTranslations(row);
      this.#assertCan(ctx, 'update', row);
      await em.flush();
      return row;
    });
  }

  async remove(ctx: CrudContext, id: string, ifMatch?: string): Promise<void> {
    await ctx.em.transactional(async (em) => {
      const row = await this.#load(em, ctx, id, true);
      checkIfMatch(ifMatch, row.version);
      this.#assertCan(ctx, 'delete', row);
      await this.#assertUnreferenced(em, id);
      em.remove(row);
      await em.flush();
    });
  }

  /** A written value as stored: secrets sealed, decimals normalised. */
  #stored(f: FieldModel, value: unknown): unknown {
    if (!f.secret || typeof value !== 'string') return storedValue(f, value);
    if (!this.#secrets) throw new Error(`${this.model.name}.${f.name} is secret, but no SecretBox was given`);
    return this.#secrets.encrypt(value);
  }

  async #load(em: EntityManager, ctx: CrudContext, id: string, forUpdate: boolean): Promise<Row> {
    const scope = this.scopeFilter(ctx, 'read');
    const row = scope && await em.findOne(this.model.schema, { $and: [{ id }, scope] } as never,
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
    const errors: FieldError[] = [...storableErrors(body), ...decimalBoundErrors(this.model, body)];
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
