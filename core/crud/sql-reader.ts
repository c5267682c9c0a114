// Lists: SQL built once per model and sent with bind parameters (filters,
// search, sort, paging), rows mapped straight to the API shape. No managed
// entities, no identity map, no unit of work: reads are the hot path, and the
// ORM's hydration cost several times the query itself (see bench/).
import type { EntityManager } from '@mikro-orm/core';
import type { EntityModel, FieldModel } from '../model/entity-model.ts';
import { httpError } from '../errors.ts';

import { q, run, type Params, type Row } from '../data/sql.ts';
import { sortKeys } from '../model/list-plan.ts';
import { compileFilters, likeLiteral } from './list-filters.ts';
import { afterCursor, decodeCursor, encodeCursor, keyColumns, type OrderKey } from './list-cursor.ts';
import { columnOf, type Fragment } from '../data/scope.ts';
import { tableOf } from '../data/table.ts';

/** A list's query, as a generated list route takes it (docs/api.md, "The API in brief"). */
export interface ListQuery {
  /** the page, counting from 1; not with `cursor` */
  page?: number;
  /** rows per page, 1..1000 */
  size?: number;
  /** comma-separated fields, `-` for descending (`name,-createdAt`); without it the entity's `defaultSort` */
  sort?: string;
  /** text matched against the entity's fields marked `"search": true` */
  search?: string;
  /** a page's `nextCursor`: the rows after it, in the same sort and filters */
  cursor?: string;
  /** filters on the manifest's filterable fields: `<field>` or `<field>[<op>]` (`price[gte]`) to a value */
  [filter: string]: unknown;
}

/** A field's value as field rules leave it to the caller (null where hidden); undefined: the plain column. */
export type Limited = (f: FieldModel) => Fragment | undefined;

export interface ListResult {
  rows: Row[];
  total: number;
  /** the cursor of the page after this one; null at the end */
  nextCursor: string | null;
}

export class SqlReader {
  readonly model: EntityModel;
  #columns: string;

  constructor(model: EntityModel) {
    this.model = model;
    this.#columns = tableOf(model).columns;
  }

  /**
   * A page of the rows `scope` holds, with the total count: by `page` (offset)
   * or after `cursor` (keyset). `columns`: the select list field rules leave
   * the caller (default: every readable field); `limited`: what a field rule
   * leaves the caller of a field, which filters and sorts use in its place.
   */
  async list(em: EntityManager, p: Params, scope: Fragment, query: ListQuery, prefs: string[], columns?: Fragment, limited?: Limited): Promise<ListResult> {
    if (query.cursor !== undefined && query.page !== undefined) {
      throw httpError('VALIDATION_FAILED', 'page and cursor exclude each other', { errors: [{ path: '/cursor', message: 'send either page or cursor' }] });
    }
    const size = query.size ?? 50;
    const sort = query.sort ?? this.model.defaultSort;
    const base = (f: FieldModel) => limited?.(f)?.(p) ?? `t.${q(f.column)}`;
    const where = [scope(p), ...this.#filters(query, p, prefs, base)].join(' and ');
    const from = `from ${p.table(this.model.table)} t where ${where}`;
    // the count takes the filter's values only; the sort keys, the cursor and a field-rule select list add theirs after them
    const filterValues = [...p.values];
    const keys = this.#orderKeys(sort, prefs, base);
    const after = query.cursor !== undefined ? decodeCursor(query.cursor, sort, keys) : undefined;
    const offset = after ? 0 : ((query.page ?? 1) - 1) * size;
    const window = after ? ` and ${afterCursor(keys, after, p)}` : '';
    const select = `${columns?.(p) ?? this.#columns}, ${keyColumns(keys)}`;
    const order = [...keys.map((k) => `${k.expr} ${k.desc ? 'desc' : 'asc'}`), 't."id" asc'].join(', ');
    // one row beyond the page says whether a cursor page has a next one
    const [rows, count] = await Promise.all([
      run(em, `select ${select} ${from}${window} order by ${order} limit ${after ? size + 1 : size} offset ${offset}`, p.values),
      run(em, `select count(*)::int as "total" ${from}`, filterValues),
    ]);
    const total = count[0].total as number;
    const more = after ? rows.length > size : offset + rows.length < total;
    if (rows.length > size) rows.length = size;
    return { rows, total, nextCursor: more && rows.length ? encodeCursor(sort, keys, rows[rows.length - 1]) : null };
  }

  /** Rows `where` holds, ordered by a sort spec ("name,-createdAt"), at most `limit`. */
  async find(em: EntityManager, p: Params, where: Fragment, orderBy: string, limit: number, prefs: string[], columns?: Fragment): Promise<Row[]> {
    return run(
      em,
      `select ${columns?.(p) ?? this.#columns} from ${p.table(this.model.table)} t where ${where(p)} order by ${this.#orderBy(orderBy, prefs, false)} limit ${Math.trunc(limit)}`,
      p.values,
    );
  }

  #filters(query: ListQuery, p: Params, prefs: string[], base: (f: FieldModel) => string): string[] {
    // a translatable field filters on the text the reader sees, as it sorts
    const out = compileFilters(this.model, query, p, (f) => (f.translatable ? displayedText(base(f), prefs) : base(f)));
    if (query.search) {
      // case-insensitive substring; % _ and \ in the term match themselves
      const pattern = p.add(`%${likeLiteral(query.search)}%`);
      const any = this.model.searchable.map((f) =>
        f.translatable ? `exists (select 1 from jsonb_each_text(t.${q(f.column)}) tr where tr.value ilike ${pattern})` : `t.${q(f.column)} ilike ${pattern}`,
      );
      out.push(`(${any.join(' or ')})`);
    }
    return out;
  }

