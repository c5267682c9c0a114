// What the AI module's console pages share: how ids, instants and values read,
// in the user's language (the module's texts, texts.en.json).
import type { PageApi } from '../../core/plugin-api.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const isUuid = (v: unknown): v is string => typeof v === 'string' && UUID.test(v);

/** "2026-11-16T07:00:00.000Z" → "2026-11-16 07:00 UTC" (the console shows UTC) */
export function when(iso: unknown): string {
  if (typeof iso !== 'string' || !iso) return '';
  return iso.replace('T', ' ').replace(/:\d\d(\.\d+)?Z$/, ' UTC');
}

/** How long ago an instant was, in words ("3 days ago"). */
export function ago(api: PageApi, iso: unknown, now = Date.now()): string {
  if (typeof iso !== 'string') return '';
  const seconds = Math.round((now - Date.parse(iso)) / 1000);
  if (!Number.isFinite(seconds)) return '';
  if (seconds < 0) return api.text('ago.future');
  if (seconds < 60) return api.text('ago.now');
  const steps: [number, 'minute' | 'hour' | 'day'][] = [
    [60, 'minute'],
    [3600, 'hour'],
    [86_400, 'day'],
  ];
  let unit = steps[0];
  for (const s of steps) if (seconds >= s[0]) unit = s;
  const n = Math.floor(seconds / unit[0]);
  // one key per unit and number, as languages inflect them differently
  const keys = { minute: ['ago.minute', 'ago.minutes'], hour: ['ago.hour', 'ago.hours'], day: ['ago.day', 'ago.days'] } as const;
  return api.text(keys[unit[1]][n === 1 ? 0 : 1], { n });
}

/** "in_progress" → "In progress" */
export const labelOf = (value: string): string => {
  const text = value.replace(/[_-]+/g, ' ');
  return text === 'todo' ? 'To do' : text.charAt(0).toUpperCase() + text.slice(1);
};

/** A stored value (a status, a priority, a trigger) in words: its text "value.<value>", else labelOf's English. */
export function valueLabel(api: PageApi, value: string): string {
  return api.text(`value.${value}`, undefined, labelOf(value));
}
