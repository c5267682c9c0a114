// How one value reads in a list, a record's header or its fields.
import { display, type MetaField, type Row } from './fields.ts';
import type { Page } from './shell.ts';

export interface Cell {
  text: string;
  url: string | null;
  numeric?: boolean;
  /** an e-mail address or web address: a mailto: or http(s) link */
  href?: string;
}

/** How one value reads on a page: a reference by its label and linked, an e-mail or web address as a link, money with its currency. */
export function cellOf(page: Page, field: MetaField, value: unknown, labels: Map<string, string>, row?: Row): Cell {
  if (field.type === 'ref' && typeof value === 'string') {
    const target = field.entity ? page.pathOf(field.entity) : undefined;
    return { text: labels.get(value) ?? value, url: target ? `${target}/${encodeURIComponent(value)}` : null };
  }
  const text = display(field, value, page.text);
  const numeric = field.type === 'integer' || field.type === 'decimal';
  const currency = field.currency && row && !field.currency.includes('.') ? row[field.currency] : undefined;
  if (numeric) return { text: typeof currency === 'string' && text ? `${text} ${currency}` : text, url: null, numeric };
  if (typeof value === 'string' && field.type === 'string') {
    if (/^[^@\s]+@[^@\s]+$/.test(value)) return { text, url: null, href: `mailto:${value}` };
    if (/^https?:\/\/\S+$/i.test(value)) return { text, url: null, href: value };
  }
  return { text, url: null };
}
