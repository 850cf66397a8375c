// The one reading of a date-time a client sends (an API key's `expires_at`, `--expires-at` on the
// command line): RFC 3339 (`2027-01-01T00:00:00Z`, `2027-01-01T09:30:00.5+05:30`), checked against
// the calendar rather than handed to `new Date`, which rolls 2027-02-30 over into March and turns
// a leap second into an Invalid Date. A leap second (:60) is refused: no clock here ever shows one,
// and the instants either side are one second apart anyway. Years run from 1970 to 9999.

const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;
const FULL_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

const MIN_YEAR = 1970;
const MAX_YEAR = 9999;

/** What a refused date-time is told: the form it must take. */
export const DATE_TIME_RULE =
  'must be an RFC 3339 date-time with a real calendar date, hours 00–23, minutes and seconds 00–59 and an offset (Z or ±hh:mm), e.g. 2027-01-01T00:00:00Z';

/** The instant `text` names, or null when it is not an RFC 3339 date-time with a real calendar date. */
export function parseDateTime(text: string): Date | null {
  const m = DATE_TIME.exec(text);
  if (!m) return null;
  const [, y, mo, d, h, mi, s, fraction, zulu, sign, oh, om] = m;
  const date = calendarDate(Number(y), Number(mo), Number(d));
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(s);
  if (date === null || hour > 23 || minute > 59 || second > 59) return null;
  let offsetMinutes = 0;
  if (!zulu) {
    const offsetHours = Number(oh);
    const offsetMins = Number(om);
    if (offsetHours > 23 || offsetMins > 59) return null;
    offsetMinutes = (sign === '-' ? -1 : 1) * (offsetHours * 60 + offsetMins);
  }
  const ms = fraction ? Math.floor(Number(`0${fraction}`) * 1000) : 0;
  return new Date(date + ((hour * 60 + minute - offsetMinutes) * 60 + second) * 1000 + ms);
}

/** Midnight UTC of an RFC 3339 full-date (`2027-01-01`), or null when there is no such day. */
export function parseFullDate(text: string): Date | null {
  const m = FULL_DATE.exec(text);
  if (!m) return null;
  const date = calendarDate(Number(m[1]), Number(m[2]), Number(m[3]));
  return date === null ? null : new Date(date);
}

/** True for an RFC 3339 date-time `parseDateTime` accepts (Ajv's `date-time` format). */
export function isDateTime(text: string): boolean {
  return parseDateTime(text) !== null;
}

/** Milliseconds of midnight UTC of that day, or null when the calendar has no such day. */
function calendarDate(year: number, month: number, day: number): number | null {
  if (year < MIN_YEAR || year > MAX_YEAR || month < 1 || month > 12 || day < 1) return null;
  if (day > daysInMonth(year, month)) return null;
  return Date.UTC(year, month - 1, day);
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}
