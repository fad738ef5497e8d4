import { describe, expect, it } from 'vitest';
import { InvalidOptionsError } from '../errors';
import { MAX_MESSAGE_LENGTH, summarizeError } from '../events/types';
import {
  type HeaderRedaction,
  headerRedaction,
  MASK,
  REDACTED,
  redactHeaders,
  redactText,
  redactUrl,
  SENSITIVE_HEADERS,
} from './redact';

/** Copies headers as they are: names lower-cased, nothing redacted. */
const none: HeaderRedaction = () => false;
/** The default allowlist, as a client with no redaction options has it. */
const byDefault = headerRedaction(undefined, undefined);

describe('redactUrl', () => {
  it.each([
    ['https://api.example/items?token=abc&page=2', 'https://api.example/items?token=***&page=***'],
    ['https://api.example/items?a=1&a=2', 'https://api.example/items?a=***&a=***'],
    ['https://api.example/items?flag&token=abc', 'https://api.example/items?***&token=***'],
    ['https://api.example/items?SECRET', 'https://api.example/items?***'],
    ['https://api.example/items?token=abc&SECRET', 'https://api.example/items?token=***&***'],
    ['https://api.example/items?SECRET;a=1', 'https://api.example/items?***;a=***'],
    ['https://api.example/items?a=1;SECRET', 'https://api.example/items?a=***;***'],
    ['https://api.example/p;jsessionid=SECRET/x', 'https://api.example/p;jsessionid=***/x'],
    ['https://api.example/p;jsessionid=SECRET', 'https://api.example/p;jsessionid=***'],
    ['https://api.example/a;v=1;SECRET/b;k=SECRET?q', 'https://api.example/a;v=***;***/b;k=***?***'],
    ['/p;jsessionid=SECRET?SECRET', '/p;jsessionid=***?***'],
    ['https://user:pw@api.example/p;s=SECRET?t=SECRET#SECRET', 'https://api.example/p;s=***?t=***'],
    ['https://api.example/items?token=a=b', 'https://api.example/items?token=***'],
    ['https://api.example/items?', 'https://api.example/items?'],
    ['https://api.example/items?token=abc#section', 'https://api.example/items?token=***'],
    ['https://api.example/items#access_token=abc', 'https://api.example/items'],
    ['https://api.example/items#frag?token=abc', 'https://api.example/items'],
    ['https://user:pass@api.example/items', 'https://api.example/items'],
    ['https://user@api.example/items', 'https://api.example/items'],
    ['HTTPS://user:pass@api.example:8443/x?k=v', 'HTTPS://api.example:8443/x?k=***'],
    ['https://api.example/users/me@example.com', 'https://api.example/users/me@example.com'],
    ['https://api.example/x?email=me@example.com', 'https://api.example/x?email=***'],
    ['/relative/path?token=abc&page=2', '/relative/path?token=***&page=***'],
    ['relative?secret=1', 'relative?secret=***'],
    ['https://api.example/items', 'https://api.example/items'],
    ['https://api.example/', 'https://api.example/'],
    ['', ''],
  ])('%s → %s', (url, expected) => {
    expect(redactUrl(url)).toBe(expected);
  });

  it('removes a password that contains an unescaped @ (the last @ of the authority ends it)', () => {
    // WHATWG URL: `https://user:p@ss@host/` is user "user", password "p%40ss", host "host".
    expect(new URL('https://user:p@ss@api.example/x').host).toBe('api.example');
    const redacted = redactUrl('https://user:p@ss@api.example/x?token=abc');
    expect(redacted).toBe('https://api.example/x?token=***');
    expect(redacted).not.toContain('ss');
  });

  it.each([
    ' https://user:SECRET@api.example/x',
    '\t\nhttps://user:SECRET@api.example/x',
    'https:/user:SECRET@api.example/x',
    'https:user:SECRET@api.example/x',
    'https:\\\\user:SECRET@api.example/x',
    '//user:SECRET@api.example/x',
    '\\\\user:SECRET@api.example/x',
    'https://user:SE@CRET@api.example/x',
    'ht\ttps://us\ner:SECRET@api.example/x',
  ])('removes the credentials the URL parser reads in %j', (url) => {
    // It does carry them: read alone, or from a page for a protocol-relative form.
    const parsed = URL.canParse(url) ? new URL(url) : new URL(url, 'https://page.example');
    expect(parsed.password).not.toBe('');
    const redacted = redactUrl(url);
    expect(redacted).not.toContain('SECRET');
    expect(redacted).not.toContain('CRET');
    expect(redacted).toMatch(/api\.example\/x$/);
  });

  it('keeps an @ in a relative path', () => {
    expect(redactUrl('/@scope/pkg?v=1')).toBe('/@scope/pkg?v=***');
  });

  it('uses *** as the mask', () => {
    expect(MASK).toBe('***');
  });
});

