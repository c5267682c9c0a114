// Reference fields on console pages: the label of each referenced row (a list
// shows "Acme Ltd", not a UUID) and the options of a reference's select, read
// through the referenced entity's own API routes, so a row the user may not
// read never gives its name away.
import { labelField, rowLabel, type MetaEntity, type MetaField, type Row } from './fields.ts';
import type { Page } from './shell.ts';

/** How many options a reference's select holds at once; typing narrows them. */
const OPTIONS = 50;

const routable = (e: MetaEntity | undefined): e is MetaEntity & { path: string } => Boolean(e?.path && !e.path.includes(':'));

/** id → label for every reference the rows hold in these fields (ids the user cannot read stay ids). */
export async function referenceLabels(page: Page, fields: MetaField[], rows: Row[]): Promise<Map<string, string>> {
  const wanted = new Map<string, MetaEntity & { path: string }>();
  for (const f of fields) {
    const target = f.type === 'ref' && f.entity ? page.entity(f.entity) : undefined;
    if (!routable(target)) continue;
    for (const row of rows) if (typeof row[f.name] === 'string') wanted.set(row[f.name] as string, target);
  }
  const labels = new Map<string, string>();
  await Promise.all(
    [...wanted].map(async ([id, target]) => {
      const res = await page.api.get<Row>(`${target.path}/${encodeURIComponent(id)}`);
      if (res.ok) labels.set(id, rowLabel(target, res.body));
    }),
  );
  return labels;
}

export interface Option {
  value: string;
  label: string;
  selected: boolean;
}

/** The options of a reference's select: rows matching `search`, and the selected one always. */
export async function referenceOptions(page: Page, field: MetaField, search: string, selected: string): Promise<Option[]> {
  const target = field.entity ? page.entity(field.entity) : undefined;
  if (!routable(target)) return selected ? [{ value: selected, label: selected, selected: true }] : [];
  const by = labelField(target);
  const sortable = by && target.fields.some((f) => f.name === by && f.sort);
  const searchable = target.fields.some((f) => f.search);
  const query = new URLSearchParams({ size: String(OPTIONS), ...(sortable ? { sort: by } : {}), ...(search && searchable ? { search: search.slice(0, 200) } : {}) });
  const res = await page.api.get<{ items: Row[] }>(`${target.path}?${query}`);
  const rows = res.ok ? res.body.items : [];
  const options = rows.map((r) => ({ value: r.id, label: rowLabel(target, r), selected: r.id === selected }));
  if (selected && !options.some((o) => o.selected)) {
    const one = await page.api.get<Row>(`${target.path}/${encodeURIComponent(selected)}`);
    options.unshift({ value: selected, label: one.ok ? rowLabel(target, one.body) : selected, selected: true });
  }
  return options;
}
