// A record's page as a hub, from GET /api/meta alone: a header (the row's
// title, its status as a badge, the key facts the manifest names), the
// actions the user may take on it, its fields in the manifest's groups, and a
// section per related list: the rows pointing at it, with their own paging and
// a "New" pre-filled with the reference. Rows living under the record's path
// (quote lines, project members) are edited in place, row by row
// (line-editor.ts). Every row is read through the API as the user.
import type { Page } from './shell.ts';
import { display, rowLabel, type MetaAction, type MetaEntity, type MetaRelated, type Row } from './fields.ts';
import { cellOf, type Cell } from './cells.ts';
import { columnsOf } from './columns.ts';
import { referenceLabels } from './references.ts';
import { lineEditor, type LineErrors } from './line-editor.ts';
import { timelineOf } from './timeline.ts';

/** Rows a related list shows at once. */
const RELATED_SIZE = 10;

/** A related list's key in URLs and element ids: Contact.customerId */
const relatedKey = (r: MetaRelated) => `${r.entity}.${r.field}`;
const sectionId = (r: MetaRelated) => `related-${r.entity}-${r.field}`;

/** Whether a row action is offered on this row: the user may call it (meta), and the row meets its "when". */
export const offeredOn = (action: MetaAction, row: Row) => Object.entries(action.when ?? {}).every(([field, values]) => values.includes((row[field] ?? null) as string | boolean | null));

export interface HubOptions {
  /** the console path of the entity's pages and of this row */
  path: string;
  url: string;
  /** ?p.<related key>=N: the page each related list shows */
  query: Record<string, string | undefined>;
  /** a line editor's refused change, shown beside its row */
  lineErrors?: LineErrors;
}

/** The view data of a record's page. */
export async function recordHub(page: Page, entity: MetaEntity, row: Row, opts: HubOptions) {
  const fields = entity.fields.filter((f) => !f.writeOnly);
  const labels = await referenceLabels(page, fields, [row]);
  const byName = new Map(fields.map((f) => [f.name, f]));
  const status = entity.statusField ? byName.get(entity.statusField) : undefined;
  const statusValue = status ? row[status.name] : undefined;
  const groups = new Map<string, { heading: string | null; fields: (Cell & { label: string })[] }>();
  for (const f of fields) {
    const heading = f.group ?? null;
    const group = groups.get(heading ?? '') ?? { heading, fields: [] };
    group.fields.push({ label: f.label, ...cellOf(page, f, row[f.name], labels, row) });
    groups.set(heading ?? '', group);
  }
  const related = await Promise.all(entity.related.map((r) => relatedSection(page, r, row, opts)));
  const timeline = await timelineOf(page, entity, row, { url: opts.url, pageNo: Math.min(10_000, Math.max(1, Number.parseInt(opts.query['p.timeline'] ?? '1', 10) || 1)) });
  return {
    heading: rowLabel(entity, row),
    status: status && typeof statusValue === 'string' ? { text: display(status, statusValue, page.text), value: statusValue } : null,
    facts: entity.summaryFields.flatMap((name) => {
      const f = byName.get(name);
      const cell = f ? cellOf(page, f, row[name], labels, row) : null;
      return f && cell?.text ? [{ label: f.label, ...cell }] : [];
    }),
    rowActions: entity.rowActions.filter((a) => offeredOn(a, row)).map((a) => ({ label: a.label, summary: a.summary, url: `${opts.url}/do/${a.name}`, direct: !a.confirm && !a.body && !a.reveals })),
    groups: [...groups.values()],
    related: related.filter((s) => s !== null),
    timeline,
  };
}

