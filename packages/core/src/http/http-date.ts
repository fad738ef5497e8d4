import { trimOws } from './headers';

/**
 * HTTP-date (RFC 9110 §5.6.7), parsed strictly. `Date.parse` is not used: it accepts almost
 * anything ("1", "Sun 06 Nov 1994", local-time forms) and guesses differently per engine, and a
 * guessed Retry-After is worse than none. Pure: the clock is passed in where the RFC needs one.
 */

// RFC 9110 §5.6.7: day-name, day-name-l and month are case-sensitive.
const DAY_NAMES: readonly string[] = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const LONG_DAY_NAMES: readonly string[] = [
  'Sunday',
  'Monday',
  'Tuesday',
  'Wednesday',
  'Thursday',
  'Friday',
  'Saturday',
];
const MONTHS: readonly string[] = [
  'Jan',
  'Feb',
  'Mar',
  'Apr',
  'May',
  'Jun',
  'Jul',
  'Aug',
  'Sep',
  'Oct',
  'Nov',
  'Dec',
];

// RFC 9110 §5.6.7: IMF-fixdate = day-name "," SP day SP month SP year SP hour ":" minute ":" second SP "GMT",
// with 2-digit day and 4-digit year. (`\d` without the `u` flag is ASCII 0-9 only.)
const IMF_FIXDATE = /^([A-Za-z]{3}), (\d{2}) ([A-Za-z]{3}) (\d{4}) (\d{2}):(\d{2}):(\d{2}) GMT$/;
// RFC 9110 §5.6.7: rfc850-date = day-name-l "," SP day "-" month "-" 2DIGIT SP time-of-day SP "GMT".
const RFC850_DATE = /^([A-Za-z]{6,9}), (\d{2})-([A-Za-z]{3})-(\d{2}) (\d{2}):(\d{2}):(\d{2}) GMT$/;
// RFC 9110 §5.6.7: asctime-date = day-name SP month SP ( 2DIGIT / ( SP DIGIT ) ) SP time-of-day SP year.
const ASCTIME_DATE = /^([A-Za-z]{3}) ([A-Za-z]{3}) (\d{2}| \d) (\d{2}):(\d{2}):(\d{2}) (\d{4})$/;

const DAY_MS = 86_400_000;
// 400 Gregorian years are exactly 146,097 days, so shifting a year by 400 keeps every weekday.
const GREGORIAN_CYCLE_MS = 146_097 * DAY_MS;

/**
 * Parses an HTTP-date into epoch milliseconds, or returns `undefined` for anything that is not
 * exactly one of the three forms of RFC 9110 §5.6.7:
 *
 * - IMF-fixdate: `Sun, 06 Nov 1994 08:49:37 GMT`
 * - obsolete RFC 850: `Sunday, 06-Nov-94 08:49:37 GMT`
 * - asctime: `Sun Nov  6 08:49:37 1994` (a one-digit day is padded with a space)
 *
 * Day and month names must match in case, the weekday must be the date's weekday, the day must
 * exist in that month (leap years included), and the time must lie in 00:00:00–23:59:60.
 * Leading and trailing spaces and tabs are ignored; nothing else is.
 *
 * A leap second (`:60`) reads as `:59` of the same minute: epoch time has no leap seconds, and
 * rounding down keeps `23:59:60` on its own day instead of rolling into the next.
 *
 * @param text The header value.
 * @param now The reference time in epoch milliseconds, needed only for the RFC 850 form: its
 *   two-digit year is read as the latest year with those digits that is not more than 50 years
 *   after `now` (RFC 9110 §5.6.7). Without a finite `now`, RFC 850 dates are rejected rather
 *   than guessed; the other two forms never need it.
 * @returns Epoch milliseconds (a whole number of seconds), or `undefined`.
 *
 * @example
 * ```ts
 * parseHttpDate('Sun, 06 Nov 1994 08:49:37 GMT'); // 784111777000
 * parseHttpDate('Sunday, 06-Nov-94 08:49:37 GMT', Date.UTC(2024, 0, 1)); // 784111777000
 * parseHttpDate('sun, 06 nov 1994 08:49:37 GMT'); // undefined: names are case-sensitive
 * ```
 */
