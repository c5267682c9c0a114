// Calendar days as the API writes dates (YYYY-MM-DD): the day an instant falls
// on in a time zone ("today" for a tenant), and day arithmetic. One place, so
// a named list filter, a report and a reminder agree on what today is.

const FIRST = Date.parse('0001-01-01T00:00:00Z');
const LAST = Date.parse('9999-12-31T00:00:00Z');
const DAY_MS = 86_400_000;

/** The day `at` falls on in the IANA time zone `timeZone`. */
export function dayIn(timeZone: string, at: Date = new Date()): string {
  const parts = new Intl.DateTimeFormat('en', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).formatToParts(at);
  const part = (type: string) => parts.find((x) => x.type === type)!.value;
  return `${part('year')}-${part('month')}-${part('day')}`;
}

/** `date` plus `n` days (negative: minus), kept within the dates PostgreSQL stores. */
export function addDays(date: string, n: number): string {
  const t = Math.min(LAST, Math.max(FIRST, Date.parse(`${date}T00:00:00Z`) + n * DAY_MS));
  return new Date(t).toISOString().slice(0, 10);
}
