import type { AttemptEndEvent, RequestEndEvent } from '@retryline/core/instrument';
import { describe, expect, it } from 'vitest';
import { attemptErrorType, methodAttributes, originAttributes, requestErrorType } from './attributes';

const base = { v: 1, requestId: 'r', t: 0 } as const;
const ended = (fields: Partial<AttemptEndEvent>): AttemptEndEvent => ({
  ...base,
  type: 'attempt-end',
  attempt: 1,
  outcome: 'retry',
  duration: 1,
  ...fields,
});

describe('originAttributes', () => {
  it.each([
    [
      'http://api.example/x?q=***',
      { 'server.address': 'api.example', 'server.port': 80, 'url.scheme': 'http' },
    ],
    ['https://api.example/x', { 'server.address': 'api.example', 'server.port': 443, 'url.scheme': 'https' }],
    [
      'https://api.example:8443/',
      { 'server.address': 'api.example', 'server.port': 8443, 'url.scheme': 'https' },
    ],
    ['http://[::1]:3000/x', { 'server.address': '::1', 'server.port': 3000, 'url.scheme': 'http' }],
    ['/relative/without/a/page', {}],
  ])('%s → %o', (url, expected) => {
    expect(originAttributes(url)).toEqual(expected);
  });
});

describe('methodAttributes', () => {
  it('names the span after a known method', () => {
    expect(methodAttributes('PATCH')).toEqual({
      spanName: 'PATCH',
      attributes: { 'http.request.method': 'PATCH' },
    });
  });

  it('reports a method the conventions do not know as _OTHER, keeping the original', () => {
    expect(methodAttributes('PURGE')).toEqual({
      spanName: 'HTTP',
      attributes: { 'http.request.method': '_OTHER', 'http.request.method_original': 'PURGE' },
    });
  });
});

describe('attemptErrorType', () => {
  it.each<[string, Partial<AttemptEndEvent>, string | undefined]>([
    ['a 503', { status: 503 }, '503'],
    ['a 404 returned as is', { outcome: 'success', status: 404 }, '404'],
    ['a 200', { outcome: 'success', status: 200 }, undefined],
    [
      'a timed-out attempt',
      { outcome: 'timeout', error: { name: 'AttemptTimeoutError', message: 'x' } },
      'timeout',
    ],
    [
      'a reset',
      { outcome: 'error', error: { name: 'TypeError', message: 'x', code: 'ECONNRESET' } },
      'ECONNRESET',
    ],
    [
      'an error without a code',
      { outcome: 'error', error: { name: 'TypeError', message: 'x' } },
      'TypeError',
    ],
    ['a failure with nothing to name', { outcome: 'retry', status: 204 }, '_OTHER'],
  ])('%s', (_, fields, expected) => {
    expect(attemptErrorType(ended(fields))).toBe(expected);
  });
});

describe('requestErrorType', () => {
  const end = (fields: Partial<RequestEndEvent>): RequestEndEvent => ({
    ...base,
    type: 'request-end',
    outcome: 'exhausted',
    attempts: 3,
    totalDelay: 0,
    duration: 1,
    ...fields,
  });

  it('prefers the final status, then the error, then the outcome', () => {
    expect(requestErrorType(end({ status: 503 }))).toBe('503');
    expect(
      requestErrorType(end({ outcome: 'breaker-open', error: { name: 'CircuitOpenError', message: 'x' } })),
    ).toBe('CircuitOpenError');
    expect(requestErrorType(end({}))).toBe('exhausted');
  });
});
