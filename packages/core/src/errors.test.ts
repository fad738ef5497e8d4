import { describe, expect, it } from 'vitest';
import {
  BodyNotReplayableError,
  BulkheadRejectedError,
  CircuitOpenError,
  InvalidOptionsError,
  isRetrylineError,
  RateLimitedError,
  RetriesExhaustedError,
  RetryAfterTooLongError,
  RetryBudgetExhaustedError,
  RetryLaterError,
  RetrylineError,
} from './errors';

describe('the error tree', () => {
  it.each([
    ['CircuitOpenError', new CircuitOpenError('open', { retryAt: 5000, attempts: 2 })],
    ['RateLimitedError', new RateLimitedError('limited', { retryAt: 5000, attempts: 2 })],
    ['RetryAfterTooLongError', new RetryAfterTooLongError('later', { retryAt: 5000, attempts: 2 })],
  ] as const)('%s says when to come back', (name, error) => {
    expect(error).toBeInstanceOf(RetryLaterError);
    expect(error).toBeInstanceOf(RetrylineError);
    expect(error.name).toBe(name);
    expect(error.retryAt).toBe(5000);
    expect(error.attempts).toBe(2);
    expect(error.totalDelay).toBe(0);
    expect(isRetrylineError(error, name)).toBe(true);
  });

  it('keeps the cause and names every class', () => {
    const cause = new Error('socket hang up');
    const errors = [
      new RetriesExhaustedError('x', { cause, attempts: 3, totalDelay: 300 }),
      new RetryBudgetExhaustedError('x', { cause }),
      new BodyNotReplayableError('x', { cause }),
      new BulkheadRejectedError('x', { cause }),
      new InvalidOptionsError('x', { cause, option: 'retries' }),
    ];
    expect(errors.map((error) => error.name)).toEqual([
      'RetriesExhaustedError',
      'RetryBudgetExhaustedError',
      'BodyNotReplayableError',
      'BulkheadRejectedError',
      'InvalidOptionsError',
    ]);
    for (const error of errors) expect(error.cause).toBe(cause);
    expect(new RetrylineError('no cause')).not.toHaveProperty('cause');
  });

  it('is not fooled by look-alikes', () => {
    expect(isRetrylineError({ name: 'CircuitOpenError', retryAt: 1 })).toBe(false);
    expect(isRetrylineError(new Error('plain'))).toBe(false);
    expect(isRetrylineError(null)).toBe(false);
    expect(isRetrylineError('RetrylineError')).toBe(false);
  });
});
