// Lists: SQL built once per model and sent with bind parameters (filters,
// search, sort, paging), rows mapped straight to the API shape. No managed
// entities, no identity map, no unit of work: reads are the hot path, and the
// ORM's hydration cost several times the query itself (see bench/).
import type { EntityManager } from '@mikro-orm/core';
import { isRangeType, type EntityModel } from '../model/entity-model.ts';
import { httpError } from '../errors.ts';

import { q, run, type Params, type Row } from '../data/sql.ts';
import { columnOf, type Fragment } from '../data/scope.ts';
import { tableOf } from '../data/table.ts';

export interface ListQuery {
  page?: number;
  size?: number;
  sort?: string;
  search?: string;
  [filter: string]: unknown;
}

export class SqlReader {
  readonly model: EntityModel;
  #columns: string;

  constructor(model: EntityModel) {
    this.model = model;
    this.#columns = tableOf(model).columns;
  }

  /** A page of the rows `scope` holds, with the total count. */
  /** `columns`: the select list field rules leave the caller (default: every readable field). */
  async list(em: EntityManager, p: Params, scope: Fragment, query: ListQuery, prefs: string[], columns?: Fragment): Promise<{ rows: Row[]; total: number }> {
    const size = query.size ?? 50;
    const offset = ((query.page ?? 1) - 1) * size;
    const where = [scope(p), ...this.#filters(query, p)].join(' and ');
    const from = `from ${p.table(this.model.table)} t where ${where}`;
    const order = this.#orderBy(query.sort ?? this.model.defaultSort, prefs);
    // the count takes the filter's values only; a field-rule select list adds its own after them
    const filterValues = [...p.values];
    const select = columns?.(p) ?? this.#columns;
    const [rows, count] = await Promise.all([
      run(em, `select ${select} ${from} order by ${order} limit ${size} offset ${offset}`, p.values),
      run(em, `select count(*)::int as "total" ${from}`, filterValues),
    ]);
    return { rows, total: count[0].total as number };
  }

  /** Rows `where` holds, ordered by a sort spec ("name,-createdAt"), at most `limit`. */
  async find(em: EntityManager, p: Params, where: Fragment, orderBy: string, limit: number, prefs: string[], columns?: Fragment): Promise<Row[]> {
    return run(
      em,
      `select ${columns?.(p) ?? this.#columns} from ${p.table(this.model.table)} t where ${where(p)} order by ${this.#orderBy(orderBy, prefs, false)} limit ${Math.trunc(limit)}`,
      p.values,
    );
  }

  #filters(query: ListQuery, p: Params): string[] {
    const out: string[] = [];
    for (const f of this.model.filterable) {
      const col = `t.${q(f.column)}`;
      if (query[f.name] !== undefined) out.push(`${col} = ${p.add(query[f.name])}`);
      if (isRangeType(f.type)) {
        if (query[`${f.name}From`] !== undefined) out.push(`${col} >= ${p.add(query[`${f.name}From`])}`);
        if (query[`${f.name}To`] !== undefined) out.push(`${col} <= ${p.add(query[`${f.name}To`])}`);
      }
    }
    if (query.search) {
      // case-insensitive substring; % _ and \ in the term match themselves
      const pattern = p.add(`%${query.search.replace(/[\\%_]/g, '\\$&')}%`);
      const any = this.model.searchable.map((f) =>
        f.translatable ? `exists (select 1 from jsonb_each_text(t.${q(f.column)}) tr where tr.value ilike ${pattern})` : `t.${q(f.column)} ilike ${pattern}`,
      );
      out.push(`(${any.join(' or ')})`);
    }
    return out;
  }

  /** `api`: only the sortable fields the API offers; module code may sort by any field. */
  #orderBy(sort: string, prefs: string[], api = true): string {
    const order = sort.split(',').map((part) => {
      const desc = part.startsWith('-');
      const name = desc ? part.slice(1) : part;
      if (api ? !this.model.sortable.has(name) : !columnOf(this.model, name)) {
        throw httpError('VALIDATION_FAILED', `cannot sort by "${name}"`, { errors: [{ path: '/sort', message: `sortable fields: ${[...this.model.sortable].join(', ')}` }] });
      }
      const f = this.model.byName.get(name);
      return `${f?.translatable ? displayedText(`t.${q(f.column)}`, prefs) : `t.${q(columnOf(this.model, name)!)}`} ${desc ? 'desc' : 'asc'}`;
    });
    return [...order, 't."id" asc'].join(', ');
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
  const first = `(select tr.value from jsonb_each_text(${column}) tr order by tr.key collate "C" limit 1)`;
  return `coalesce(${[...langs.map((l) => `${column}->>'${l}'`), first].join(', ')})`;
}
