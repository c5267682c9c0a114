// The read path: SQL built once per model and sent with bind parameters,
// rows mapped straight to the API shape. No managed entities, no identity map,
// no unit of work: reads are the hot path, and the ORM's hydration cost several
// times the query itself (see bench/). Writes stay on MikroORM.
import { CompiledQuery } from 'kysely';
import type { EntityManager } from '@mikro-orm/core';
import type { EntityModel } from '../model/entity-model.ts';
import { httpError } from '../errors.ts';
import { isRangeType } from '../http/entity-schemas.ts';
import type { Row } from './row-mapper.ts';
import type { ListQuery } from './crud-service.ts';

type Condition = Record<string, unknown>;

const KERNEL_COLUMNS: Record<string, string> = { id: 'id', companyId: 'company_id', createdAt: 'created_at', updatedAt: 'updated_at', version: 'version' };
const OPS: Record<string, string> = { $eq: '=', $ne: 'is distinct from', $gt: '>', $gte: '>=', $lt: '<', $lte: '<=' };
/** timestamptz as Date#toISOString() spells it, so reads and writes answer alike */
const iso = (col: string) => `to_char(${col} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
const q = (name: string) => `"${name}"`;

/** Bind parameters collected while building one statement. */
class Params {
  readonly values: unknown[] = [];
  add(v: unknown): string { this.values.push(v); return `$${this.values.length}`; }
}

export class SqlReader {
  readonly model: EntityModel;
  #columns: string;
  #byColumn: Map<string, string>;

  constructor(model: EntityModel) {
    this.model = model;
    const cols = [`${q('id')}`];
    if (model.scope === 'company') cols.push(`"company_id" as "companyId"`);
    // secret fields are never read back: their ciphertext stays in the database
    for (const f of model.readable) cols.push(f.type === 'datetime' ? `${iso(q(f.column))} as ${q(f.name)}` : `${q(f.column)} as ${q(f.name)}`);
    cols.push(`${iso('"created_at"')} as "createdAt"`, `${iso('"updated_at"')} as "updatedAt"`, '"version"');
    this.#columns = cols.join(', ');
    this.#byColumn = new Map([...Object.entries(KERNEL_COLUMNS), ...model.fields.map((f) => [f.name, f.column] as const)]);
  }

  async byId(em: EntityManager, schema: string, scope: Condition, id: string): Promise<Row | null> {
    const p = new Params();
    const where = `"id" = ${p.add(id)} and ${this.condition(scope, p)}`;
    const rows = await run(em, `select ${this.#columns} from ${q(schema)}.${q(this.model.table)} where ${where}`, p.values);
    return rows[0] ?? null;
  }

  async list(em: EntityManager, schema: string, scope: Condition, query: ListQuery, prefs: string[]): Promise<{ rows: Row[]; total: number }> {
    const size = query.size ?? 50;
    const offset = ((query.page ?? 1) - 1) * size;
    const p = new Params();
    const where = [this.condition(scope, p), ...this.#filters(query, p)].join(' and ');
    const from = `from ${q(schema)}.${q(this.model.table)} where ${where}`;
    const order = this.#orderBy(query.sort ?? this.model.defaultSort, prefs);
    const [rows, count] = await Promise.all([
      run(em, `select ${this.#columns} ${from} order by ${order} limit ${size} offset ${offset}`, p.values),
      run(em, `select count(*)::int as "total" ${from}`, p.values),
    ]);
    return { rows, total: count[0].total as number };
  }

  /** A CASL/MikroORM-style condition ($and $or $not $eq $ne $in $nin $gt $gte $lt $lte) as SQL. */
  condition(cond: Condition, p: Params): string {
    const parts = Object.entries(cond).map(([key, value]) => {
      if (key === '$and' || key === '$or') {
        const list = (value as Condition[]).map((c) => this.condition(c, p));
        return list.length ? `(${list.join(key === '$and' ? ' and ' : ' or ')})` : (key === '$and' ? 'true' : 'false');
      }
      if (key === '$not') return `not (${this.condition(value as Condition, p)})`;
      const column = this.#byColumn.get(key);
      if (!column) throw new Error(`condition on unknown field "${key}" of ${this.model.name}`);
      return this.#compare(q(column), value, p);
    });
    return parts.length ? parts.join(' and ') : 'true';
  }

  #compare(col: string, value: unknown, p: Params): string {
    if (value === null) return `${col} is null`;
    if (typeof value !== 'object' || Array.isArray(value)) return `${col} = ${p.add(value)}`;
    return Object.entries(value as Condition).map(([op, v]) => {
      if (op === '$in') return `${col} = any(${p.add(v)})`;
      // NULL is distinct from every value (see null-semantics.ts)
      if (op === '$nin') return `(${col} is null or not (${col} = any(${p.add(v)})))`;
      if (op === '$eq' && v === null) return `${col} is null`;
      if (op === '$ne' && v === null) return `${col} is not null`;
      if (!OPS[op]) throw new Error(`unsupported operator ${op}`);
      return `${col} ${OPS[op]} ${p.add(v)}`;
    }).join(' and ');
  }

  #filters(query: ListQuery, p: Params): string[] {
    const out: string[] = [];
    for (const f of this.model.filterable) {
      const col = q(f.column);
      if (query[f.name] !== undefined) out.push(`${col} = ${p.add(query[f.name])}`);
      if (isRangeType(f.type)) {
        if (query[`${f.name}From`] !== undefined) out.push(`${col} >= ${p.add(query[`${f.name}From`])}`);
        if (query[`${f.name}To`] !== undefined) out.push(`${col} <= ${p.add(query[`${f.name}To`])}`);
      }
    }
    if (query.search) {
      // case-insensitive substring; % _ and \ in the term match themselves
      const pattern = p.add(`%${query.search.replace(/[\\%_]/g, '\\$&')}%`);
      const any = this.model.searchable.map((f) => (f.translatable
        ? `exists (select 1 from jsonb_each_text(${q(f.column)}) t where t.value ilike ${pattern})`
        : `${q(f.column)} ilike ${pattern}`));
      out.push(`(${any.join(' or ')})`);
    }
    return out;
  }

  #orderBy(sort: string, prefs: string[]): string {
    const order = sort.split(',').map((part) => {
      const desc = part.startsWith('-');
      const name = desc ? part.slice(1) : part;
      if (!this.model.sortable.has(name)) {
        throw httpError('VALIDATION_FAILED', `cannot sort by "${name}"`, { errors: [{ path: '/sort', message: `sortable fields: ${[...this.model.sortable].join(', ')}` }] });
      }
      const f = this.model.byName.get(name);
      return `${f?.translatable ? displayedText(q(f.column), prefs) : q(this.#byColumn.get(name)!)} ${desc ? 'desc' : 'asc'}`;
    });
    return [...order, '"id" asc'].join(', ');
  }
}

/**
 * SQL for the text pick() shows of a translatable column: the first preferred
 * language present, else the alphabetically first one held. Sorting by it orders
 * rows as the reader sees them; sorting by one language alone would put every row
 * lacking it at the end, in id order.
 */
export function displayedText(column: string, prefs: string[]): string {
  // prefs are language tags (parseAcceptLanguage and the tenant default only yield
  // [A-Za-z0-9-]); the filter keeps that true for any future caller
  const langs = prefs.map((l) => l.replace(/[^a-zA-Z0-9-]/g, '')).filter(Boolean);
  const first = `(select t.value from jsonb_each_text(${column}) t order by t.key collate "C" limit 1)`;
  return `coalesce(${[...langs.map((l) => `${column}->>'${l}'`), first].join(', ')})`;
}

async function run(em: EntityManager, sql: string, params: unknown[]): Promise<Row[]> {
  const client = (em.getConnection() as unknown as { getClient(): { executeQuery(q: CompiledQuery): Promise<{ rows: Row[] }> } }).getClient();
  return (await client.executeQuery(CompiledQuery.raw(sql, params))).rows;
}

