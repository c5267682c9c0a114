// Dates and times in a sentence, by chrono-node's parser of the sentence's
// language, read as wall-clock time in the caller's time zone.
//
// chrono computes relative dates ("tomorrow", "in 3 days") from the reference
// in the process's own time zone, whatever zone it is told. So it is handed a
// reference whose process-local fields are the wall clock of the caller's zone
// at the reference instant, and its answers are read back as fields (year,
// month, day, hour, minute), never as instants: the result does not depend on
// the zone the server runs in.
import * as chrono from 'chrono-node';
import type { Found } from './parse-priority.ts';

const PARSERS = {
  en: chrono.en,
  de: chrono.de,
  fr: chrono.fr,
  es: chrono.es,
  pt: chrono.pt,
  nl: chrono.nl,
  it: chrono.it,
  ja: chrono.ja,
  ru: chrono.ru,
  sv: chrono.sv,
  zh: chrono.zh,
  uk: chrono.uk,
  fi: chrono.fi,
} as const;
export type DateLanguage = keyof typeof PARSERS;
export const DATE_LANGUAGES = Object.keys(PARSERS) as DateLanguage[];

export interface DateHit extends Found {
  /** YYYY-MM-DD in the caller's zone */
  date: string;
  /** HH:MM, when the sentence names a time */
  time: string | null;
}

/** The first of `tags` (a language preference list) the date parsers speak; English otherwise. */
export function dateLanguage(tags: string[]): DateLanguage {
  for (const tag of tags) {
    const primary = tag.toLowerCase().split('-')[0];
    if (primary in PARSERS) return primary as DateLanguage;
  }
  return 'en';
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** The wall clock of `timeZone` at `at`, as its fields. */
function wallClock(at: Date, timeZone: string) {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', { timeZone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' })
      .formatToParts(at)
      .filter((p) => p.type !== 'literal')
      .map((p) => [p.type, Number(p.value)]),
  ) as Record<'year' | 'month' | 'day' | 'hour' | 'minute' | 'second', number>;
  return parts;
}

/** The calendar day and time of the wall clock of `timeZone` at `at`. */
export function localDay(at: Date, timeZone: string): { date: string; time: string } {
  const w = wallClock(at, timeZone);
  return { date: `${pad(w.year, 4)}-${pad(w.month)}-${pad(w.day)}`, time: `${pad(w.hour)}:${pad(w.minute)}` };
}

/**
 * The instant a wall-clock day and time of `timeZone` is (the earlier one in a
 * repeated hour; a skipped hour moves forward): two corrections of the offset.
 */
export function instantOf(date: string, time: string, timeZone: string): Date {
  const [y, mo, d] = date.split('-').map(Number);
  const [h, mi] = time.split(':').map(Number);
  const target = Date.UTC(y, mo - 1, d, h, mi);
  let guess = target;
  for (let i = 0; i < 2; i++) {
    const w = wallClock(new Date(guess), timeZone);
    guess += target - Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute);
  }
  return new Date(guess);
}

/** Every date chrono finds in `text`, future-leaning ("Friday" is the next one), in the caller's zone. */
export function findDates(text: string, language: DateLanguage, reference: Date, timeZone: string): DateHit[] {
  const w = wallClock(reference, timeZone);
  // setFullYear, not new Date(y, …): that reads years 0-99 as 1900-1999
  const localRef = new Date(0);
  localRef.setFullYear(w.year, w.month - 1, w.day);
  localRef.setHours(w.hour, w.minute, w.second, 0);
  const results = PARSERS[language].parse(text, localRef, { forwardDate: true });
  return results.map((r) => {
    const c = r.start;
    const date = `${pad(c.get('year') ?? w.year, 4)}-${pad(c.get('month') ?? w.month)}-${pad(c.get('day') ?? w.day)}`;
    const time = c.isCertain('hour') ? `${pad(c.get('hour') ?? 0)}:${pad(c.get('minute') ?? 0)}` : null;
    return { start: r.index, end: r.index + r.text.length, text: r.text, date, time };
  });
}
