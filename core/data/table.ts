// The statements of one entity's table, built once per model from one column
// mapping: the API-shaped select list every read and write returns, and the
// insert, update, delete and row lock of the write path. Scopes (data/scope.ts)
// are passed in as fragments; the table itself knows no access rule.
import { v7 as uuidv7 } from 'uuid';
import type { EntityModel } from '../model/entity-model.ts';
import { iso, q, run, type Params, type Row } from './sql.ts';
import { and, TRUE, type Fragment } from './scope.ts';
import type { EntityManager } from '@mikro-orm/core';

interface Column {
  column: string;
  json: boolean;
}

/** Extra boolean columns a statement returns, e.g. { may: <update scope> } → row[FLAGS].may */
export type Flags = Record<string, Fragment>;
/** How a write runs besides its data. */
export interface WriteOpts {
  /** boolean columns the write returns, e.g. whether the row stays in the caller's reach */
  flags?: Flags;
  /** the select list the caller may see (data/field-access.ts); default every readable field */
  columns?: Fragment;
  /** the ISO instant the row is stamped with (created/updated at); default now */
  now?: string;
  /** a data-modifying statement run with the write, in the same round trip (its outbox row) */
  with?: Fragment;
}

/** Where a row holds its flags: a symbol, so they never show in the row's fields. */
export const FLAGS = Symbol('flags');

const tables = new WeakMap<EntityModel, Table>();

/** The Table of a model, built on first use. */
export function tableOf(model: EntityModel): Table {
  let table = tables.get(model);
  if (!table) tables.set(model, (table = new Table(model)));
  return table;
}

export class Table {
  readonly model: EntityModel;
  /** the API shape: secret fields never leave the database, timestamps as ISO text, dates as YYYY-MM-DD */
  readonly columns: string;
  /** the select list around the readable fields: id (and companyId) before, timestamps and version after */
  readonly head: string;
  readonly tail: string;
  /** each readable field's expression in the API shape */
  readonly fieldExpressions: Map<string, string>;
  #writable: Map<string, Column>;

  constructor(model: EntityModel) {
    this.model = model;
    this.head = model.scope === 'company' ? 't."id", t."company_id" as "companyId"' : 't."id"';
    this.fieldExpressions = new Map(
      model.readable.map((f) => {
        const col = `t.${q(f.column)}`;
        return [f.name, f.type === 'datetime' ? iso(col) : f.type === 'date' ? `to_char(${col}, 'YYYY-MM-DD')` : col];
      }),
    );
    this.tail = `${iso('t."created_at"')} as "createdAt", ${iso('t."updated_at"')} as "updatedAt", t."version"`;
    this.columns = [this.head, ...[...this.fieldExpressions].map(([name, expr]) => `${expr} as ${q(name)}`), this.tail].join(', ');
    this.#writable = new Map(model.storedFields.map((f) => [f.name, { column: f.column, json: f.type === 'json' || f.translatable === true }]));
    if (model.scope === 'company') this.#writable.set('companyId', { column: 'company_id', json: false });
  }

  /** The row `id` where `where` holds; `lock` takes its row lock for the transaction ('share': a lock writers of the row wait for, not other sharers). */
  async byId(em: EntityManager, p: Params, id: string, where: Fragment, opts: { lock?: boolean | 'share'; flags?: Flags; columns?: Fragment } = {}): Promise<Row | null> {
    const lock = opts.lock === 'share' ? ' for share of t' : opts.lock ? ' for update of t' : '';
    const sql = `select ${opts.columns?.(p) ?? this.columns}${this.#flags(p, opts.flags)} from ${p.table(this.model.table)} t where t."id" = ${p.add(id)} and ${where(p)}${lock}`;
    return this.#unflag((await run(em, sql, p.values))[0] ?? null);
  }

  /** Whether a row holds `where`. */
  async exists(em: EntityManager, p: Params, where: Fragment): Promise<boolean> {
    const rows = await run(em, `select 1 from ${p.table(this.model.table)} t where ${where(p)} limit 1`, p.values);
    return rows.length > 0;
  }

  async count(em: EntityManager, p: Params, where: Fragment): Promise<number> {
    const rows = await run(em, `select count(*)::int as "n" from ${p.table(this.model.table)} t where ${where(p)}`, p.values);
    return rows[0].n as number;
  }