export function parseHttpDate(text: string, now?: number): number | undefined {
  const value = trimOws(text);
  // The form servers send (RFC 9110 §5.6.7: senders MUST use IMF-fixdate), read by position.
  const fixed = readFixdate(value);
  if (fixed !== undefined) return fixed;

  const imf = IMF_FIXDATE.exec(value);
  if (imf) {
    const [, dayName = '', day = '', month = '', year = '', hour = '', minute = '', second = ''] = imf;
    return toEpoch(
      DAY_NAMES.indexOf(dayName),
      Number(year),
      MONTHS.indexOf(month),
      day,
      hour,
      minute,
      second,
    );
  }

  const asctime = ASCTIME_DATE.exec(value);
  if (asctime) {
    const [, dayName = '', month = '', day = '', hour = '', minute = '', second = '', year = ''] = asctime;
    return toEpoch(
      DAY_NAMES.indexOf(dayName),
      Number(year),
      MONTHS.indexOf(month),
      day.trim(),
      hour,
      minute,
      second,
    );
  }

  const rfc850 = RFC850_DATE.exec(value);
  if (rfc850) {
    const [, dayName = '', day = '', month = '', yy = '', hour = '', minute = '', second = ''] = rfc850;
    const instantIn = (year: number) =>
      utc(
        year,
        MONTHS.indexOf(month),
        Number(day),
        Number(hour),
        Number(minute),
        Math.min(Number(second), 59),
      );
    const year = resolveTwoDigitYear(Number(yy), instantIn, now);
    if (year === undefined) return undefined;
    return toEpoch(LONG_DAY_NAMES.indexOf(dayName), year, MONTHS.indexOf(month), day, hour, minute, second);
  }

  return undefined;
}

// Validates the parts of a matched date and turns them into epoch milliseconds.
function toEpoch(
  weekday: number,
  year: number,
  monthIndex: number,
  dayText: string,
  hourText: string,
  minuteText: string,
  secondText: string,
): number | undefined {
  const day = Number(dayText);
  const hour = Number(hourText);
  const minute = Number(minuteText);
  const second = Number(secondText);
  if (weekday < 0 || monthIndex < 0) return undefined;
  if (day < 1 || day > daysInMonth(year, monthIndex)) return undefined;
  // RFC 9110 §5.6.7: time-of-day runs 00:00:00 – 23:59:60 (60 being a leap second).
  if (hour > 23 || minute > 59 || second > 60) return undefined;
  const epoch = utc(year, monthIndex, day, hour, minute, Math.min(second, 59));
  // RFC 9110 §5.6.7 names the weekday redundantly; a mismatch means the date is not what it says.
  return weekdayOf(epoch) === weekday ? epoch : undefined;
}

// RFC 9110 §5.6.7: a two-digit year that would appear more than 50 years in the future is the
// most recent past year with the same last two digits. So: the latest year ending in `yy` whose
// date is not more than 50 years after `now`.
function resolveTwoDigitYear(
  yy: number,
  instantIn: (year: number) => number,
  now: number | undefined,
): number | undefined {
  if (now === undefined || !Number.isFinite(now)) return undefined;
  const reference = new Date(now);
  const nowYear = reference.getUTCFullYear();
  const limit = utc(
    nowYear + 50,
    reference.getUTCMonth(),
    reference.getUTCDate(),
    reference.getUTCHours(),
    reference.getUTCMinutes(),
    reference.getUTCSeconds(),
    reference.getUTCMilliseconds(),
  );
  if (!Number.isFinite(limit)) return undefined;
  // Start a century above `now` and step back until the date is within 50 years from now.
  // (An invalid day such as 29 Feb in a common year rolls over here; toEpoch rejects it after.)
  let year = nowYear - (((nowYear % 100) + 100) % 100) + 100 + yy;
  while (instantIn(year) > limit) year -= 100;
  return year;
}