/** One related list of the record: a page of its rows, or a line editor for rows under the record's path. */
async function relatedSection(page: Page, related: MetaRelated, parent: Row, opts: HubOptions) {
  const child = page.entity(related.entity);
  if (!child) return null;
  const pageNo = Math.min(10_000, Math.max(1, Number.parseInt(opts.query[`p.${relatedKey(related)}`] ?? '1', 10) || 1));
  const base = related.path.replace('{id}', encodeURIComponent(parent.id));
  const res = await page.api.get<{ items: Row[]; total: number }>(`${base}${base.includes('?') ? '&' : '?'}page=${pageNo}&size=${RELATED_SIZE}`);
  // a list the user may not read after all (a rule on the parent's rows): no section
  if (!res.ok) return null;
  const { items, total } = res.body;
  const childPath = page.pathOf(child.name);
  const columns = columnsOf(child).filter((f) => f.name !== related.field);
  const labels = await referenceLabels(page, columns, items);
  const pages = Math.max(1, Math.ceil(total / RELATED_SIZE));
  const at = (n: number) => `${opts.url}?${new URLSearchParams({ ...definedOf(opts.query), [`p.${relatedKey(related)}`]: String(n) })}#${sectionId(related)}`;
  const filterable = child.fields.some((f) => f.name === related.field && f.filter);
  const section = {
    id: sectionId(related),
    heading: related.label ?? page.meta.menu.find((m) => m.entity === child.name)?.label ?? child.label,
    total,
    columns: columns.map((f) => ({ label: f.label, numeric: f.type === 'integer' || f.type === 'decimal' })),
    rows: items.map((r) => ({
      download: null as string | null,
      url: childPath ? `${childPath}/${encodeURIComponent(r.id)}` : null,
      label: rowLabel(child, r),
      cells: columns.map((f) => cellOf(page, f, r[f.name], labels, r)),
    })),
    newUrl:
      !related.nested && childPath && child.actions.includes('create') && child.fields.some((f) => f.name === related.field && !f.readOnly)
        ? `${childPath}/new?${new URLSearchParams({ [related.field]: parent.id })}`
        : null,
    moreUrl: childPath && filterable && total > items.length ? `${childPath}?${new URLSearchParams({ [related.field]: parent.id })}` : null,
    prevUrl: pageNo > 1 ? at(pageNo - 1) : null,
    nextUrl: pageNo < pages ? at(pageNo + 1) : null,
    pageNo,
    pages,
    lines: null as Awaited<ReturnType<typeof lineEditor>> | null,
    upload: null as { action: string } | null,
    compose: null as (NonNullable<ReturnType<typeof composeOf>> & { errors: string[] }) | null,
  };
  const key = relatedKey(related);
  const download = child.download;
  if (download) section.rows = section.rows.map((r, i) => ({ ...r, download: `/console${download.replace('{id}', encodeURIComponent(items[i].id))}` }));
  // a file added to the list (an attachment): a form streamed on to the module's upload route
  section.upload = related.upload ? { action: `${opts.url}/upload/${key}?${new URLSearchParams({ _csrf: String(page.shell.csrf) })}` } : null;
  const composed = opts.lineErrors?.key === key && opts.lineErrors.lineId === 'compose' ? opts.lineErrors : undefined;
  const compose = composeOf(child, related, opts.url);
  section.compose = compose && {
    ...compose,
    inputs: compose.inputs.map((i) => ({ ...i, value: String(composed?.values[i.name] ?? '') })),
    errors: composed?.messages ?? [],
  };
  // rows under the record's path, and rows with no page of their own (a task's comments), are changed in place
  const inPlace = related.nested || editedInPlace(page, child);
  if (inPlace && (child.actions.includes('create') || child.actions.includes('update') || child.actions.includes('delete')))
    section.lines = await lineEditor(page, child, related, items, { url: opts.url, errors: opts.lineErrors, blank: related.nested });
  return section;
}

/** Rows of an entity with no console page of its own, but a collection route to change them through. */
export const editedInPlace = (page: Page, child: MetaEntity) =>
  !page.pathOf(child.name) && Boolean(child.path && !child.path.includes(':')) && (child.actions.includes('update') || child.actions.includes('delete'));

/**
 * A short row written on the record's page (a comment on a task): a list whose rows the user
 * may create with the reference and at most two more fields, one of them a text.
 */
export function composeOf(child: MetaEntity, related: MetaRelated, url: string) {
  if (related.nested || !child.actions.includes('create') || !child.fields.some((f) => f.name === related.field && !f.readOnly)) return null;
  const fields = child.fields.filter((f) => !f.readOnly && f.name !== related.field);
  if (!fields.length || fields.length > 2 || !fields.some((f) => f.type === 'text') || fields.some((f) => f.required && f.type !== 'text' && f.type !== 'string')) return null;
  return { action: `${url}/compose/${relatedKey(related)}`, inputs: fields.map((f) => ({ name: f.name, label: f.label, textarea: f.type === 'text', required: f.required, maxLength: f.maxLength })) };
}

const definedOf = (query: Record<string, string | undefined>) => Object.fromEntries(Object.entries(query).filter((e): e is [string, string] => e[1] !== undefined && e[0].startsWith('p.')));