  /** The keys of a list sort (only the sortable fields the API offers), each with its exact value for a cursor. */
  #orderKeys(sort: string, prefs: string[], base: (f: FieldModel) => string): OrderKey[] {
    return sortKeys(sort).map(({ field: name, desc }) => {
      if (!this.model.sortable.has(name)) {
        throw httpError('VALIDATION_FAILED', `cannot sort by "${name}"`, { errors: [{ path: '/sort', message: `sortable fields: ${[...this.model.sortable].join(', ')}` }] });
      }
      const f = this.model.byName.get(name);
      const col = f ? base(f) : `t.${q(columnOf(this.model, name)!)}`;
      const expr = f?.translatable ? displayedText(col, prefs) : col;
      const type = f?.type ?? 'datetime';
      // an enum sorts in the order its values are declared (low, normal, high), the cursor keeping the value itself
      if (type === 'enum') return { expr: enumRank(col, f!.values!), desc, field: f, exact: col, bind: (v: unknown) => f!.values!.indexOf(v as string) + 1 };
      const exact = type === 'datetime' ? exactInstant(col) : type === 'date' ? `to_char(${col}, 'YYYY-MM-DD')` : type === 'decimal' ? `${col}::text` : expr;
      return { expr, desc, field: f, exact };
    });
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
      const col = `t.${q(columnOf(this.model, name)!)}`;
      const expr = f?.translatable ? displayedText(col, prefs) : f?.type === 'enum' ? enumRank(col, f.values!) : col;
      return `${expr} ${desc ? 'desc' : 'asc'}`;
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
function displayedText(column: string, prefs: string[]): string {
  // prefs are language tags (parseAcceptLanguage and the tenant default only yield
  // [A-Za-z0-9-]); the filter keeps that true for any future caller
  const langs = prefs.map((l) => l.replace(/[^a-zA-Z0-9-]/g, '')).filter(Boolean);
  const first = `(select tr.value from jsonb_each_text(${column}) tr order by tr.key collate "C" limit 1)`;
  return `coalesce(${[...langs.map((l) => `${column}->>'${l}'`), first].join(', ')})`;
}

/** An enum value's place among its declared values (1, 2, …; null without a value): enums sort in declaration order. */
function enumRank(column: string, values: string[]): string {
  // values come from a validated manifest; quoted as SQL literals all the same
  return `array_position(array[${values.map((v) => `'${v.replaceAll("'", "''")}'`).join(', ')}]::text[], ${column}::text)`;
}

/** An instant to the microsecond, as a cursor keeps it (the API shows milliseconds). */
const exactInstant = (col: string) => `to_char(${col} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
