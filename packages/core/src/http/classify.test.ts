import { describe, expect, it } from 'vitest';
import {
  classifyTransportError,
  type HttpOutcome,
  IDEMPOTENT_METHODS,
  isRetryableByDefault,
  RETRYABLE_STATUSES,
  type RetryRules,
} from './classify';

/** An error with a node/undici-style `code`, naming the port it failed on as Node's do. */
const coded = (code: string, message = code) => Object.assign(new Error(message), { code, port: 9 });

/** undici's shape: `TypeError('fetch failed')` with the system error as its cause. */
const undici = (code: string) =>
  new TypeError('fetch failed', { cause: coded(code, `connect ${code} 127.0.0.1:9`) });

describe('classifyTransportError', () => {
  /** The request's own first hop, as an adapter that saw no redirect reports it. */
  const firstHop = { url: 'http://127.0.0.1:9/x', redirected: false } as const;

  it.each([
    ['ECONNREFUSED', undici('ECONNREFUSED')],
    ['ENOTFOUND', undici('ENOTFOUND')],
    ['EAI_AGAIN', undici('EAI_AGAIN')],
    ['UND_ERR_CONNECT_TIMEOUT', undici('UND_ERR_CONNECT_TIMEOUT')],
    ['EHOSTUNREACH', undici('EHOSTUNREACH')],
    ['ECONNREFUSED', coded('ECONNREFUSED')],
  ])('says %s on the first hop never reached the server (not-sent)', (code, error) => {
    expect(classifyTransportError(error, firstHop)).toEqual({ phase: 'not-sent', code });
  });

  it.each([
    ['no hop given', undefined],
    ['a redirect followed', { url: 'http://127.0.0.1:9/x', redirected: true }],
    ["a client that can't tell", { url: 'http://127.0.0.1:9/x', redirected: undefined }],
  ])('says a refused connection may have come after the server processed it (%s): unknown', (_, hop) => {
    expect(classifyTransportError(undici('ECONNREFUSED'), hop)).toEqual({
      phase: 'unknown',
      code: 'ECONNREFUSED',
    });
  });

  it('says an error that names no port or host is no proof (unknown): a client may throw it after sending', () => {
    const bare = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    expect(classifyTransportError(bare, firstHop)).toEqual({ phase: 'unknown', code: 'ECONNREFUSED' });
  });

  it('says a refusal by another port or host than the request URL is no proof (unknown)', () => {
    const refused = (address: string, port: number) =>
      new TypeError('fetch failed', {
        cause: Object.assign(new Error(`connect ECONNREFUSED ${address}:${port}`), {
          code: 'ECONNREFUSED',
          address,
          port,
        }),
      });
    const hop = { url: 'http://127.0.0.1:8080/orders', redirected: false };
    expect(classifyTransportError(refused('127.0.0.1', 8080), hop)?.phase).toBe('not-sent');
    expect(classifyTransportError(refused('127.0.0.1', 9), hop)?.phase).toBe('unknown');
    expect(classifyTransportError(refused('127.0.0.2', 8080), hop)?.phase).toBe('unknown');
    // A name's addresses are not known here: only the port is compared.
    expect(
      classifyTransportError(refused('10.1.2.3', 443), { url: 'https://api.example/x', redirected: false })
        ?.phase,
    ).toBe('not-sent');
    const lookup = Object.assign(new Error('getaddrinfo ENOTFOUND other.example'), {
      code: 'ENOTFOUND',
      hostname: 'other.example',
    });
    expect(classifyTransportError(lookup, { url: 'https://api.example/x', redirected: false })?.phase).toBe(
      'unknown',
    );
  });

  it.each([
    ['ECONNRESET', undici('ECONNRESET')],
    ['EPIPE', undici('EPIPE')],
    ['UND_ERR_SOCKET', undici('UND_ERR_SOCKET')],
    ['UND_ERR_HEADERS_TIMEOUT', undici('UND_ERR_HEADERS_TIMEOUT')],
    ['UND_ERR_BODY_TIMEOUT', undici('UND_ERR_BODY_TIMEOUT')],
    ['ECONNRESET', coded('ECONNRESET', 'socket hang up')],
  ])('says %s may have been processed (unknown)', (code, error) => {
    expect(classifyTransportError(error)).toEqual({ phase: 'unknown', code });
  });

  it.each([
    ['ECONNABORTED', { code: 'ECONNABORTED', message: 'timeout of 1000ms exceeded' }],
    ['ERR_NETWORK', { code: 'ERR_NETWORK', message: 'Network Error' }],
  ])('reads axios-style errors: %s is unknown', (code, error) => {
    expect(classifyTransportError(error)).toEqual({ phase: 'unknown', code });
  });

  it('finds a code nested two causes deep', () => {
    const deep = new TypeError('fetch failed', {
      cause: new Error('wrapper', { cause: coded('ECONNREFUSED') }),
    });
    expect(classifyTransportError(deep, firstHop)).toEqual({ phase: 'not-sent', code: 'ECONNREFUSED' });
    const deepReset = new Error('outer', { cause: new Error('middle', { cause: coded('ECONNRESET') }) });
    expect(classifyTransportError(deepReset)).toEqual({ phase: 'unknown', code: 'ECONNRESET' });
  });

  it.each([
    ['Chromium', 'Failed to fetch'],
    ['Firefox', 'NetworkError when attempting to fetch resource.'],
    ['Safari', 'Load failed'],
  ])("treats %s's opaque TypeError as unknown, with no code", (_browser, message) => {
    const result = classifyTransportError(new TypeError(message));
    expect(result).toEqual({ phase: 'unknown' });
    expect(result && 'code' in result).toBe(false);
  });

  it.each([['redirect count exceeded'], ['unexpected redirect'], ['unknown scheme'], ['bad port']])(
    'does not retry undici refusing the fetch itself ("fetch failed", cause "%s", no code)',
    (reason) => {
      expect(
        classifyTransportError(new TypeError('fetch failed', { cause: new Error(reason) })),
      ).toBeUndefined();
      // A network failure behind the same cause text, with a code, is still one.
      const coded = Object.assign(new Error(reason), { code: 'ECONNRESET' });
      expect(classifyTransportError(new TypeError('fetch failed', { cause: coded }))).toEqual({
        phase: 'unknown',
        code: 'ECONNRESET',
      });
    },
  );

  it('treats a bare undici "fetch failed" without a cause as unknown', () => {
    expect(classifyTransportError(new TypeError('fetch failed'))).toEqual({ phase: 'unknown' });
  });

  it.each([
    ['an invalid URL', new TypeError('Failed to parse URL from x', { cause: { code: 'ERR_INVALID_URL' } })],
    ['a plain Error', new Error('bug in a hook')],
    ['a TypeError from a bug', new TypeError("Cannot read properties of undefined (reading 'x')")],
    ['an unknown code', coded('ERR_SOMETHING_ELSE')],
    ['a string', 'ECONNREFUSED'],
    ['null', null],
    ['undefined', undefined],
    ['a number', 42],
  ])('does not classify %s as a transport failure (never retried)', (_name, error) => {
    expect(classifyTransportError(error)).toBeUndefined();
  });
});

