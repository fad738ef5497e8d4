import { describe, expect, it } from 'vitest';
import { InvalidOptionsError } from '../errors';
import { formatIdempotencyKey, headerName, resolveIdempotencyKey } from './idempotency-key';

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const request = { method: 'POST', url: 'https://api.example/orders' };

/** The InvalidOptionsError `fn` throws. */
function thrown(fn: () => unknown): InvalidOptionsError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidOptionsError);
    return error as InvalidOptionsError;
  }
  throw new Error('expected an InvalidOptionsError, nothing was thrown');
}

describe('resolveIdempotencyKey', () => {
  it('is off for undefined and false', () => {
    expect(resolveIdempotencyKey(undefined)).toBeUndefined();
    expect(resolveIdempotencyKey(false)).toBeUndefined();
  });

  it('takes the defaults for true: Idempotency-Key, raw, a fresh UUID v4 per call', () => {
    const key = resolveIdempotencyKey(true);
    expect(key?.header).toBe('Idempotency-Key');
    expect(key?.format).toBe('raw');
    const first = key?.generate(request);
    const second = key?.generate(request);
    expect(first).toMatch(UUID_V4);
    expect(second).toMatch(UUID_V4);
    expect(first).not.toBe(second);
  });

  it('uses a function as the generator, with the default header and format', () => {
    const seen: unknown[] = [];
    const key = resolveIdempotencyKey((req: { method: string; url: string }) => {
      seen.push(req);
      return `key-for-${req.method}`;
    });
    expect(key?.header).toBe('Idempotency-Key');
    expect(key?.format).toBe('raw');
    expect(key?.generate(request)).toBe('key-for-POST');
    expect(seen).toEqual([request]);
  });

  it('fills an empty object with the defaults', () => {
    const key = resolveIdempotencyKey({});
    expect(key?.header).toBe('Idempotency-Key');
    expect(key?.format).toBe('raw');
    expect(key?.generate(request)).toMatch(UUID_V4);
  });

  it('takes header, format and generate from an object', () => {
    const key = resolveIdempotencyKey({
      header: 'X-Idempotency-Key',
      format: 'sf-string',
      generate: () => 'k1',
    });
    expect(key?.header).toBe('X-Idempotency-Key');
    expect(key?.format).toBe('sf-string');
    expect(key?.generate(request)).toBe('k1');
  });

  it('ignores inherited settings (only own properties count)', () => {
    const inherited = Object.create({ format: 'bogus', header: 'Bad Header' }) as object;
    const key = resolveIdempotencyKey(inherited);
    expect(key?.format).toBe('raw');
    expect(key?.header).toBe('Idempotency-Key');
  });

  it.each([
    ['yes', 'idempotencyKey', "Expected idempotencyKey to be true, a function or an object, got 'yes'"],
    [1, 'idempotencyKey', 'Expected idempotencyKey to be true, a function or an object, got 1'],
    [null, 'idempotencyKey', 'Expected idempotencyKey to be true, a function or an object, got null'],
    [['a'], 'idempotencyKey', 'Expected idempotencyKey to be true, a function or an object, got an array'],
    [
      { format: 'quoted' },
      'idempotencyKey.format',
      "Expected idempotencyKey.format to be one of 'raw', 'sf-string', got 'quoted'",
    ],
    [
      { header: 'Bad Header' },
      'idempotencyKey.header',
      "Expected idempotencyKey.header to be a header name, got 'Bad Header'",
    ],
    [{ header: '' }, 'idempotencyKey.header', "Expected idempotencyKey.header to be a header name, got ''"],
    [
      { generate: 'uuid' },
      'idempotencyKey.generate',
      "Expected idempotencyKey.generate to be a function, got 'uuid'",
    ],
  ])('rejects %j with InvalidOptionsError naming %s', (value, option, message) => {
    const error = thrown(() => resolveIdempotencyKey(value));
    expect(error.message).toBe(message);
    expect(error.option).toBe(option);
  });
});

describe('formatIdempotencyKey', () => {
  it('writes a raw key as it is', () => {
    expect(formatIdempotencyKey('8e03978e-40d5-43e8-bc93-6894a57f9324', 'raw')).toBe(
      '8e03978e-40d5-43e8-bc93-6894a57f9324',
    );
    expect(formatIdempotencyKey('a"b\\c', 'raw')).toBe('a"b\\c');
  });

  it('quotes an sf-string (RFC 8941 §3.3.3)', () => {
    expect(formatIdempotencyKey('8e03978e-40d5-43e8-bc93-6894a57f9324', 'sf-string')).toBe(
      '"8e03978e-40d5-43e8-bc93-6894a57f9324"',
    );
    expect(formatIdempotencyKey('', 'sf-string')).toBe('""');
  });

  it('escapes " and \\ inside an sf-string, and nothing else', () => {
    expect(formatIdempotencyKey('a"b', 'sf-string')).toBe('"a\\"b"');
    expect(formatIdempotencyKey('a\\b', 'sf-string')).toBe('"a\\\\b"');
    expect(formatIdempotencyKey('\\"', 'sf-string')).toBe('"\\\\\\""');
    expect(formatIdempotencyKey("it's a key; ok=1", 'sf-string')).toBe('"it\'s a key; ok=1"');
  });

  it('produces an sf-string that reads back to the key', () => {
    // RFC 8941 §4.2.5: the parser drops each backslash and keeps the character after it.
    const parse = (text: string) => text.slice(1, -1).replace(/\\(.)/g, '$1');
    for (const key of ['plain', 'a"b', 'a\\b', '\\\\""', 'x\\"y']) {
      const written = formatIdempotencyKey(key, 'sf-string');
      expect(written).toMatch(/^"(?:[^"\\]|\\["\\])*"$/);
      expect(parse(written)).toBe(key);
    }
  });
});

describe('headerName', () => {
  it('accepts RFC 9110 tokens and passes undefined through', () => {
    expect(headerName('requestIdHeader', 'X-Request-Id')).toBe('X-Request-Id');
    expect(headerName('requestIdHeader', "a!#$%&'*+.^_`|~9")).toBe("a!#$%&'*+.^_`|~9");
    expect(headerName('requestIdHeader', undefined)).toBeUndefined();
  });

  it.each([
    ['Bad Header', "Expected attemptHeader to be a header name, got 'Bad Header'"],
    ['', "Expected attemptHeader to be a header name, got ''"],
    ['x-a:', "Expected attemptHeader to be a header name, got 'x-a:'"],
    ['x\r\ny', "Expected attemptHeader to be a header name, got 'x\r\ny'"],
    [42, 'Expected attemptHeader to be a header name, got 42'],
    [null, 'Expected attemptHeader to be a header name, got null'],
    [true, 'Expected attemptHeader to be a header name, got true'],
    [['X-A'], 'Expected attemptHeader to be a header name, got an array'],
  ])('rejects %j', (value, message) => {
    const error = thrown(() => headerName('attemptHeader', value));
    expect(error.message).toBe(message);
    expect(error.option).toBe('attemptHeader');
  });
});
