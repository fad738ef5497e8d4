import type { RetrylineEvent } from '@retryline/core';
import { describe, expect, it } from 'vitest';
import { MAX_HEADERS, MAX_STRING_LENGTH, sanitizeEvents, stripUserinfo, validateEvent } from './schema';

const base = { v: 1, requestId: 'req-1', t: 1_700_000_000_000 } as const;

/** One valid event of every type in core's vocabulary, with every optional field. */
const valid: Record<RetrylineEvent['type'], RetrylineEvent> = {
  'request-start': {
    ...base,
    type: 'request-start',
    client: 'fetch',
    operation: 'load orders',
    method: 'GET',
    url: 'https://api.example/orders?page=***',
  },
  'attempt-start': { ...base, type: 'attempt-start', attempt: 1, headers: { accept: 'application/json' } },
  'attempt-end': {
    ...base,
    type: 'attempt-end',
    attempt: 1,
    outcome: 'retry',
    duration: 12.5,
    error: { name: 'TypeError', message: 'fetch failed', code: 'ECONNRESET' },
    phase: 'response',
    status: 503,
    headers: { 'retry-after': '2' },
  },
  'retry-scheduled': {
    ...base,
    type: 'retry-scheduled',
    attempt: 2,
    retry: 1,
    delay: 2000,
    reason: 'retry-after',
    strategy: 'exponential',
    jitter: 'full',
    raw: 200,
    capped: 200,
    hint: { source: 'retry-after', delay: 2000 },
  },
  'request-end': {
    ...base,
    type: 'request-end',
    outcome: 'exhausted',
    attempts: 3,
    totalDelay: 2400,
    duration: 2600,
    error: {
      name: 'RetriesExhaustedError',
      message: 'GET https://api.example/orders failed after 3 attempts',
    },
    status: 503,
  },
  'breaker-state': { ...base, type: 'breaker-state', key: 'https://api.example', from: 'closed', to: 'open' },
  budget: { ...base, type: 'budget', key: 'https://api.example', remaining: 4, allowed: true },
  'guard-wait': {
    ...base,
    type: 'guard-wait',
    attempt: 1,
    guard: 'limiter',
    key: 'https://api.example',
    waited: 40,
  },
  'retry-parked': { ...base, type: 'retry-parked', attempt: 2, key: 'https://api.example', failures: 3 },
  'retry-released': {
    ...base,
    type: 'retry-released',
    attempt: 2,
    key: 'https://api.example',
    reason: 'probe',
    waited: 1250,
  },
};