  /** Inserts `data` (an id is made unless it has one) stamped `opts.now`. */
  async insert(em: EntityManager, p: Params, data: Row, opts: WriteOpts = {}): Promise<Row> {
    const now = opts.now ?? new Date().toISOString();
    const names = ['"id"', '"created_at"', '"updated_at"', '"version"'];
    const values = [p.add(data.id ?? uuidv7()), p.add(now), p.add(now), '1'];
    for (const [name, value] of Object.entries(data)) {
      const col = this.#writable.get(name);
      if (!col || value === undefined) continue;
      names.push(q(col.column));
      values.push(this.#value(p, col, value));
    }
    const sql = `${this.#with(p, opts)}insert into ${p.table(this.model.table)} as t (${names.join(', ')}) values (${values.join(', ')}) returning ${opts.columns?.(p) ?? this.columns}${this.#flags(p, opts.flags)}`;
    return this.#unflag((await run(em, sql, p.values))[0])!;
  }

  /** Sets `data`, bumps the version; null when no row `id` holds `where`. */
  async update(em: EntityManager, p: Params, id: string, data: Row, opts: WriteOpts & { where?: Fragment } = {}): Promise<Row | null> {
    const sets = [`"version" = t."version" + 1`, `"updated_at" = ${p.add(opts.now ?? new Date().toISOString())}`];
    for (const [name, value] of Object.entries(data)) {
      const col = this.#writable.get(name);
      if (col && value !== undefined) sets.push(`${q(col.column)} = ${this.#value(p, col, value)}`);
    }
    const where = and([(x) => `t."id" = ${x.add(id)}`, opts.where ?? TRUE]);
    const sql = `${this.#with(p, opts)}update ${p.table(this.model.table)} as t set ${sets.join(', ')} where ${where(p)} returning ${opts.columns?.(p) ?? this.columns}${this.#flags(p, opts.flags)}`;
    return this.#unflag((await run(em, sql, p.values))[0] ?? null);
  }

  /**
   * Sets `data` on the first row, in `order` (SQL over alias t), where
   * `where` holds, skipping rows another transaction holds locked (a work
   * queue's claim: concurrent claimers never take the same row, and never
   * wait for each other); bumps the version. Null when no row is free.
   */
  async claim(em: EntityManager, p: Params, where: Fragment, order: string, data: Row, opts: WriteOpts = {}): Promise<Row | null> {
    const sets = [`"version" = t."version" + 1`, `"updated_at" = ${p.add(opts.now ?? new Date().toISOString())}`];
    for (const [name, value] of Object.entries(data)) {
      const col = this.#writable.get(name);
      if (col && value !== undefined) sets.push(`${q(col.column)} = ${this.#value(p, col, value)}`);
    }
    const table = p.table(this.model.table);
    const picked = `select t."id" from ${table} t where ${where(p)} order by ${order} limit 1 for update of t skip locked`;
    const sql = `update ${table} as t set ${sets.join(', ')} from (${picked}) as "picked" where t."id" = "picked"."id" returning ${opts.columns?.(p) ?? this.columns}`;
    return (await run(em, sql, p.values))[0] ?? null;
  }

  async delete(em: EntityManager, p: Params, id: string, opts: Pick<WriteOpts, 'with'> = {}): Promise<void> {
    await run(em, `${this.#with(p, opts)}delete from ${p.table(this.model.table)} t where t."id" = ${p.add(id)}`, p.values);
  }

  /** The write's companion statement as a CTE: PostgreSQL runs it once, in the same statement. */
  #with(p: Params, opts: Pick<WriteOpts, 'with'>): string {
    return opts.with ? `with "companion" as (${opts.with(p)}) ` : '';
  }

  #value(p: Params, col: Column, value: unknown): string {
    // node-postgres sends a JS array as a PostgreSQL array: JSON documents go as text;
    // instants as ISO text (the column's type reads it), whatever the process's time zone
    if (col.json) return `${p.add(value === null ? null : JSON.stringify(value))}::jsonb`;
    return p.add(value instanceof Date ? value.toISOString() : value);
  }

  #flags(p: Params, flags?: Flags): string {
    if (!flags) return '';
    return Object.entries(flags)
      .map(([name, f]) => `, (${f(p)}) as ${q(`$${name}`)}`)
      .join('');
  }

  /** Flags move from the row's columns to row[FLAGS], so a row is only its fields. */
  #unflag(row: Row | null): Row | null {
    if (!row) return row;
    let flags: Row | undefined;
    for (const key of Object.keys(row)) {
      if (!key.startsWith('$')) continue;
      (flags ??= {})[key.slice(1)] = row[key];
      delete row[key];
    }
    if (flags) (row as Record<symbol, unknown>)[FLAGS] = flags;
    return row;
  }
}
