// A report run's result as a page shows it, whatever its type: single values
// as facts, an object of counts as a two-column table, a list of rows as a
// table (a nested object's values as columns of their own). Ids of people,
// projects, clients and tasks read as their names, through the API as the
// user (one they may not read stays an id).
import type { PageApi } from '../../core/plugin-api.ts';

/** the page's texts (api.text) */
type Say = PageApi['text'];
import { isUuid, labelOf, when } from './page-support.ts';

/** where an id field's row is read and which console page shows it */
const REFERENCES: Record<string, { api: string; page: string | null; label: string[] }> = {
  assigneeId: { api: '/api/users/', page: null, label: ['name', 'email'] },
  ownerId: { api: '/api/users/', page: null, label: ['name', 'email'] },
  runById: { api: '/api/users/', page: null, label: ['name', 'email'] },
  projectId: { api: '/api/pm/projects/', page: null, label: ['name', 'key'] },
  clientId: { api: '/api/ai/clients/', page: '/ai/clients/', label: ['name'] },
};
/** names looked up for one page at most: each is one read */
const MAX_LOOKUPS = 60;
const ISO_INSTANT = /^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?Z$/;

export interface Cell {
  text: string;
  url?: string | null;
  numeric?: boolean;
  /** the row's header (its first column names the row) */
  header?: boolean;
}

/**
 * A result key as words: its text `result.<key>` where the module has one (a tenant translates it),
 * else derived: "averageDurationMs" → "Average duration ms", "byCategory" → "Category", "assigneeId" → "Assignee"
 */
const wordsOf = (key: string, say: Say): string => say(`result.${key}`, undefined, derivedWords(key));
const derivedWords = (key: string): string =>
  labelOf(
    key
      .replace(/^by(?=[A-Z])/, '')
      .replace(/(?<=[a-z])Id$/, '')
      .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
      .toLowerCase(),
  );

/** id → name for every id a reference field holds anywhere in `value` (and the extra ids given by field). */
export async function referenceNames(api: PageApi, value: unknown, extra: [string, unknown][] = []): Promise<Map<string, string>> {
  const wanted = new Map<string, string>(extra.filter(([field, id]) => REFERENCES[field] && isUuid(id)).map(([field, id]) => [id as string, field]));
  const names = new Map<string, string>();
  const walk = (v: unknown) => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object')
      for (const [k, x] of Object.entries(v)) {
        // a result that names the row beside its id (assigneeName) needs no lookup
        const given = (v as Plain)[nameKey(k)];
        if (REFERENCES[k] && isUuid(x) && typeof given === 'string' && given) names.set(x, given);
        else if (REFERENCES[k] && isUuid(x)) wanted.set(x, k);
        else walk(x);
      }
  };
  walk(value);
  for (const id of names.keys()) wanted.delete(id);
  await Promise.all(
    [...wanted].slice(0, MAX_LOOKUPS).map(async ([id, field]) => {
      const ref = REFERENCES[field];
      const res = await api.get<Record<string, unknown>>(`${ref.api}${id}`);
      const label = res.ok ? ref.label.map((k) => res.body[k]).find((x) => typeof x === 'string' && x) : null;
      if (label) names.set(id, label as string);
    }),
  );
  return names;
}

/** assigneeId → assigneeName: where a result names a reference's row */
const nameKey = (key: string) => key.replace(/Id$/, 'Name');

/** `words`: a lower-case value (low, in_progress, offline) reads as a word ("In progress") */
function cellOf(key: string, value: unknown, names: Map<string, string>, say: Say, words = true): Cell {
  if (value === null || value === undefined) return { text: REFERENCES[key] ? say('common.nobody') : '' };
  if (typeof value === 'number') return { text: String(value), numeric: true };
  if (typeof value === 'boolean') return { text: say(value ? 'common.yes' : 'common.no') };
  if (typeof value === 'string' && REFERENCES[key] && isUuid(value)) {
    const page = REFERENCES[key].page;
    return { text: names.get(value) ?? value, url: page ? `${page}${value}` : null };
  }
  // decimals come as strings ("86.00"): still numbers to align
  if (typeof value === 'string' && /^-?\d+(\.\d+)?$/.test(value)) return { text: value, numeric: true };
  if (typeof value === 'string') return { text: ISO_INSTANT.test(value) ? when(value) : words && /^[a-z][a-z_]*$/.test(value) ? labelOf(value) : value };
  return { text: JSON.stringify(value) };
}

type Plain = Record<string, unknown>;
const isPlain = (v: unknown): v is Plain => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The order of the module's known values (status categories, priorities, job
 * states): the stored result is JSONB, whose objects come back with their keys
 * re-ordered.
 */
