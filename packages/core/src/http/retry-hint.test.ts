import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type HeadersLike, headerValue } from './headers';
import { MAX_HINT_DELAY, parseRetryHint, parseSpentQuota, type RetryHintSource } from './retry-hint';

const NOW = Date.UTC(2024, 5, 15, 12, 0, 0);
const NOW_SECONDS = NOW / 1000;

const delayOf = (headers: HeadersLike | undefined, now = NOW) => parseRetryHint(headers, now)?.delay;
const sourceOf = (headers: HeadersLike | undefined) => parseRetryHint(headers, NOW)?.source;

describe('parseRetryHint', () => {
  it('reports the delay, the instant, the header and its raw value', () => {
    expect(parseRetryHint({ 'Retry-After': ' 120 ' }, NOW)).toEqual({
      delay: 120_000,
      retryAt: NOW + 120_000,
      source: 'retry-after',
      value: ' 120 ',
    });
  });

  it('gives no hint without headers or without any hint header', () => {
    expect(parseRetryHint(undefined, NOW)).toBeUndefined();
    expect(parseRetryHint({}, NOW)).toBeUndefined();
    expect(parseRetryHint({ 'content-type': 'text/plain', 'x-ratelimit-limit': '60' }, NOW)).toBeUndefined();
  });

  it('refuses a now that is not a finite number', () => {
    expect(() => parseRetryHint({ 'retry-after': '1' }, Number.NaN)).toThrow(
      new TypeError('Expected now to be a finite number of epoch milliseconds, got NaN'),
    );
    expect(() => parseRetryHint({}, Number.POSITIVE_INFINITY)).toThrow(TypeError);
  });

  describe('Retry-After (RFC 9110 §10.2.3)', () => {
    it.each([
      ['120', 120_000],
      ['0', 0],
      ['007', 7_000],
      ['\t30 ', 30_000],
      ['Sat, 15 Jun 2024 12:01:00 GMT', 60_000],
      ['Saturday, 15-Jun-24 12:00:05 GMT', 5_000],
      ['Sat Jun 15 12:00:30 2024', 30_000],
      ['Sat, 15 Jun 2024 11:00:00 GMT', 0],
      ['Thu, 01 Jan 1970 00:00:00 GMT', 0],
      ['Sat, 15 Jun 2024 12:00:00 GMT', 0],
    ])('reads %j as a wait of %d ms', (value, delay) => {
      expect(delayOf({ 'retry-after': value })).toBe(delay);
    });

    it.each([
      '-1',
      '+1',
      '1.5',
      '1e3',
      '0x10',
      '120s',
      'abc',
      '',
      '1 2',
      '1, 2',
      '١٢٠',
      '１２０',
      'Sat, 15 jun 2024 12:01:00 GMT',
      'Mon, 15 Jun 2024 12:01:00 GMT',
      'Fri, 30 Feb 2024 12:00:00 GMT',
      'Sun, 15 Jun 2024 24:00:00 GMT',
      'Sun, 06 Nov 1994 08:49:37 UTC',
      '2024-06-15T12:01:00Z',
    ])('ignores the malformed value %j', (value) => {
      expect(parseRetryHint({ 'retry-after': value }, NOW)).toBeUndefined();
    });

    it('clamps a huge wait to MAX_HINT_DELAY instead of ignoring it or returning Infinity', () => {
      expect(MAX_HINT_DELAY).toBe(100 * 365.25 * 24 * 3600 * 1000);
      expect(Number('9'.repeat(400))).toBe(Number.POSITIVE_INFINITY);
      expect(delayOf({ 'retry-after': '9'.repeat(400) })).toBe(MAX_HINT_DELAY);
      expect(delayOf({ 'retry-after': '9'.repeat(20) })).toBe(MAX_HINT_DELAY);
      expect(delayOf({ 'retry-after': 'Fri, 31 Dec 9999 23:59:59 GMT' })).toBe(MAX_HINT_DELAY);
      expect(parseRetryHint({ 'retry-after': '9'.repeat(400) }, NOW)?.retryAt).toBe(NOW + MAX_HINT_DELAY);
      // Just under the cap passes through unchanged.
      expect(delayOf({ 'retry-after': String(MAX_HINT_DELAY / 1000 - 1) })).toBe(MAX_HINT_DELAY - 1000);
    });

    it('reads an RFC 850 two-digit year relative to now (RFC 9110 §5.6.7)', () => {
      // At now = 2024, "74" is 2074 (not more than 50 years ahead) and "99" is 1999, long past.
      expect(delayOf({ 'retry-after': 'Friday, 15-Jun-74 12:00:00 GMT' })).toBe(
        Date.UTC(2074, 5, 15, 12) - NOW,
      );
      expect(delayOf({ 'retry-after': 'Tuesday, 15-Jun-99 12:00:00 GMT' })).toBe(0);
      // Naming 2099's weekday does not make it 2099: "99" still means 1999, where that weekday is wrong.
      expect(parseRetryHint({ 'retry-after': 'Monday, 15-Jun-99 12:00:00 GMT' }, NOW)).toBeUndefined();
    });
  });

  describe('RateLimit (draft-ietf-httpapi-ratelimit-headers)', () => {
    it.each([
      ['one exhausted policy', '"default";r=0;t=10', 10_000],
      ['a token as the policy name', 'default;r=0;t=10', 10_000],
      ['parameters in any order, with spaces after ";"', '"default"; t=10; r=0', 10_000],
      [
        'unknown parameters of every kind',
        '"d";r=0;t=10;pk=:cHsdsRa894==:;qu="requests";acme=?1;x;y=1.5;z=tok',
        10_000,
      ],
      [
        'the longest reset among exhausted policies',
        '"burst";r=5;t=1, "day";r=0;t=3600, "hour";r=0;t=60',
        3_600_000,
      ],
      ['an exhausted policy after one with quota', '"burst";r=5;t=1, "day";r=0;t=3600', 3_600_000],
      ['whitespace around members', '  "a";r=0;t=5 ,\t"b";r=0;t=7  ', 7_000],
      ['the last of duplicated parameters', '"d";r=9;r=0;t=1;t=4', 4_000],
      ['a reset of zero', '"d";r=0;t=0', 0],
      ['r written as -0', '"d";r=-0;t=3', 3_000],
      ['the older dictionary form', 'limit=100, remaining=0, reset=10', 10_000],
      ['the older dictionary form with parameters', 'limit=100;w=60, remaining=0, reset=10;x="y"', 10_000],
      ['a huge reset, clamped', `"d";r=0;t=${'9'.repeat(400)}`, MAX_HINT_DELAY],
    ])('reads %s', (_what, value, delay) => {
      expect(parseRetryHint({ RateLimit: value }, NOW)).toMatchObject({ delay, source: 'ratelimit' });
    });

    it('reads a list split over several fields', () => {
      expect(delayOf({ ratelimit: ['"a";r=0;t=5', '"b";r=0;t=7'] })).toBe(7_000);
      expect(
        delayOf(
          new Headers([
            ['RateLimit', '"a";r=0;t=5'],
            ['RateLimit', '"b";r=0;t=7'],
          ]),
        ),
      ).toBe(7_000);
    });

    it.each([
      ['quota left in every policy', '"burst";r=5;t=1, "day";r=100;t=3600'],
      ['an exhausted policy without a reset', '"default";r=0'],
      ['a policy without r', '"default";t=10'],
      ['a decimal reset', '"default";r=0;t=1.5'],
      ['a negative reset', '"default";r=0;t=-1'],
      ['a string reset', '"default";r=0;t="10"'],
      ['a trailing comma', '"default";r=0;t=10,'],
      ['a leading comma', ',"default";r=0;t=10'],
      ['an unterminated string', '"default;r=0;t=10'],
      ['an inner list', '("a" "b");r=0;t=10'],
      ['an integer item', '5;r=0;t=10'],
      ['trailing text', '"default";r=0;t=10 junk'],
      ['an upper-case parameter key', '"default";R=0;T=10'],
      ['a parameter without a key', '"default";=0;t=10'],
      ['a dictionary with quota left', 'limit=100, remaining=5, reset=10'],
      ['a dictionary without remaining', 'limit=100, reset=10'],
      ['a dictionary without reset', 'limit=100, remaining=0'],
      ['a dictionary with a decimal reset', 'limit=100, remaining=0, reset=1.5'],
      ['an empty field', ''],
      ['garbage', '¯\\_(ツ)_/¯'],
    ])('gives no hint for %s', (_what, value) => {
      expect(parseRetryHint({ ratelimit: value }, NOW)).toBeUndefined();
    });
  });

  describe('RateLimit-Reset (draft-ietf-httpapi-ratelimit-headers-01 … -06)', () => {
    it('reads delay-seconds', () => {
      expect(parseRetryHint({ 'RateLimit-Reset': '30' }, NOW)).toMatchObject({
        delay: 30_000,
        source: 'ratelimit-reset',
      });
      expect(delayOf({ 'ratelimit-reset': '30', 'ratelimit-remaining': '0' })).toBe(30_000);
      expect(delayOf({ 'ratelimit-reset': '9'.repeat(400) })).toBe(MAX_HINT_DELAY);
    });

    it('is no request to wait while RateLimit-Remaining says quota is left', () => {
      expect(parseRetryHint({ 'ratelimit-reset': '30', 'ratelimit-remaining': '5' }, NOW)).toBeUndefined();
      // A remaining count that does not parse does not veto the reset.
      expect(delayOf({ 'ratelimit-reset': '30', 'ratelimit-remaining': 'lots' })).toBe(30_000);
    });

    it.each(['-1', '1.5', 'abc', '', '1 2', 'Sat, 15 Jun 2024 12:01:00 GMT'])('ignores %j', (value) => {
      expect(parseRetryHint({ 'ratelimit-reset': value }, NOW)).toBeUndefined();
    });

    it.each([
      ['the largest number read as seconds', '999999999', 999_999_999_000],
      ['epoch seconds', String(NOW_SECONDS + 60), 60_000],
      ['epoch milliseconds', String(NOW + 1_500), 1_500],
      ['past epoch seconds', String(NOW_SECONDS - 60), 0],
      ['the smallest epoch-seconds value, long past', '1000000000', 0],
    ])(
      'reads %s as X-RateLimit-Reset does: a timestamp-sized value is a timestamp',
      (_what, value, delay) => {
        for (const headers of [
          { 'ratelimit-reset': value },
          { 'ratelimit-reset': value, 'ratelimit-remaining': '0' },
        ]) {
          expect(parseRetryHint(headers, NOW)).toMatchObject({ delay, retryAt: NOW + delay });
          expect(parseSpentQuota({ ...headers, 'ratelimit-remaining': '0' }, NOW)?.delay).toBe(delay);
        }
      },
    );
  });

  describe('X-RateLimit-Reset (de facto)', () => {
    it.each([
      ['small delay-seconds', '30', 30_000],
      ['decimal seconds', '1.5', 1_500],
      ['a fraction of a millisecond, rounded up', '0.0004', 1],
      ['the largest number read as seconds', '999999999', 999_999_999_000],
      ['epoch seconds', String(NOW_SECONDS + 60), 60_000],
      ['epoch seconds with a fraction', String(NOW_SECONDS + 1.25), 1_250],
      ['epoch milliseconds', String(NOW + 1_500), 1_500],
      ['past epoch seconds', String(NOW_SECONDS - 60), 0],
      ['past epoch milliseconds', String(NOW - 1), 0],
      ['the smallest epoch-seconds value, long past', '1000000000', 0],
      ['a huge number', '9'.repeat(400), MAX_HINT_DELAY],
    ])('reads %s', (_what, value, delay) => {
      expect(parseRetryHint({ 'X-RateLimit-Reset': value }, NOW)).toMatchObject({
        delay,
        retryAt: NOW + delay,
        source: 'x-ratelimit-reset',
      });
    });

    it('is no request to wait while X-RateLimit-Remaining says quota is left', () => {
      const reset = String(NOW_SECONDS + 60);
      expect(
        parseRetryHint({ 'x-ratelimit-reset': reset, 'x-ratelimit-remaining': '4999' }, NOW),
      ).toBeUndefined();
      expect(delayOf({ 'x-ratelimit-reset': reset, 'x-ratelimit-remaining': '0' })).toBe(60_000);
    });

    it.each(['-5', '+5', '1e3', '1.', '.5', 'abc', '', '1 2', '30s'])('ignores %j', (value) => {
      expect(parseRetryHint({ 'x-ratelimit-reset': value }, NOW)).toBeUndefined();
    });
  });

  describe('precedence', () => {
    const all = {
      'retry-after': '1',
      ratelimit: '"d";r=0;t=2',
      'ratelimit-reset': '3',
      'x-ratelimit-reset': '4',
    };

    it('prefers Retry-After, then RateLimit, then RateLimit-Reset, then X-RateLimit-Reset', () => {
      expect(parseRetryHint(all, NOW)).toMatchObject({ source: 'retry-after', delay: 1_000 });
      const { 'retry-after': _ra, ...noRetryAfter } = all;
      expect(parseRetryHint(noRetryAfter, NOW)).toMatchObject({ source: 'ratelimit', delay: 2_000 });
      const { ratelimit: _rl, ...noRateLimit } = noRetryAfter;
      expect(parseRetryHint(noRateLimit, NOW)).toMatchObject({ source: 'ratelimit-reset', delay: 3_000 });
      const { 'ratelimit-reset': _rr, ...onlyX } = noRateLimit;
      expect(parseRetryHint(onlyX, NOW)).toMatchObject({ source: 'x-ratelimit-reset', delay: 4_000 });
    });

    it('lets Retry-After win even when it asks for less', () => {
      expect(parseRetryHint({ 'retry-after': '0', ratelimit: '"d";r=0;t=60' }, NOW)).toMatchObject({
        source: 'retry-after',
        delay: 0,
      });
    });

    it('falls through a malformed value to the next header', () => {
      expect(sourceOf({ ...all, 'retry-after': '1.5' })).toBe('ratelimit');
      expect(sourceOf({ ...all, 'retry-after': 'soon', ratelimit: '"d";r=0;t=' })).toBe('ratelimit-reset');
      expect(sourceOf({ ...all, 'retry-after': '', ratelimit: '', 'ratelimit-reset': 'x' })).toBe(
        'x-ratelimit-reset',
      );
    });

    it('falls through a RateLimit field that asks for no wait', () => {
      expect(sourceOf({ ratelimit: '"d";r=10;t=2', 'x-ratelimit-reset': '4' })).toBe('x-ratelimit-reset');
    });

    it('gives no hint when every header is malformed', () => {
      expect(
        parseRetryHint(
          {
            'retry-after': '-1',
            ratelimit: '"d";r=1;t=2',
            'ratelimit-reset': 'x',
            'x-ratelimit-reset': '-4',
          },
          NOW,
        ),
      ).toBeUndefined();
    });
  });

  describe('header access', () => {
    it('reads a fetch Headers object', () => {
      expect(parseRetryHint(new Headers({ 'Retry-After': '5' }), NOW)).toMatchObject({
        delay: 5_000,
        value: '5',
      });
    });

    it('reads a plain object with mixed-case names', () => {
      expect(delayOf({ 'RETRY-AFTER': '5' })).toBe(5_000);
      expect(delayOf({ 'X-RateLimit-Reset': '6' })).toBe(6_000);
      expect(delayOf({ rAtElImIt: '"d";r=0;t=7' })).toBe(7_000);
    });

    it('joins repeated values, so duplicate Retry-After fields are malformed (RFC 9110 §5.3)', () => {
      expect(parseRetryHint({ 'retry-after': ['1', '2'] }, NOW)).toBeUndefined();
      expect(parseRetryHint({ 'Retry-After': '1', 'retry-after': '2' }, NOW)).toBeUndefined();
      expect(delayOf({ 'retry-after': ['3'] })).toBe(3_000);
      expect(parseRetryHint({ 'retry-after': ['1', '2'], 'ratelimit-reset': '9' }, NOW)?.source).toBe(
        'ratelimit-reset',
      );
    });

    it('asks an object with a get method, such as AxiosHeaders', () => {
      const asked: string[] = [];
      const headers = {
        get(name: string) {
          asked.push(name);
          return name.toLowerCase() === 'ratelimit-reset' ? '8' : null;
        },
      };
      expect(parseRetryHint(headers, NOW)).toMatchObject({ delay: 8_000, source: 'ratelimit-reset' });
      expect(asked).toEqual(['retry-after', 'ratelimit', 'ratelimit-reset', 'ratelimit-remaining']);
    });

    it('reads a numeric value as its digits', () => {
      expect(delayOf({ 'retry-after': 9 })).toBe(9_000);
    });
  });
});