const DEFAULT_RULES: RetryRules = {
  statuses: new Set(RETRYABLE_STATUSES),
  methods: new Set(IDEMPOTENT_METHODS),
};

function outcome(
  phase: HttpOutcome['phase'],
  method: string,
  extra: { status?: number; keyed?: boolean; hinted?: boolean } = {},
): Omit<HttpOutcome, 'retryable'> {
  const keyed = extra.keyed ?? false;
  return {
    attempt: 1,
    method,
    url: 'https://api.example/x',
    phase,
    ...(extra.status === undefined ? {} : { status: extra.status }),
    keyed,
    idempotent: keyed || IDEMPOTENT_METHODS.includes(method),
    hinted: extra.hinted ?? false,
  };
}

describe('isRetryableByDefault', () => {
  it('lists the RFC 9110 idempotent methods and the default statuses', () => {
    expect([...IDEMPOTENT_METHODS].sort()).toEqual(['DELETE', 'GET', 'HEAD', 'OPTIONS', 'PUT', 'TRACE']);
    expect(RETRYABLE_STATUSES).toEqual([408, 429, 500, 502, 503, 504]);
  });

  type Row = [
    string,
    boolean,
    HttpOutcome['phase'],
    string,
    { status?: number; keyed?: boolean; hinted?: boolean },
  ];
  it.each<Row>([
    ['not-sent POST', true, 'not-sent', 'POST', {}],
    ['not-sent PATCH', true, 'not-sent', 'PATCH', {}],
    ['not-sent GET', true, 'not-sent', 'GET', {}],
    ['unknown POST', false, 'unknown', 'POST', {}],
    ['unknown PATCH', false, 'unknown', 'PATCH', {}],
    ['unknown POST with a key', true, 'unknown', 'POST', { keyed: true }],
    ['unknown GET', true, 'unknown', 'GET', {}],
    ['unknown PUT', true, 'unknown', 'PUT', {}],
    ['unknown DELETE', true, 'unknown', 'DELETE', {}],
    ['GET 503', true, 'response', 'GET', { status: 503 }],
    ['GET 408', true, 'response', 'GET', { status: 408 }],
    ['GET 429', true, 'response', 'GET', { status: 429 }],
    ['GET 500', true, 'response', 'GET', { status: 500 }],
    ['GET 502', true, 'response', 'GET', { status: 502 }],
    ['GET 504', true, 'response', 'GET', { status: 504 }],
    ['HEAD 503', true, 'response', 'HEAD', { status: 503 }],
    ['GET 404', false, 'response', 'GET', { status: 404 }],
    ['GET 501', false, 'response', 'GET', { status: 501 }],
    ['GET 505', false, 'response', 'GET', { status: 505 }],
    ['POST 503', false, 'response', 'POST', { status: 503 }],
    ['POST 429 with a hint', false, 'response', 'POST', { status: 429, hinted: true }],
    ['POST 503 with a key', true, 'response', 'POST', { status: 503, keyed: true }],
    ['GET 413 with a hint', true, 'response', 'GET', { status: 413, hinted: true }],
    ['GET 413 without a hint', false, 'response', 'GET', { status: 413 }],
    ['POST 413 with a hint', false, 'response', 'POST', { status: 413, hinted: true }],
    ['POST 409 with a key', true, 'response', 'POST', { status: 409, keyed: true }],
    ['POST 409 without a key', false, 'response', 'POST', { status: 409 }],
    ['GET 409 without a key', false, 'response', 'GET', { status: 409 }],
    ['GET 400', false, 'response', 'GET', { status: 400 }],
    ['GET 422', false, 'response', 'GET', { status: 422 }],
    ['POST 400 with a key', false, 'response', 'POST', { status: 400, keyed: true }],
    ['POST 422 with a key', false, 'response', 'POST', { status: 422, keyed: true }],
  ])('%s → retryable: %s', (_name, expected, phase, method, extra) => {
    expect(isRetryableByDefault(outcome(phase, method, extra), DEFAULT_RULES)).toBe(expected);
  });

  it('uses custom statuses instead of the defaults', () => {
    const rules: RetryRules = { statuses: new Set([418]), methods: DEFAULT_RULES.methods };
    expect(isRetryableByDefault(outcome('response', 'GET', { status: 418 }), rules)).toBe(true);
    expect(isRetryableByDefault(outcome('response', 'GET', { status: 503 }), rules)).toBe(false);
    expect(isRetryableByDefault(outcome('response', 'POST', { status: 418 }), rules)).toBe(false);
    // The 413/409 exceptions do not depend on the list.
    expect(isRetryableByDefault(outcome('response', 'GET', { status: 413, hinted: true }), rules)).toBe(true);
  });

  it('uses custom methods instead of the defaults', () => {
    const rules: RetryRules = { statuses: DEFAULT_RULES.statuses, methods: new Set(['POST']) };
    expect(isRetryableByDefault(outcome('response', 'POST', { status: 503 }), rules)).toBe(true);
    expect(isRetryableByDefault(outcome('unknown', 'POST'), rules)).toBe(true);
    expect(isRetryableByDefault(outcome('response', 'GET', { status: 503 }), rules)).toBe(false);
    expect(isRetryableByDefault(outcome('unknown', 'GET'), rules)).toBe(false);
    // not-sent is safe whatever the list says.
    expect(isRetryableByDefault(outcome('not-sent', 'GET'), rules)).toBe(true);
    // A key still makes a method off the list retryable.
    expect(isRetryableByDefault(outcome('response', 'PATCH', { status: 503, keyed: true }), rules)).toBe(
      true,
    );
  });
});