const RANK: Record<string, number> = { backlog: 0, todo: 1, in_progress: 2, done: 3, cancelled: 4, queued: 0, leased: 1, failed: 5, dead: 6, low: 0, normal: 1, high: 2, critical: 3 };
/** keys in their known order when every one has a rank, else as they came */
const ranked = (keys: string[]): string[] => (keys.every((k) => k in RANK) ? [...keys].sort((a, b) => RANK[a] - RANK[b]) : keys);

/** a column's place: what names the row first, then people and projects, text, numbers, nested counts */
function columnWeight(key: string, sample: unknown): number {
  if (key === 'title' || key === 'name') return 0;
  if (key === 'number') return 1;
  if (REFERENCES[key]) return 2;
  if (isPlain(sample)) return 5;
  return typeof sample === 'number' ? 4 : 3;
}

/**
 * A list of rows as a table: one column per key (a nested object's keys
 * become columns), no id column; a task's title links to the task, a client's
 * name to the client (whose id column then goes).
 */
function tableOf(key: string, rows: Plain[], names: Map<string, string>, say: Say) {
  const all = new Set(rows.flatMap((r) => Object.keys(r)));
  // a reference's name (assigneeName) is its column's text, not a column of its own
  const named = new Set([...all].filter((k) => REFERENCES[k]).map(nameKey));
  const keys = [...all].filter((k) => k !== 'id' && !named.has(k) && !(k === 'clientId' && rows.some((r) => 'name' in r)));
  const sample = (k: string) => rows.find((r) => r[k] !== null && r[k] !== undefined)?.[k];
  keys.sort((a, b) => columnWeight(a, sample(a)) - columnWeight(b, sample(b)));
  const columns = keys.flatMap((k): { path: [string, string?]; label: string }[] => {
    const v = sample(k);
    if (!isPlain(v)) return [{ path: [k], label: wordsOf(k, say) }];
    return ranked(Object.keys(v)).map((sub) => ({ path: [k, sub], label: `${wordsOf(k, say)}: ${labelOf(sub)}` }));
  });
  const linkOf = (row: Plain, k: string) => (k === 'title' && isUuid(row.id) ? `/ai/tasks/${row.id}` : k === 'name' && isUuid(row.clientId) ? `/ai/clients/${row.clientId}` : undefined);
  return {
    heading: wordsOf(key, say),
    columns: columns.map((c) => c.label),
    rows: rows.map((row) =>
      columns.map(({ path: [k, sub] }) => {
        const raw = sub === undefined ? row[k] : (row[k] as Plain | undefined)?.[sub];
        const cell = cellOf(sub ?? k, raw, names, say, k !== 'title' && k !== 'name');
        const url = linkOf(row, k);
        return url ? { ...cell, url } : cell;
      }),
    ),
  };
}

/** The result as facts (single values) and tables (objects of values, lists of rows). */
export function resultView(result: unknown, names: Map<string, string>, say: Say) {
  const facts: { label: string; cell: Cell }[] = [];
  const tables: ReturnType<typeof tableOf>[] = [];
  if (!isPlain(result)) return { facts, tables };
  for (const [key, value] of Object.entries(result)) {
    if (Array.isArray(value) && value.every(isPlain)) tables.push(tableOf(key, value, names, say));
    else if (isPlain(value) && Object.values(value).every((v) => !isPlain(v) && !Array.isArray(v))) {
      const numbers = Object.values(value).every((v) => typeof v === 'number');
      tables.push({
        heading: wordsOf(key, say),
        columns: [wordsOf(key, say), say(numbers ? 'result.countColumn' : 'result.valueColumn')],
        rows: ranked(Object.keys(value)).map((k) => [{ text: labelOf(k), header: true }, cellOf(k, value[k], names, say)]),
      });
    } else facts.push({ label: wordsOf(key, say), cell: cellOf(key, value, names, say) });
  }
  return { facts, tables };
}

/** A figure's name as words: "category.in_progress" → "Category: In progress", "open.<user id>" → "Open: Maria Rossi" */
export function figureLabel(figure: string, names: Map<string, string>, say: Say): string {
  const [head, ...rest] = figure.split('.');
  if (!rest.length) return wordsOf(head, say);
  const tail = rest.join('.');
  return `${wordsOf(head, say)}: ${names.get(tail) ?? (tail === 'unassigned' ? say('common.nobody') : labelOf(tail))}`;
}

/** Figures grouped by their head ("category.*" together, as they first came), known values in their order. */
export function orderFigures<T extends { figure: string }>(figures: T[]): T[] {
  const heads = [...new Set(figures.map((f) => f.figure.split('.')[0]))];
  return heads.flatMap((head) => {
    const group = figures.filter((f) => f.figure.split('.')[0] === head);
    const tails = ranked(group.map((f) => f.figure.slice(head.length + 1)));
    return tails.map((tail) => group.find((f) => f.figure.slice(head.length + 1) === tail)!);
  });
}