describe('validateEvent', () => {
  it.each(Object.values(valid))('keeps a valid $type event unchanged', (event) => {
    expect(validateEvent(structuredClone(event))).toEqual(event);
  });

  it('keeps events without their optional fields', () => {
    expect(validateEvent({ ...base, type: 'request-start', client: 'retry' })).toEqual({
      ...base,
      type: 'request-start',
      client: 'retry',
    });
    expect(
      validateEvent({ ...base, type: 'attempt-end', attempt: 1, outcome: 'success', duration: 3 }),
    ).toBeDefined();
  });

  it.each([
    ['version 2', { v: 2 }],
    ['version "1"', { v: '1' }],
    ['an unknown type', { type: 'request-teleported' }],
    ['a type from the prototype', { type: 'toString' }],
    ['an empty request id', { requestId: '' }],
    ['a numeric request id', { requestId: 42 }],
    ['a request id over 200 characters', { requestId: 'x'.repeat(201) }],
    ['a non-finite time', { t: Number.POSITIVE_INFINITY }],
    ['a time as a string', { t: '1700000000000' }],
  ])('drops an event with %s', (_, patch) => {
    expect(validateEvent({ ...valid['request-start'], ...patch })).toBeUndefined();
  });

  it('accepts a request id of exactly 200 characters', () => {
    expect(validateEvent({ ...valid.budget, requestId: 'x'.repeat(200) })?.requestId).toHaveLength(200);
  });

  it.each([
    ['request-start without client', 'request-start', { client: undefined }],
    ['attempt-start with attempt -1', 'attempt-start', { attempt: -1 }],
    ['attempt-start with attempt 1.5', 'attempt-start', { attempt: 1.5 }],
    ['attempt-end with an unknown outcome', 'attempt-end', { outcome: 'maybe' }],
    ['attempt-end with status 1000', 'attempt-end', { status: 1000 }],
    ['attempt-end with a string status', 'attempt-end', { status: '503' }],
    ['attempt-end with an unknown phase', 'attempt-end', { phase: 'halfway' }],
    ['attempt-end with an error lacking a message', 'attempt-end', { error: { name: 'Error' } }],
    ['attempt-end with a numeric error code', 'attempt-end', { error: { name: 'E', message: 'm', code: 5 } }],
    ['attempt-end with NaN duration', 'attempt-end', { duration: Number.NaN }],
    ['attempt-end with headers as an array', 'attempt-end', { headers: [['a', 'b']] }],
    ['attempt-end with a numeric header value', 'attempt-end', { headers: { 'retry-after': 2 } }],
    ['retry-scheduled with an unknown reason', 'retry-scheduled', { reason: 'vibes' }],
    ['retry-scheduled with an unknown strategy', 'retry-scheduled', { strategy: 'fibonacci' }],
    ['retry-scheduled with an unknown jitter', 'retry-scheduled', { jitter: 'chaotic' }],
    ['retry-scheduled with a hint lacking its delay', 'retry-scheduled', { hint: { source: 'retry-after' } }],
    ['request-end with an unknown outcome', 'request-end', { outcome: 'great' }],
    ['request-end without attempts', 'request-end', { attempts: undefined }],
    ['breaker-state with an unknown state', 'breaker-state', { to: 'ajar' }],
    ['breaker-state with an empty key', 'breaker-state', { key: '' }],
    ['breaker-state with a retryAt that is not a number', 'breaker-state', { retryAt: '2026-01-01' }],
    ['budget with allowed as a string', 'budget', { allowed: 'yes' }],
    ['guard-wait with an unknown guard', 'guard-wait', { guard: 'moat' }],
  ] as const)('drops %s', (_, type, patch) => {
    expect(validateEvent({ ...valid[type], ...patch })).toBeUndefined();
  });

  it('keeps the mark of an attempt answered by an injected fault, and drops an event whose mark is anything but true', () => {
    for (const type of ['attempt-start', 'attempt-end'] as const) {
      expect(validateEvent({ ...valid[type], injected: true })).toEqual({ ...valid[type], injected: true });
      expect(validateEvent({ ...valid[type], injected: false })).toBeUndefined();
      expect(validateEvent({ ...valid[type], injected: 'yes' })).toBeUndefined();
    }
    expect(validateEvent({ ...valid['request-end'], injected: true })).toEqual(valid['request-end']);
  });

  describe('the endpoint and hedge marks of an attempt', () => {
    const start = valid['attempt-start'];
    const end = valid['attempt-end'];

    it('keeps an attempt’s endpoint, its hedge mark, and on its end who answered it', () => {
      const marks = { endpoint: 'https://eu.api.example', hedge: true };
      expect(validateEvent({ ...start, ...marks })).toEqual({ ...start, ...marks });
      expect(validateEvent({ ...end, ...marks })).toEqual({ ...end, ...marks });
      expect(validateEvent({ ...end, answeredBy: 'hedge' })).toEqual({ ...end, answeredBy: 'hedge' });
      // Only an attempt's end says who answered it: elsewhere the field is not core's, and dropped.
      expect(validateEvent({ ...start, answeredBy: 'hedge' })).toEqual(start);
      expect(validateEvent({ ...valid['request-end'], hedge: true, endpoint: 'x' })).toEqual(
        valid['request-end'],
      );
    });

    it.each([
      ['a hedge mark that is not true', { hedge: false }],
      ['a hedge mark as a string', { hedge: 'true' }],
      ['an endpoint that is not a string', { endpoint: 42 }],
      ['an endpoint as an object', { endpoint: { href: 'https://eu.api.example' } }],
      ['an endpoint as an array', { endpoint: ['https://eu.api.example'] }],
    ])('drops an attempt event with %s', (_, patch) => {
      expect(validateEvent({ ...start, ...patch })).toBeUndefined();
      expect(validateEvent({ ...end, ...patch })).toBeUndefined();
    });

    it.each([
      ['another answerer', 'primary'],
      ['another case', 'Hedge'],
      ['a mark', true],
      ['nothing said', ''],
    ])('drops an attempt end answered by %s', (_, answeredBy) => {
      expect(validateEvent({ ...end, answeredBy })).toBeUndefined();
    });

    it('cuts an endpoint to 2,048 characters and strips its credentials, as a request URL', () => {
      const long = validateEvent({ ...start, endpoint: `https://eu.api.example/${'a'.repeat(5000)}` });
      expect(long?.type === 'attempt-start' && long.endpoint).toHaveLength(MAX_STRING_LENGTH);
      expect(long?.type === 'attempt-start' && long.endpoint?.endsWith('…')).toBe(true);
      const credentialed = validateEvent({ ...end, endpoint: 'https://svc:s3cret@eu.api.example/v1' });
      expect(credentialed?.type === 'attempt-end' && credentialed.endpoint).toBe('https://eu.api.example/v1');
      expect(JSON.stringify(credentialed)).not.toContain('s3cret');
    });

    it('takes no mark from the prototype or from a getter', () => {
      expect(validateEvent(Object.assign(Object.create({ hedge: true, endpoint: 'x' }), start))).toEqual(
        start,
      );
      let called = false;
      const withGetter = {
        ...end,
        get answeredBy() {
          called = true;
          return 'hedge';
        },
      };
      expect(validateEvent(withGetter)).toEqual(end);
      expect(called).toBe(false);
    });
  });

  it('drops fields core does not define', () => {
    const event = validateEvent({ ...valid.budget, html: '<img onerror=alert(1)>', body: 'secret' });
    expect(event).toEqual(valid.budget);
    expect(event).not.toHaveProperty('html');
    expect(event).not.toHaveProperty('body');
  });

  it('drops non-objects', () => {
    for (const value of [null, undefined, 1, 'event', [valid.budget], () => valid.budget]) {
      expect(validateEvent(value)).toBeUndefined();
    }
  });

  it('cuts free-text strings to 2,048 characters', () => {
    const event = validateEvent({
      ...valid['request-end'],
      error: { name: 'Error', message: 'm'.repeat(10_000) },
    });
    expect(event?.type === 'request-end' && event.error?.message).toHaveLength(MAX_STRING_LENGTH);
    expect(event?.type === 'request-end' && event.error?.message.endsWith('…')).toBe(true);
    const start = validateEvent({
      ...valid['request-start'],
      url: `https://api.example/${'a'.repeat(5000)}`,
    });
    expect(start?.type === 'request-start' && start.url).toHaveLength(MAX_STRING_LENGTH);
  });

  it('drops an event with a guard key over 2,048 characters instead of cutting it', () => {
    expect(validateEvent({ ...valid.budget, key: 'k'.repeat(MAX_STRING_LENGTH + 1) })).toBeUndefined();
  });

  it(`drops an event whose header map has more than ${MAX_HEADERS} entries`, () => {
    const headers = Object.fromEntries(Array.from({ length: MAX_HEADERS + 1 }, (_, i) => [`x-h${i}`, 'v']));
    expect(validateEvent({ ...valid['attempt-start'], headers })).toBeUndefined();
    const atLimit = Object.fromEntries(Array.from({ length: MAX_HEADERS }, (_, i) => [`x-h${i}`, 'v']));
    expect(validateEvent({ ...valid['attempt-start'], headers: atLimit })).toBeDefined();
  });

  it('redacts Authorization, Proxy-Authorization and Cookie in request headers, whatever their case', () => {
    const event = validateEvent({
      ...valid['attempt-start'],
      headers: {
        Authorization: 'Bearer s3cret',
        'PROXY-AUTHORIZATION': 'Basic dXNlcjpwdw==',
        cookie: 'session=abc',
        accept: 'text/plain',
      },
    });
    expect(event?.type === 'attempt-start' && event.headers).toEqual({
      authorization: '[redacted]',
      'proxy-authorization': '[redacted]',
      cookie: '[redacted]',
      accept: 'text/plain',
    });
  });

  it('redacts Set-Cookie and Authorization in response headers', () => {
    const event = validateEvent({
      ...valid['attempt-end'],
      headers: { 'Set-Cookie': 'session=abc; HttpOnly', authorization: 'x', 'retry-after': '2' },
    });
    expect(event?.type === 'attempt-end' && event.headers).toEqual({
      'set-cookie': '[redacted]',
      authorization: '[redacted]',
      'retry-after': '2',
    });
    expect(JSON.stringify(event)).not.toContain('session=abc');
  });

  it('drops header names that are not tokens', () => {
    const event = validateEvent({ ...valid['attempt-start'], headers: { 'bad name': 'x', 'x-ok': 'y' } });
    expect(event?.type === 'attempt-start' && event.headers).toEqual({ 'x-ok': 'y' });
  });

  it('is not fooled by __proto__ keys', () => {
    const event = validateEvent(
      JSON.parse(
        '{"v":1,"type":"attempt-start","requestId":"r","t":1,"attempt":1,' +
          '"__proto__":{"polluted":true},"headers":{"__proto__":{"polluted":true},"constructor":"c","x-a":"b"}}',
      ),
    );
    expect(event).toBeDefined();
    expect(event?.type === 'attempt-start' && event.headers).toEqual({ constructor: 'c', 'x-a': 'b' });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getPrototypeOf(event)).toBe(Object.prototype);
  });

  it('reads no inherited fields and runs no getters', () => {
    const inherited = Object.create({ ...valid.budget });
    expect(validateEvent(inherited)).toBeUndefined();
    let called = false;
    const withGetter = {
      ...valid.budget,
      get key() {
        called = true;
        return 'k';
      },
    };
    expect(validateEvent(withGetter)).toBeUndefined();
    expect(called).toBe(false);
  });

  it('strips credentials from request URLs', () => {
    const event = validateEvent({
      ...valid['request-start'],
      url: 'https://user:pa%40ss@api.example/x?q=***',
    });
    expect(event?.type === 'request-start' && event.url).toBe('https://api.example/x?q=***');
  });

  it('restores an unbounded raw backoff that JSON carried as null', () => {
    const event = validateEvent(JSON.parse(JSON.stringify({ ...valid['retry-scheduled'], raw: Infinity })));
    expect(event?.type === 'retry-scheduled' && event.raw).toBe(Number.POSITIVE_INFINITY);
  });
});

describe('stripUserinfo', () => {
  it.each([
    ['https://a:b@host.example/p', 'https://host.example/p'],
    ['https://a@b@host.example/p', 'https://host.example/p'],
    ['https://host.example/p?email=a@b', 'https://host.example/p?email=a@b'],
    ['/relative/path@x', '/relative/path@x'],
    ['https://plain.example/', 'https://plain.example/'],
  ])('%s → %s', (input, output) => {
    expect(stripUserinfo(input)).toBe(output);
  });
});

describe('sanitizeEvents', () => {
  it('keeps the valid events, in order, and drops the rest', () => {
    const events = sanitizeEvents([valid['request-start'], { v: 9 }, 'junk', valid['request-end'], null]);
    expect(events.map((event) => event.type)).toEqual(['request-start', 'request-end']);
  });
});