function daysInMonth(year: number, monthIndex: number): number {
  if (monthIndex === 1) {
    const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
    return leap ? 29 : 28;
  }
  return [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][monthIndex] ?? 0;
}

// Sunday is 0, like DAY_NAMES; 1970-01-01 (epoch day 0) was a Thursday.
function weekdayOf(epoch: number): number {
  const days = Math.floor(epoch / DAY_MS);
  return (((days + 4) % 7) + 7) % 7;
}

// Date.UTC reads years 0–99 as 1900–1999; computing 400 years later and stepping back a whole
// Gregorian cycle gives the proleptic Gregorian instant for every 4-digit year instead.
function utc(
  year: number,
  monthIndex: number,
  day: number,
  hour: number,
  minute: number,
  second: number,
  millisecond = 0,
): number {
  return Date.UTC(year + 400, monthIndex, day, hour, minute, second, millisecond) - GREGORIAN_CYCLE_MS;
}

/** Two ASCII digits at `at` as a number, or -1. */
function twoDigits(text: string, at: number): number {
  const tens = text.charCodeAt(at) - 48;
  const ones = text.charCodeAt(at + 1) - 48;
  return tens >= 0 && tens <= 9 && ones >= 0 && ones <= 9 ? tens * 10 + ones : -1;
}

/**
 * An IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`) read by the fixed position of each part,
 * without a regular expression or an allocation per part; `undefined` for anything else, which
 * the patterns above then read (or refuse), so both give the same answer for every input.
 */
function readFixdate(value: string): number | undefined {
  if (
    value.length !== 29 ||
    value.charCodeAt(3) !== 0x2c || // ,
    value.charCodeAt(4) !== 0x20 ||
    value.charCodeAt(7) !== 0x20 ||
    value.charCodeAt(11) !== 0x20 ||
    value.charCodeAt(16) !== 0x20 ||
    value.charCodeAt(19) !== 0x3a || // :
    value.charCodeAt(22) !== 0x3a ||
    value.charCodeAt(25) !== 0x20 ||
    !value.endsWith('GMT')
  ) {
    return undefined;
  }
  const century = twoDigits(value, 12);
  const years = twoDigits(value, 14);
  const day = twoDigits(value, 5);
  const hour = twoDigits(value, 17);
  const minute = twoDigits(value, 20);
  const second = twoDigits(value, 23);
  if (century < 0 || years < 0 || day < 0 || hour < 0 || minute < 0 || second < 0) return undefined;
  const weekday = DAY_NAMES.indexOf(value.slice(0, 3));
  const monthIndex = MONTHS.indexOf(value.slice(8, 11));
  const year = century * 100 + years;
  if (weekday < 0 || monthIndex < 0) return undefined;
  if (day < 1 || day > daysInMonth(year, monthIndex)) return undefined;
  if (hour > 23 || minute > 59 || second > 60) return undefined;
  const days = daysFromCivil(year, monthIndex + 1, day);
  if ((((days + 4) % 7) + 7) % 7 !== weekday) return undefined;
  return days * DAY_MS + hour * 3_600_000 + minute * 60_000 + Math.min(second, 59) * 1000;
}

/**
 * Days from 1970-01-01 to the proleptic Gregorian date `year`-`month`-`day` (month 1–12), in
 * integer arithmetic: Howard Hinnant, "chrono-Compatible Low-Level Date Algorithms",
 * days_from_civil (https://howardhinnant.github.io/date_algorithms.html#days_from_civil).
 */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const dayOfYear = Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) + day - 1;
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146_097 + dayOfEra - 719_468;
}