describe('headerValue', () => {
  it('matches names case-insensitively in every shape', () => {
    expect(headerValue({ 'Content-Type': 'a' }, 'content-type')).toBe('a');
    expect(headerValue({ 'content-type': 'a' }, 'Content-Type')).toBe('a');
    expect(headerValue(new Headers({ 'Content-Type': 'a' }), 'CONTENT-TYPE')).toBe('a');
    expect(headerValue({ get: (name: string) => (name === 'x' ? 'y' : undefined) }, 'x')).toBe('y');
  });

  it('joins arrays and same-named keys with ", " and turns numbers into text', () => {
    expect(headerValue({ 'set-cookie': ['a=1', 'b=2'] }, 'Set-Cookie')).toBe('a=1, b=2');
    expect(headerValue({ Warning: 'a', warning: ['b', 'c'] }, 'warning')).toBe('a, b, c');
    expect(headerValue({ 'content-length': 42 }, 'content-length')).toBe('42');
  });

  it('treats null, undefined and empty arrays as absent, and keeps an empty string', () => {
    expect(headerValue({ a: null, b: undefined, c: [] }, 'a')).toBeUndefined();
    expect(headerValue({ a: null, b: undefined, c: [] }, 'b')).toBeUndefined();
    expect(headerValue({ a: null, b: undefined, c: [] }, 'c')).toBeUndefined();
    expect(headerValue({ a: '' }, 'a')).toBe('');
    expect(headerValue(undefined, 'a')).toBeUndefined();
    expect(headerValue(new Headers(), 'a')).toBeUndefined();
  });

  it('reads what an accessor returns loosely typed (arrays, numbers) and ignores anything else', () => {
    const loose = (value: unknown) => ({ get: () => value }) as unknown as HeadersLike;
    expect(headerValue(loose(['1', 2]), 'a')).toBe('1, 2');
    expect(headerValue(loose(7), 'a')).toBe('7');
    expect(headerValue(loose({ toString: () => 'x' }), 'a')).toBeUndefined();
    expect(headerValue(loose(true), 'a')).toBeUndefined();
  });

  it('reads own properties only, never inherited ones or __proto__', () => {
    expect(headerValue(Object.create({ 'retry-after': '5' }) as HeadersLike, 'retry-after')).toBeUndefined();
    expect(headerValue({}, 'constructor')).toBeUndefined();
    expect(headerValue({}, 'toString')).toBeUndefined();
    expect(headerValue({}, '__proto__')).toBeUndefined();
    expect(headerValue(JSON.parse('{"__proto__": "5"}') as HeadersLike, '__proto__')).toBeUndefined();
    expect(headerValue(Object.assign(Object.create(null), { a: '1' }) as HeadersLike, 'A')).toBe('1');
  });

  it('treats a plain header named "get" as a header, not as an accessor', () => {
    expect(headerValue({ get: 'yes', other: 'x' }, 'GET')).toBe('yes');
    expect(headerValue({ get: 'yes', other: 'x' }, 'other')).toBe('x');
  });
});