describe('redactHeaders', () => {
  it('keeps only the values of allowlisted names; every other value is redacted, its name kept', () => {
    expect(REDACTED).toBe('[redacted]');
    expect(
      redactHeaders(
        {
          Authorization: 'Bearer SECRET',
          'Proxy-Authorization': 'Basic SECRET',
          Cookie: 'session=SECRET',
          'Set-Cookie': 'session=SECRET; HttpOnly',
          'X-Api-Key': 'SECRET',
          'Api-Key': 'SECRET',
          'X-Auth-Token': 'SECRET',
          'Private-Token': 'SECRET',
          'X-Amz-Security-Token': 'SECRET',
          'WWW-Authenticate': 'Bearer realm="SECRET"',
          'X-Made-Up-Secret': 'SECRET',
          Accept: 'application/json',
          'Content-Type': 'application/json',
          'Content-Length': '12',
          Date: 'Thu, 01 Jan 2026 12:00:00 GMT',
          'Retry-After': '2',
          'Idempotency-Key': 'k-1',
          RateLimit: '"default";r=0;t=30',
          'RateLimit-Policy': '"default";q=100;w=60',
          'RateLimit-Reset': '30',
          'X-RateLimit-Remaining': '0',
          'X-RateLimit-Reset-Requests': '1s',
        },
        byDefault,
      ),
    ).toEqual({
      authorization: REDACTED,
      'proxy-authorization': REDACTED,
      cookie: REDACTED,
      'set-cookie': REDACTED,
      'x-api-key': REDACTED,
      'api-key': REDACTED,
      'x-auth-token': REDACTED,
      'private-token': REDACTED,
      'x-amz-security-token': REDACTED,
      'www-authenticate': REDACTED,
      'x-made-up-secret': REDACTED,
      accept: REDACTED,
      'content-type': 'application/json',
      'content-length': '12',
      date: 'Thu, 01 Jan 2026 12:00:00 GMT',
      'retry-after': '2',
      'idempotency-key': 'k-1',
      ratelimit: '"default";r=0;t=30',
      'ratelimit-policy': '"default";q=100;w=60',
      'ratelimit-reset': '30',
      'x-ratelimit-remaining': '0',
      'x-ratelimit-reset-requests': '1s',
    });
  });

  it('shows the headers Retryline writes and the names the caller exposes; redactHeaders wins over both', () => {
    const redaction = headerRedaction(
      ['Idempotency-Key', 'X-Trace'],
      ['Accept', 'X-Trace'],
      ['X-Request-Id', 'Retry-Attempt', undefined],
    );
    expect(
      redactHeaders(
        {
          'X-Request-Id': 'r-1',
          'Retry-Attempt': 'attempt=1',
          Accept: 'text/plain',
          'X-Trace': 't-1',
          'Idempotency-Key': 'k-1',
          'X-Other': 'SECRET',
        },
        redaction,
      ),
    ).toEqual({
      'x-request-id': 'r-1',
      'retry-attempt': 'attempt=1',
      accept: 'text/plain',
      'x-trace': REDACTED,
      'idempotency-key': REDACTED,
      'x-other': REDACTED,
    });
  });

  it('never shows a credential header, even named as one Retryline writes', () => {
    expect(redactHeaders({ Authorization: 'SECRET' }, headerRedaction([], [], ['Authorization']))).toEqual({
      authorization: REDACTED,
    });
  });

  it('refuses to expose a credential header, and names that are not an array of strings', () => {
    for (const name of SENSITIVE_HEADERS) {
      expect(() => headerRedaction(undefined, [name.toUpperCase()])).toThrow(InvalidOptionsError);
    }
    expect(() => headerRedaction(undefined, ['X-Api-Key'])).toThrow(
      'Expected exposeHeaders to be an array of header names that carry no credentials, got',
    );
    expect(() => headerRedaction('x-api-key', undefined)).toThrow(
      'Expected redactHeaders to be an array of header names, got',
    );
    expect(() => headerRedaction(undefined, [1])).toThrow(
      'Expected exposeHeaders to be an array of header names, got',
    );
  });

  it('reads a fetch Headers object, redacting every Set-Cookie', () => {
    const headers = new Headers({ Authorization: 'Bearer secret', 'Content-Type': 'text/plain' });
    headers.append('Set-Cookie', 'a=1');
    headers.append('Set-Cookie', 'b=2');
    const out = redactHeaders(headers, byDefault);
    expect(out).toEqual({
      authorization: '[redacted]',
      'content-type': 'text/plain',
      'set-cookie': '[redacted]',
    });
    expect(JSON.stringify(out)).not.toMatch(/secret|a=1|b=2/);
  });

  it('lower-cases the names of a plain record and joins repeated names in order', () => {
    expect(redactHeaders({ 'X-Trace': 'a', 'x-trace': 'b', ACCEPT: 'text/html' }, none)).toEqual({
      'x-trace': 'a, b',
      accept: 'text/html',
    });
  });

  it('joins array values, and repeated entries of an entry list', () => {
    expect(redactHeaders({ Accept: ['text/html', 'application/json'] }, none)).toEqual({
      accept: 'text/html, application/json',
    });
    expect(
      redactHeaders(
        [
          ['X-A', '1'],
          ['x-a', '2'],
          ['Cookie', 'c=1'],
        ],
        none,
      ),
    ).toEqual({ 'x-a': '1, 2', cookie: 'c=1' });
    expect(redactHeaders({ Cookie: ['a=1', 'b=2'] }, byDefault)).toEqual({ cookie: '[redacted]' });
  });

  it('keeps numbers and booleans as text and drops absent, function and object values', () => {
    expect(
      redactHeaders(
        {
          'content-length': 12,
          'x-flag': true,
          'x-undefined': undefined,
          'x-null': null,
          'x-fn': () => 'x',
          'x-object': { a: 1 },
        },
        none,
      ),
    ).toEqual({ 'content-length': '12', 'x-flag': 'true' });
  });

  it('reads redactHeaders and exposeHeaders names in any case', () => {
    const redaction = headerRedaction(['CONTENT-TYPE'], ['X-Other']);
    expect(redactHeaders({ 'Content-Type': 'text/plain', 'x-other': 'v' }, redaction)).toEqual({
      'content-type': '[redacted]',
      'x-other': 'v',
    });
    expect(redactHeaders(new Headers({ 'X-OTHER': 'v' }), redaction)).toEqual({ 'x-other': 'v' });
  });

  it('ignores a __proto__ key and never touches the prototype', () => {
    const parsed = JSON.parse('{"__proto__": {"polluted": "yes"}, "accept": "text/html"}') as Record<
      string,
      unknown
    >;
    const out = redactHeaders(parsed, none);
    expect(out).toEqual({ accept: 'text/html' });
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect((out as Record<string, unknown>).polluted).toBeUndefined();
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('treats names that Object.prototype also has as ordinary headers', () => {
    expect(redactHeaders({ constructor: 'a', toString: 'b' }, none)).toEqual({
      constructor: 'a',
      tostring: 'b',
    });
    expect(
      redactHeaders(
        [
          ['Constructor', 'a'],
          ['constructor', 'b'],
        ],
        none,
      ),
    ).toEqual({ constructor: 'a, b' });
  });

  it('gives an empty record for no headers', () => {
    expect(redactHeaders(undefined, none)).toEqual({});
    expect(redactHeaders({}, none)).toEqual({});
    expect(redactHeaders(new Headers(), none)).toEqual({});
  });
});

describe('redactText', () => {
  it.each([
    [
      'Failed to parse URL from http://exa mple.com/x?api_key=SECRETKEY',
      'Failed to parse URL from http://exa mple.com/x?api_key=***',
    ],
    [
      'Request cannot be constructed from a URL that includes credentials: http://user:SECRETPW@127.0.0.1:1/x',
      'Request cannot be constructed from a URL that includes credentials: http://127.0.0.1:1/x',
    ],
    [
      'Request cannot be constructed from a URL that includes credentials: http:/user:SECRETPW@127.0.0.1:9/x',
      'Request cannot be constructed from a URL that includes credentials: http:/127.0.0.1:9/x',
    ],
    ['bad url //user:SECRETPW@api.example/x', 'bad url //api.example/x'],
    ["('\\\\user:SECRETPW@api.example/x')", "('\\\\api.example/x')"],
    // An address's name is masked as credentials would be; an @ in a path is left alone.
    ['mail me@example.com about a/b//c@d', 'mail ***@example.com about a/b//c@d'],
    // Credentials the URL parser reads, though the text breaks the URL: no slash after the scheme,
    // a tab (the parser drops it) or a no-break space (it keeps it) inside the password.
    ['includes credentials: http:u:SECRET1@127.0.0.1/x', 'includes credentials: http:***@127.0.0.1/x'],
    ['includes credentials: http://u:\tSECRET2@127.0.0.1/x', 'includes credentials: http://***@127.0.0.1/x'],
    ['includes credentials: http://u:SECRET3\u00a0@h/x', 'includes credentials: http://***@h/x'],
    [
      "GET 'https://api.example/a?token=abc&page=2' failed",
      "GET 'https://api.example/a?token=***&page=***' failed",
    ],
    ['fetch failed', 'fetch failed'],
    ['a = b, no query', 'a = b, no query'],
    ['really? yes; why not', 'really? yes; why not'],
    [
      // ky's HTTPError quotes the request's URL.
      'Request failed with status code 503 Service Unavailable: GET http://127.0.0.1:1/p;jsessionid=SECRET/x?token=SECRET&SECRET',
      'Request failed with status code 503 Service Unavailable: GET http://127.0.0.1:1/p;jsessionid=***/x?token=***&***',
    ],
    [
      'Failed to parse URL from /p;jsessionid=SECRET?SECRET',
      'Failed to parse URL from /p;jsessionid=***?***',
    ],
    ['redirect to url=/login?SECRET', 'redirect to url=/login?***'],
    ['see https://api.example/x#SECRET.', 'see https://api.example/x'],
    ['1http://user:SECRET@api.example/x', '1http://api.example/x'],
    // A value runs through `;`, so what follows it is never left bare.
    ['a header a;token=SECRET;SECRET b', 'a header a;token=*** b'],
  ])('%s', (text, redacted) => {
    expect(redactText(text)).toBe(redacted);
  });

  it('redacts what an event reports of an error', () => {
    const error = new TypeError('Failed to parse URL from http://exa mple.com/x?api_key=SECRETKEY');
    expect(summarizeError(error).message).not.toContain('SECRETKEY');
    expect(summarizeError('http://user:pw@host/x').message).toBe('http://host/x');
  });

  it('cuts an error message to MAX_MESSAGE_LENGTH after redacting all of it', () => {
    // The password's `@` lies past the cut: redacting only what is kept would keep the password.
    const message = `${'x '.repeat(MAX_MESSAGE_LENGTH / 2 - 10)}http://user:${'S'.repeat(100)}ECRET@api.example/${'p'.repeat(100)}`;
    const summary = summarizeError(new Error(message));
    expect(summary.message).toHaveLength(MAX_MESSAGE_LENGTH);
    expect(summary.message.endsWith('…')).toBe(true);
    expect(summary.message).not.toContain('user');
    expect(summary.message).not.toContain('SS');
    expect(summarizeError(new Error('short')).message).toBe('short');
  });

  it('summarizes an error whose message getter throws, instead of throwing', () => {
    const hostile = new Error('x');
    Object.defineProperty(hostile, 'message', {
      get() {
        throw new Error('no message for you');
      },
    });
    expect(summarizeError(hostile)).toEqual({ name: 'object', message: '' });
  });
});

/**
 * Linear work measures about 10× from 10 KB to 100 KB, quadratic about 100×; a busy machine
 * stretches the first toward 20× (one clean-clone run measured 20.03 on a hostile case), so the
 * limit sits well between the two.
 */
const RATIO_LIMIT = 40;

/**
 * How many times longer `redact` takes on 100 KB of `make`'s text than on 10 KB: about 10 when it
 * is linear, about 100 when quadratic. A ratio, not a time, so a slow machine does not fail it. Each
 * round times ten 10 KB calls and one 100 KB call back to back, the same amount of text, so a busy
 * machine slows both alike; the least time of each over the rounds is the one least disturbed.
 */
function costRatio(make: (length: number) => string, redact: (text: string) => unknown): number {
  const small = make(10_000);
  const large = make(100_000);
  for (let i = 0; i < 10; i++) redact(small); // warm up
  const time = (work: () => void) => {
    const start = performance.now();
    work();
    return performance.now() - start;
  };
  let smallMs = Number.POSITIVE_INFINITY;
  let largeMs = Number.POSITIVE_INFINITY;
  const started = performance.now();
  // Stops early once clearly linear, and after a few seconds whatever it found (quadratic: one
  // 100 KB call may take seconds).
  for (let round = 0; round < 15 && performance.now() - started < 3_000; round++) {
    smallMs = Math.min(
      smallMs,
      time(() => {
        for (let i = 0; i < 10; i++) redact(small);
      }) / 10,
    );
    largeMs = Math.min(
      largeMs,
      time(() => redact(large)),
    );
    if (round >= 4 && largeMs <= smallMs * 12) break;
  }
  return largeMs / smallMs;
}

/** `unit` repeated to `length` characters. */
const run =
  (unit: string, tail = '') =>
  (length: number) =>
    unit.repeat(Math.ceil(length / unit.length)).slice(0, length - tail.length) + tail;

// Runs a backtracking regex over text can be made quadratic with: a long word before `=` or `@`
// (a scheme that never gets its colon), `?` pairs that never get their `=`, and what a server's
// error page is made of.
const HOSTILE_TEXTS: ReadonlyArray<readonly [string, (length: number) => string]> = [
  ['=', run('=')],
  ['@', run('@')],
  ['a=', run('a=')],
  ['//', run('//', '@')],
  ['http://', run('http://', '@')],
  ['a word, then =', run('a', '=')],
  ['=, then a word', (length) => `=${'a'.repeat(length - 1)}`],
  ['@, then a word', (length) => `@${'a'.repeat(length - 1)}`],
  ['?a pairs without =', run('?a', ' =')],
  [';a parameters without =', run(';a', ' =')],
  ['a: without a slash', run('a:', '@')],
  [' //user@ without an end', run(' //a@')],
  ['an HTML error page', run('<p class="x">Error: see http://x.example/a?b=c or mail me@x.example</p>\n')],
];

describe('redaction runs in linear time on hostile text', () => {
  it.each(HOSTILE_TEXTS)('redactText: 100 KB of %s costs at most ~40× 10 KB', (_name, make) => {
    expect(costRatio(make, redactText)).toBeLessThanOrEqual(RATIO_LIMIT);
  });

  it.each(HOSTILE_TEXTS)('redactUrl: 100 KB of %s costs at most ~40× 10 KB', (_name, make) => {
    expect(costRatio(make, redactUrl)).toBeLessThanOrEqual(RATIO_LIMIT);
    expect(costRatio((length) => `http://h/${make(length)}`, redactUrl)).toBeLessThanOrEqual(RATIO_LIMIT);
  });

  it.each(HOSTILE_TEXTS)('summarizeError: 100 KB of %s costs at most ~40× 10 KB', (_name, make) => {
    expect(costRatio(make, (text) => summarizeError(new Error(text)))).toBeLessThanOrEqual(RATIO_LIMIT);
  });
});
