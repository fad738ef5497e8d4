import { describe, expect, it } from 'vitest';
import { summarizeError } from '../events/types';
import { MASK, REDACTED, redactHeaders, redactText, redactUrl, SENSITIVE_HEADERS } from './redact';

const none: ReadonlySet<string> = new Set();

describe('redactUrl', () => {
  it.each([
    ['https://api.example/items?token=abc&page=2', 'https://api.example/items?token=***&page=***'],
    ['https://api.example/items?a=1&a=2', 'https://api.example/items?a=***&a=***'],
    ['https://api.example/items?flag&token=abc', 'https://api.example/items?flag&token=***'],
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
  it('always redacts Authorization, Proxy-Authorization, Cookie and Set-Cookie', () => {
    expect(SENSITIVE_HEADERS).toEqual(['authorization', 'proxy-authorization', 'cookie', 'set-cookie']);
    expect(REDACTED).toBe('[redacted]');
    expect(
      redactHeaders(
        {
          Authorization: 'Bearer secret',
          'Proxy-Authorization': 'Basic c2VjcmV0',
          Cookie: 'session=secret',
          'Set-Cookie': 'session=secret; HttpOnly',
          Accept: 'application/json',
        },
        none,
      ),
    ).toEqual({
      authorization: '[redacted]',
      'proxy-authorization': '[redacted]',
      cookie: '[redacted]',
      'set-cookie': '[redacted]',
      accept: 'application/json',
    });
  });

  it('reads a fetch Headers object, redacting every Set-Cookie', () => {
    const headers = new Headers({ Authorization: 'Bearer secret', 'Content-Type': 'text/plain' });
    headers.append('Set-Cookie', 'a=1');
    headers.append('Set-Cookie', 'b=2');
    const out = redactHeaders(headers, none);
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
    ).toEqual({ 'x-a': '1, 2', cookie: '[redacted]' });
    expect(redactHeaders({ Cookie: ['a=1', 'b=2'] }, none)).toEqual({ cookie: '[redacted]' });
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

  it('redacts extra (lower-cased) names too', () => {
    expect(redactHeaders({ 'X-Api-Key': 'k', 'X-Other': 'v' }, new Set(['x-api-key']))).toEqual({
      'x-api-key': '[redacted]',
      'x-other': 'v',
    });
    expect(redactHeaders(new Headers({ 'X-Api-Key': 'k' }), new Set(['x-api-key']))).toEqual({
      'x-api-key': '[redacted]',
    });
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
    ['mail me@example.com about a/b//c@d', 'mail me@example.com about a/b//c@d'],
    [
      "GET 'https://api.example/a?token=abc&page=2' failed",
      "GET 'https://api.example/a?token=***&page=***' failed",
    ],
    ['fetch failed', 'fetch failed'],
    ['a = b, no query', 'a = b, no query'],
  ])('%s', (text, redacted) => {
    expect(redactText(text)).toBe(redacted);
  });

  it('redacts what an event reports of an error', () => {
    const error = new TypeError('Failed to parse URL from http://exa mple.com/x?api_key=SECRETKEY');
    expect(summarizeError(error).message).not.toContain('SECRETKEY');
    expect(summarizeError('http://user:pw@host/x').message).toBe('http://host/x');
  });
});
