// A record's history in words, from its module's audit log (GET /api/meta
// timeline): "Maria changed Status from New to Qualified", newest first,
// values read as the record's page reads them (labels, not enums; names, not
// ids), paged. Only what the user may read: the log's rows through its API,
// a user's name only if they may read users.
import type { Page } from './shell.ts';
import { display, type MetaEntity, type MetaField, type Row } from './fields.ts';
import { referenceLabels } from './references.ts';
import { cellOf } from './cells.ts';

const SIZE = 10;

interface Change {
  before?: unknown;
  after?: unknown;
}

/** "Maria changed this Lead."; an action a module records beyond create, update, delete and convert reads as a change. */
function sentenceOf(page: Page, action: string, values: Record<string, string>): string {
  const key = `timeline.${action}`;
  const text = page.text(key, values);
  return text === key ? page.text('timeline.update', values) : text;
}

export async function timelineOf(page: Page, entity: MetaEntity, row: Row, opts: { url: string; pageNo: number }) {
  if (!entity.timeline) return null;
  const base = entity.timeline.replace('{id}', encodeURIComponent(row.id));
  const res = await page.api.get<{ items: Row[]; total: number }>(`${base}&sort=-at&page=${opts.pageNo}&size=${SIZE}`);
  if (!res.ok) return null;
  const { items, total } = res.body;
  const fields = new Map(entity.fields.filter((f) => !f.writeOnly).map((f) => [f.name, f]));
  // the names of who did it and of the rows the changes point at, as far as the user may read them
  const users = page.entity('User') ? await referenceLabels(page, [{ name: 'userId', type: 'ref', entity: 'User' } as MetaField], items) : new Map<string, string>();
  const refs = [...fields.values()].filter((f) => f.type === 'ref');
  const pointed = items.flatMap((i) =>
    Object.entries((i.changes ?? {}) as Record<string, Change>).flatMap(([name, c]) => (refs.some((f) => f.name === name) ? [{ [name]: c.before }, { [name]: c.after }] : [])),
  );
  const labels = await referenceLabels(page, refs, pointed as Row[]);
  // a value as the record's page reads it (a reference by its label, money with its currency)
  const value = (f: MetaField, v: unknown) => (v === null || v === undefined || v === '' ? page.text('timeline.empty') : cellOf(page, f, v, labels, row).text);
  const pages = Math.max(1, Math.ceil(total / SIZE));
  const at = (n: number) => `${opts.url}?p.timeline=${n}#timeline`;
  return {
    total,
    entries: items.map((i) => {
      const who = typeof i.userId === 'string' ? (users.get(i.userId) ?? page.text('timeline.someone')) : page.text('timeline.system');
      const changes = Object.entries((i.changes ?? {}) as Record<string, Change>).flatMap(([name, c]) => {
        const f = fields.get(name);
        // a field the user may not read, or a change a create records as its first value only
        if (!f || typeof c !== 'object' || c === null) return [];
        return [{ field: f.label, before: 'before' in c && i.action !== 'create' ? value(f, c.before) : null, after: value(f, c.after) }];
      });
      return {
        when: display({ type: 'datetime' } as MetaField, i.at, page.text),
        datetime: typeof i.at === 'string' ? i.at : '',
        sentence: sentenceOf(page, String(i.action), { who, entity: entity.label }),
        changes,
      };
    }),
    prevUrl: opts.pageNo > 1 ? at(opts.pageNo - 1) : null,
    nextUrl: opts.pageNo < pages ? at(opts.pageNo + 1) : null,
  };
}
