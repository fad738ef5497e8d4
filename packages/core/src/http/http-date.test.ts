import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseHttpDate } from './http-date';

// RFC 9110 §5.6.7's own example instant, in all three forms.
const EXAMPLE = Date.UTC(1994, 10, 6, 8, 49, 37);
const NOW = Date.UTC(2024, 5, 15, 12, 0, 0);

const SHORT_DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const LONG_DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

const pad = (n: number, width = 2) => String(n).padStart(width, '0');
const clock = (d: Date) => `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;

// Formats written out here (not with toUTCString) so the tests do not share the code under test's view.
function rfc850(ms: number): string {
  const d = new Date(ms);
  const yy = pad(d.getUTCFullYear() % 100);
  return `${LONG_DAYS[d.getUTCDay()]}, ${pad(d.getUTCDate())}-${MONTHS[d.getUTCMonth()]}-${yy} ${clock(d)} GMT`;
}

function asctime(ms: number): string {
  const d = new Date(ms);
  const day = String(d.getUTCDate()).padStart(2, ' ');
  return `${SHORT_DAYS[d.getUTCDay()]} ${MONTHS[d.getUTCMonth()]} ${day} ${clock(d)} ${pad(d.getUTCFullYear(), 4)}`;
}

function utcYear(year: number, month = 0, day = 1): number {
  const d = new Date(0);
  d.setUTCFullYear(year, month, day);
  return d.getTime();
}

describe('parseHttpDate', () => {
  it.each([
    ['IMF-fixdate', 'Sun, 06 Nov 1994 08:49:37 GMT'],
    ['RFC 850', 'Sunday, 06-Nov-94 08:49:37 GMT'],
    ['asctime, space-padded day', 'Sun Nov  6 08:49:37 1994'],
    ['asctime, two-digit day', 'Sun Nov 06 08:49:37 1994'],
    ['IMF-fixdate with surrounding spaces and tabs', ' \tSun, 06 Nov 1994 08:49:37 GMT\t '],
  ])('reads the %s form', (_form, text) => {
    expect(parseHttpDate(text, NOW)).toBe(EXAMPLE);
  });

  it.each([
    ['a leap day in a leap year', 'Thu, 29 Feb 2024 12:00:00 GMT', Date.UTC(2024, 1, 29, 12)],
    ['a leap day in a 400-year leap year', 'Tue, 29 Feb 2000 00:00:00 GMT', Date.UTC(2000, 1, 29)],
    [
      'the last second of a month with 31 days',
      'Sun, 31 Dec 2023 23:59:59 GMT',
      Date.UTC(2023, 11, 31, 23, 59, 59),
    ],
    ['the epoch', 'Thu, 01 Jan 1970 00:00:00 GMT', 0],
    [
      'the last representable IMF-fixdate',
      'Fri, 31 Dec 9999 23:59:59 GMT',
      Date.UTC(9999, 11, 31, 23, 59, 59),
    ],
    ['year 0099 (not 1999, as Date.UTC would read it)', 'Thu, 01 Jan 0099 00:00:00 GMT', utcYear(99)],
    ['year 0000 in the proleptic Gregorian calendar', 'Sat, 01 Jan 0000 00:00:00 GMT', utcYear(0)],
  ])('reads %s', (_what, text, expected) => {
    expect(parseHttpDate(text)).toBe(expected);
  });

  it('reads a leap second as the 59th second of the same minute, not the next day', () => {
    expect(parseHttpDate('Sat, 31 Dec 2016 23:59:60 GMT')).toBe(Date.UTC(2016, 11, 31, 23, 59, 59));
    expect(parseHttpDate('Sat Dec 31 23:59:60 2016')).toBe(Date.UTC(2016, 11, 31, 23, 59, 59));
  });

  it.each([
    ['empty', ''],
    ['only spaces', '   '],
    ['delay-seconds', '120'],
    ['an epoch number', '784111777'],
    ['ISO 8601', '1994-11-06T08:49:37Z'],
    ['a lower-case month', 'Sun, 06 nov 1994 08:49:37 GMT'],
    ['a lower-case day name', 'sun, 06 Nov 1994 08:49:37 GMT'],
    ['an upper-case day name', 'SUN, 06 Nov 1994 08:49:37 GMT'],
    ['a lower-case zone', 'Sun, 06 Nov 1994 08:49:37 gmt'],
    ['the UTC zone', 'Sun, 06 Nov 1994 08:49:37 UTC'],
    ['a numeric zone', 'Sun, 06 Nov 1994 08:49:37 +0000'],
    ['no zone', 'Sun, 06 Nov 1994 08:49:37'],
    ['a weekday that is not the date’s', 'Mon, 06 Nov 1994 08:49:37 GMT'],
    ['an unknown day name', 'Sux, 06 Nov 1994 08:49:37 GMT'],
    ['an unknown month', 'Sun, 06 Nox 1994 08:49:37 GMT'],
    ['30 February', 'Thu, 30 Feb 2023 00:00:00 GMT'],
    ['29 February in a common year', 'Wed, 29 Feb 2023 00:00:00 GMT'],
    ['29 February 1900 (a century, not a leap year)', 'Thu, 29 Feb 1900 00:00:00 GMT'],
    ['31 April', 'Mon, 31 Apr 2023 00:00:00 GMT'],
    ['day 00', 'Sun, 00 Nov 1994 08:49:37 GMT'],
    ['hour 24', 'Sun, 06 Nov 1994 24:00:00 GMT'],
    ['hour 24 naming the weekday it would roll over into', 'Mon, 06 Nov 1994 24:00:00 GMT'],
    ['minute 60', 'Sun, 06 Nov 1994 08:60:00 GMT'],
    ['second 61', 'Sun, 06 Nov 1994 08:49:61 GMT'],
    ['a one-digit day in IMF-fixdate', 'Sun, 6 Nov 1994 08:49:37 GMT'],
    ['a two-digit year in IMF-fixdate', 'Sun, 06 Nov 94 08:49:37 GMT'],
    ['a five-digit year', 'Sun, 06 Nov 01994 08:49:37 GMT'],
    ['a one-digit hour', 'Sun, 06 Nov 1994 8:49:37 GMT'],
    ['no comma', 'Sun 06 Nov 1994 08:49:37 GMT'],
    ['a doubled space', 'Sun, 06 Nov  1994 08:49:37 GMT'],
    ['trailing text', 'Sun, 06 Nov 1994 08:49:37 GMT x'],
    ['two joined dates', 'Sun, 06 Nov 1994 08:49:37 GMT, Sun, 06 Nov 1994 08:49:37 GMT'],
    ['a trailing line break (not HTTP whitespace)', 'Sun, 06 Nov 1994 08:49:37 GMT\n'],
    ['a leading no-break space (not HTTP whitespace)', '\u00a0Sun, 06 Nov 1994 08:49:37 GMT'],
    ['non-ASCII digits', 'Sun, ٠٦ Nov 1994 08:49:37 GMT'],
    ['RFC 850 with a short day name', 'Sun, 06-Nov-94 08:49:37 GMT'],
    ['RFC 850 with a four-digit year', 'Sunday, 06-Nov-1994 08:49:37 GMT'],
    ['RFC 850 with a lower-case day name', 'sunday, 06-Nov-94 08:49:37 GMT'],
    ['RFC 850 with the wrong weekday', 'Monday, 06-Nov-94 08:49:37 GMT'],
    ['asctime with one space before a one-digit day', 'Sun Nov 6 08:49:37 1994'],
    ['asctime with a zone', 'Sun Nov  6 08:49:37 1994 GMT'],
    ['asctime with a long day name', 'Sunday Nov  6 08:49:37 1994'],
    ['asctime with the wrong weekday', 'Mon Nov  6 08:49:37 1994'],
  ])('rejects %s', (_what, text) => {
    expect(parseHttpDate(text, NOW)).toBeUndefined();
  });

  describe('two-digit years of the RFC 850 form (RFC 9110 §5.6.7: not more than 50 years ahead)', () => {
    it.each([
      ['the current year', Date.UTC(2024, 2, 1)],
      ['a recent past year', Date.UTC(1999, 11, 31, 23, 59, 59)],
      ['year 2000', Date.UTC(2000, 1, 29, 6)],
      ['a near future year', Date.UTC(2030, 0, 1)],
      ['exactly 50 years ahead', Date.UTC(2074, 5, 15, 12, 0, 0)],
      ['one second more than 50 years ago, read as the past', Date.UTC(1974, 5, 15, 12, 0, 1)],
      ['a date 25 years ahead', Date.UTC(2049, 0, 1)],
    ])('reads %s in the century that keeps it within 50 years of now', (_what, instant) => {
      expect(parseHttpDate(rfc850(instant), NOW)).toBe(instant);
    });

    it('turns a year more than 50 years ahead into the past century, so its weekday must be that year’s', () => {
      // 2074-06-15 12:00:01 is one second too far ahead: "74" means 1974, and the 2074 weekday no longer fits.
      const tooFar = Date.UTC(2074, 5, 15, 12, 0, 1);
      expect(parseHttpDate(rfc850(tooFar), NOW)).toBeUndefined();
      expect(parseHttpDate(rfc850(Date.UTC(1974, 5, 15, 12, 0, 1)), NOW)).toBe(
        Date.UTC(1974, 5, 15, 12, 0, 1),
      );
    });

    it('moves with now: the same text names a different century in 2060', () => {
      const late = Date.UTC(2060, 5, 15, 12);
      expect(parseHttpDate(rfc850(Date.UTC(2110, 0, 1)), late)).toBe(Date.UTC(2110, 0, 1));
      expect(parseHttpDate(rfc850(Date.UTC(2010, 6, 1)), late)).toBe(Date.UTC(2010, 6, 1));
      expect(parseHttpDate(rfc850(Date.UTC(2010, 6, 1)), NOW)).toBe(Date.UTC(2010, 6, 1));
    });

    it('rejects the RFC 850 form without a finite now instead of guessing the century', () => {
      const text = 'Sunday, 06-Nov-94 08:49:37 GMT';
      expect(parseHttpDate(text)).toBeUndefined();
      expect(parseHttpDate(text, Number.NaN)).toBeUndefined();
      expect(parseHttpDate(text, Number.POSITIVE_INFINITY)).toBeUndefined();
      // The other forms never need now.
      expect(parseHttpDate('Sun, 06 Nov 1994 08:49:37 GMT')).toBe(EXAMPLE);
      expect(parseHttpDate('Sun Nov  6 08:49:37 1994')).toBe(EXAMPLE);
    });

    it('rejects 29 February when the chosen century’s year is not a leap year', () => {
      // With now in 2024, "00" is 2000 (a leap year) but "99" is 1999 and "01" is 2001.
      expect(parseHttpDate('Tuesday, 29-Feb-00 00:00:00 GMT', NOW)).toBe(Date.UTC(2000, 1, 29));
      expect(parseHttpDate('Monday, 29-Feb-99 00:00:00 GMT', NOW)).toBeUndefined();
    });
  });

  // From year 0 to the end of year 9999: every instant a 4-digit IMF-fixdate year can name.
  const anyInstant = fc.integer({ min: utcYear(0), max: Date.UTC(9999, 11, 31, 23, 59, 59, 999) });

  it('round-trips any instant through toUTCString to the second', () => {
    fc.assert(
      fc.property(anyInstant, (ms) => {
        expect(parseHttpDate(new Date(ms).toUTCString())).toBe(Math.floor(ms / 1000) * 1000);
      }),
    );
  });

  it('reads the same instant from all three forms (RFC 850 taken relative to a nearby now)', () => {
    fc.assert(
      fc.property(anyInstant, fc.integer({ min: -49 * 365, max: 49 * 365 }), (ms, daysAway) => {
        const second = Math.floor(ms / 1000) * 1000;
        expect(parseHttpDate(asctime(ms))).toBe(second);
        expect(parseHttpDate(rfc850(ms), ms + daysAway * 86_400_000)).toBe(second);
      }),
    );
  });

  it('returns undefined or a whole second for any text, and never throws', () => {
    const fragments = fc.constantFrom(
      'Sun',
      'Sunday',
      'Mon',
      ', ',
      ' ',
      '  ',
      '-',
      ':',
      '06',
      '6',
      '29',
      '30',
      'Nov',
      'Feb',
      'nov',
      '94',
      '00',
      '1994',
      '2000',
      '08:49:37',
      '23:59:60',
      '24:00:00',
      'GMT',
      'UTC',
    );
    const text = fc.oneof(
      fc.string(),
      fc.string({ unit: 'binary' }),
      fc.array(fragments, { maxLength: 12 }).map((parts) => parts.join('')),
    );
    fc.assert(
      fc.property(text, fc.option(fc.integer(), { nil: undefined }), (input, now) => {
        const result = parseHttpDate(input, now);
        if (result !== undefined) expect(Number.isInteger(result / 1000)).toBe(true);
      }),
    );
  });
});
