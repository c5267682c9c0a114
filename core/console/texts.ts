// The console's own strings: keys of the "console" namespace with their
// built-in English in texts.en.json and problem-texts.en.json (the sentences
// for the API's problems, problem-texts.ts); a tenant's Translation rows
// override them (GET /api/translations/catalog). And filling a text's placeholders.
import { readFileSync } from 'node:fs';

const read = (file: string): Record<string, string> => JSON.parse(readFileSync(new URL(file, import.meta.url), 'utf8'));

export const CONSOLE_TEXTS: Record<string, string> = { ...read('./texts.en.json'), ...read('./problem-texts.en.json') };

/** A text with its placeholders filled in. */
export type Say = (key: string, values?: Record<string, unknown>) => string;

/** "{count} tasks" with { count: 3 } is "3 tasks"; a placeholder without a value stays as written, so a missing value shows. */
export function fillIn(text: string, values: Record<string, unknown> = {}): string {
  return text.replace(/\{([A-Za-z][A-Za-z0-9]*)\}/g, (whole, name: string) => (values[name] === undefined || values[name] === null ? whole : String(values[name])));
}

/** The console's text `key` from `texts` (the user's language), else the built-in English, else the key. */
export const sayFrom =
  (texts: Record<string, string> = {}): Say =>
  (key, values) =>
    fillIn(texts[key] ?? CONSOLE_TEXTS[key] ?? key, values);