describe('parseRetryHint properties', () => {
  const SOURCES: readonly RetryHintSource[] = [
    'retry-after',
    'ratelimit',
    'ratelimit-reset',
    'x-ratelimit-reset',
  ];
  const digits = fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: 1, maxLength: 400 });
  const fragments = fc.constantFrom(
    ...[
      'Sun',
      'Saturday',
      'Mon',
      ', ',
      ' ',
      '  ',
      '-',
      ':',
      '.',
      '06',
      '6',
      '15',
      '29',
      '30',
      'Jun',
      'Feb',
      'jun',
    ],
    ...[
      '24',
      '74',
      '1994',
      '2024',
      '9999',
      '12:00:00',
      '23:59:60',
      'GMT',
      'UTC',
      '"d"',
      'tok',
      ';r=0',
      ';r=1',
    ],
    ...[
      ';t=',
      ';t=-',
      'remaining=0',
      'reset=',
      'limit=1',
      '=',
      ',',
      '(',
      '"',
      '?1',
      ':abc=:',
      '1e3',
      '9'.repeat(30),
    ],
  );
  const value = fc.oneof(
    fc.string(),
    fc.string({ unit: 'binary' }),
    digits,
    fc.tuple(digits, fc.constantFrom('.', ' ', ', '), digits).map((parts) => parts.join('')),
    fc.array(fc.oneof(fragments, digits), { maxLength: 10 }).map((parts) => parts.join('')),
  );
  const now = fc.oneof(
    fc.integer({ min: 0, max: Date.UTC(2200, 0, 1) }),
    fc.double({ min: -1e15, max: 1e15, noNaN: true, noDefaultInfinity: true }),
  );

  it('gives, for any value in any hint header, no hint or a finite delay in [0, MAX_HINT_DELAY]', () => {
    fc.assert(
      fc.property(fc.constantFrom(...SOURCES), value, now, (source, text, at) => {
        const hint = parseRetryHint({ [source]: text }, at);
        if (hint === undefined) return;
        expect(Number.isInteger(hint.delay)).toBe(true);
        expect(hint.delay).toBeGreaterThanOrEqual(0);
        expect(hint.delay).toBeLessThanOrEqual(MAX_HINT_DELAY);
        expect(hint.retryAt).toBe(at + hint.delay);
        expect(hint.source).toBe(source);
        expect(hint.value).toBe(text);
      }),
      { numRuns: 500 },
    );
  });

  it('reads any digit string in Retry-After as that many seconds, clamped', () => {
    fc.assert(
      fc.property(digits, now, (text, at) => {
        expect(parseRetryHint({ 'retry-after': text }, at)?.delay).toBe(
          Math.min(Number(text) * 1000, MAX_HINT_DELAY),
        );
      }),
    );
  });
});

