// The `date` and `date-time` formats of every schema: what PostgreSQL stores and
// JavaScript's Date writes back unchanged. PostgreSQL refuses year 0000 and
// offsets beyond ±15:59 (22008, 22009) and rolls a leap second 23:59:60 over
// into the next minute; an instant before 0001-01-01T00:00:00Z or after
// 9999-12-31T23:59:59.999Z comes back from Date.toISOString() as "0000-…" or
// "+010000-…". ajv-formats accepts all of these.

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/;
const DAY = 86_400;

/** Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil). */
function daysFromCivil(y: number, m: number, d: number): number {
  const year = m <= 2 ? y - 1 : y;
  const era = Math.floor(year / 400);
  const yoe = year - era * 400;
  const doy = Math.floor((153 * (m > 2 ? m - 3 : m + 9) + 2) / 5) + d - 1;
  return era * 146_097 + yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy - 719_468;
}

const FIRST_SECOND = daysFromCivil(1, 1, 1) * DAY;
const LAST_SECOND = daysFromCivil(9999, 12, 31) * DAY + DAY - 1;

function daysInMonth(y: number, m: number): number {
  if (m === 2) return y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0) ? 29 : 28;
  return m === 4 || m === 6 || m === 9 || m === 11 ? 30 : 31;
}

const validDay = (y: number, m: number, d: number) => y >= 1 && m >= 1 && m <= 12 && d >= 1 && d <= daysInMonth(y, m);

/** A calendar date from 0001-01-01 through 9999-12-31. */
export function isDate(s: string): boolean {
  const m = DATE.exec(s);
  return m !== null && validDay(Number(m[1]), Number(m[2]), Number(m[3]));
}

/** An RFC 3339 date-time with an offset, naming an instant from 0001-01-01T00:00:00Z through 9999-12-31T23:59:59.999Z. */
export function isDateTime(s: string): boolean {
  const m = DATE_TIME.exec(s);
  if (!m) return false;
  const [y, mo, d, h, mi, sec] = m.slice(1, 7).map(Number);
  if (!validDay(y, mo, d) || h > 23 || mi > 59 || sec > 59) return false;
  const [sign, oh, om] = [m[8], Number(m[9] ?? 0), Number(m[10] ?? 0)];
  if (oh > 15 || om > 59) return false;
  const offset = (sign === '-' ? -1 : 1) * (oh * 3600 + om * 60);
  const instant = daysFromCivil(y, mo, d) * DAY + h * 3600 + mi * 60 + sec - offset;
  const fraction = m[7] ? Number(m[7]) : 0;
  return instant >= FIRST_SECOND && (instant < LAST_SECOND || (instant === LAST_SECOND && fraction <= 0.999));
}
