// Rows living under a record's path (a quote's lines, a project's members)
// edited in place on the record's page: a grid with a row of inputs per line,
// each saved or removed on its own through the API, and a blank row to add
// one. A change the API refuses comes back beside its row with what was typed.
import type { Page } from './shell.ts';
import { inputValue, rowLabel, type FormData, type MetaEntity, type MetaField, type MetaRelated, type Row } from './fields.ts';
import { referenceLabels, referenceOptions, type Option } from './references.ts';
import { cellOf } from './cells.ts';
import { columnsOf } from './columns.ts';

/** A refused change of one line (lineId null: the new one), with what the user typed. */
export interface LineErrors {
  key: string;
  lineId: string | null;
  messages: string[];
  values: FormData;
}

const INPUT_TYPES: Partial<Record<MetaField['type'], string>> = { integer: 'number', date: 'date', datetime: 'datetime-local' };

/** The fields a line shows: all but the reference to the record (the path says it) and JSON. */
export const lineFields = (child: MetaEntity, related: MetaRelated) =>
  // rows of their own collection (a task's comments) show their list's columns; lines, every field
  (related.nested ? child.fields : columnsOf(child)).filter((f) => !f.writeOnly && f.name !== related.field && f.type !== 'json');

/** `blank`: a row to add one (rows under the record's path; others are added by their compose form) */
export async function lineEditor(page: Page, child: MetaEntity, related: MetaRelated, items: Row[], opts: { url: string; errors?: LineErrors; blank: boolean }) {
  const key = `${related.entity}.${related.field}`;
  const fields = lineFields(child, related);
  const labels = await referenceLabels(page, fields, items);
  // a reference's options once for every row: the rows a select offers, and each row's own value
  const options = new Map<string, Option[]>();
  for (const f of fields) if (f.type === 'ref' && !f.readOnly) options.set(f.name, await referenceOptions(page, f, '', ''));
  const errorsOf = (lineId: string | null) => (opts.errors?.key === key && opts.errors.lineId === lineId ? opts.errors : undefined);
  const inputsOf = (formId: string, values: FormData | Row, editable: boolean, row?: Row) =>
    fields.map((f) => {
      if (f.readOnly || !editable) return { field: f.name, label: f.label, ...(row ? cellOf(page, f, row[f.name], labels, row) : { text: '' }) };
      const raw = values[f.name];
      const value = typeof raw === 'string' ? raw : Array.isArray(raw) ? (raw.at(-1) ?? '') : inputValue(f, raw);
      return {
        field: f.name,
        label: f.label,
        input: {
          form: formId,
          name: f.name,
          value,
          required: f.required,
          type: INPUT_TYPES[f.type] ?? 'text',
          decimal: f.type === 'decimal',
          checkbox: f.type === 'boolean',
          textarea: f.type === 'text',
          checked: value === 'true',
          select:
            f.type === 'enum'
              ? (f.values ?? []).map((v) => ({ value: v, label: f.valueLabels?.[v] ?? v, selected: v === value }))
              : f.type === 'ref'
                ? withSelected(options.get(f.name) ?? [], value, labels)
                : null,
          maxLength: f.maxLength,
        },
      };
    });
  const canUpdate = child.actions.includes('update');
  const canDelete = child.actions.includes('delete');
  const blankErrors = errorsOf(null);
  return {
    key,
    columns: fields.map((f) => ({ label: f.label, numeric: f.type === 'integer' || f.type === 'decimal' })),
    rows: items.map((row, i) => {
      const errors = errorsOf(row.id);
      const formId = `line-${related.entity}-${i}`;
      return {
        formId,
        version: row.version,
        label: rowLabel(child, row) === row.id ? `${child.label} ${i + 1}` : rowLabel(child, row),
        cells: inputsOf(formId, errors?.values ?? row, canUpdate, row),
        errors: errors?.messages ?? [],
        // a row holding a file (an attachment): its bytes through the console's relay
        download: child.download ? `/console${child.download.replace('{id}', encodeURIComponent(row.id))}` : null,
        updateUrl: canUpdate ? `${opts.url}/lines/${key}/${encodeURIComponent(row.id)}` : null,
        deleteUrl: canDelete ? `${opts.url}/lines/${key}/${encodeURIComponent(row.id)}/delete` : null,
      };
    }),
    blank:
      opts.blank && child.actions.includes('create')
        ? {
            formId: `line-${related.entity}-new`,
            cells: inputsOf(`line-${related.entity}-new`, blankErrors?.values ?? defaultsOf(fields), true),
            errors: blankErrors?.messages ?? [],
            createUrl: `${opts.url}/lines/${key}`,
          }
        : null,
  };
}

const defaultsOf = (fields: MetaField[]): Row => Object.fromEntries([['id', ''], ...fields.filter((f) => f.default !== undefined && f.default !== null).map((f) => [f.name, f.default])]) as Row;

function withSelected(options: Option[], value: string, labels: Map<string, string>): Option[] {
  const marked = options.map((o) => ({ ...o, selected: o.value === value }));
  if (value && !marked.some((o) => o.selected)) marked.unshift({ value, label: labels.get(value) ?? value, selected: true });
  return marked;
}