describe('hostile hint values', () => {
  // Each hint header with the companion that makes a reset count (a remaining count of zero).
  const FIELDS: ReadonlyArray<readonly [RetryHintSource, (value: string) => Record<string, string>]> = [
    ['retry-after', (value) => ({ 'retry-after': value })],
    ['ratelimit', (value) => ({ ratelimit: `"default";r=0;t=${value}` })],
    ['ratelimit-reset', (value) => ({ 'ratelimit-remaining': '0', 'ratelimit-reset': value })],
    ['x-ratelimit-reset', (value) => ({ 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': value })],
  ];
  // UTF-8 bytes as a client that reads header bytes as Latin-1 (fetch, node) hands them over.
  const asLatin1 = (text: string) => Buffer.from(text, 'utf8').toString('latin1');
  const VALUES = [
    '0',
    '-0',
    '-1',
    '-1000000000',
    '1000000000',
    '1e9',
    '1e30',
    `1${'0'.repeat(30)}`,
    'NaN',
    'Infinity',
    '-Infinity',
    '0x10',
    String(NOW_SECONDS - 86_400 * 365),
    String(NOW_SECONDS + 86_400 * 365 * 1000),
    String(NOW + 86_400_000),
    'Thu, 01 Jan 1970 00:00:00 GMT',
    'Fri, 31 Dec 9999 23:59:59 GMT',
    '9'.repeat(10_240),
    'x'.repeat(10_240),
    `${'1'.repeat(5_000)}.${'1'.repeat(5_000)}`,
    '١٢٠',
    '１２０',
    asLatin1('١٢٠'),
    asLatin1('30 ⏳'),
    '\u0000',
    '',
  ];

  it.each(FIELDS)(
    '%s: no hint, or a whole delay in [0, MAX_HINT_DELAY] with retryAt = now + delay',
    (_source, field) => {
      for (const now of [NOW, 0, -1e15, 1e15]) {
        for (const value of VALUES) {
          for (const hint of [parseRetryHint(field(value), now), parseSpentQuota(field(value), now)]) {
            if (hint === undefined) continue;
            expect(Number.isInteger(hint.delay), value.slice(0, 40)).toBe(true);
            expect(hint.delay).toBeGreaterThanOrEqual(0);
            expect(hint.delay).toBeLessThanOrEqual(MAX_HINT_DELAY);
            expect(hint.retryAt).toBe(now + hint.delay);
          }
        }
      }
    },
  );

  it.each([
    ['0', 0],
    ['-1', undefined],
    ['NaN', undefined],
    ['1e30', undefined],
    ['١٢٠', undefined],
    ['1000000000', 1_000_000_000_000],
    [`1${'0'.repeat(30)}`, MAX_HINT_DELAY],
    ['9'.repeat(10_240), MAX_HINT_DELAY],
    ['Thu, 01 Jan 1970 00:00:00 GMT', 0],
    ['Fri, 31 Dec 9999 23:59:59 GMT', MAX_HINT_DELAY],
  ] as const)('Retry-After %j: %o', (value, delay) => {
    expect(delayOf({ 'retry-after': value })).toBe(delay);
  });

  it('reads a reset in epoch seconds or milliseconds as the time it names, past or future', () => {
    for (const name of ['ratelimit-reset', 'x-ratelimit-reset']) {
      const remaining = name.replace('reset', 'remaining');
      const at = (value: string) => parseSpentQuota({ [remaining]: '0', [name]: value }, NOW)?.retryAt;
      expect(at(String(NOW_SECONDS - 3600))).toBe(NOW);
      expect(at(String(NOW_SECONDS + 3600))).toBe(NOW + 3_600_000);
      expect(at(String(NOW + 3_600_000))).toBe(NOW + 3_600_000);
      // Year 2058 as epoch seconds: 34 years from now, not 2.8 billion seconds (clamped to a century).
      expect(at(String(Date.UTC(2058, 0, 1) / 1000))).toBe(Date.UTC(2058, 0, 1));
    }
  });

  it('parses a megabyte of hostile text in each field in linear time (a backtracking pattern would hang)', () => {
    const big = 1 << 20;
    const shapes = [
      '9'.repeat(big),
      `${'9'.repeat(big)}x`,
      `${'1.'.repeat(big / 2)}`,
      ' '.repeat(big),
      `"${'a'.repeat(big)}`,
      `"d";${'a;'.repeat(big / 2)}`,
      `${'a=1,'.repeat(big / 4)}`,
      `"d";r=0;t=${'9'.repeat(big)}`,
      `Sun, 06 Nov 1994 08:49:37 GMT${' '.repeat(big)}x`,
    ];
    for (const [, field] of FIELDS) {
      for (const value of shapes) {
        const hint = parseRetryHint(field(value), NOW);
        expect(hint === undefined || (hint.delay >= 0 && hint.delay <= MAX_HINT_DELAY)).toBe(true);
      }
    }
  });
});
