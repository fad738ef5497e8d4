import type { Clock } from '@retryline/core';
import { systemClock } from '@retryline/core/adapter';
import { HttpResponse } from 'msw';
import type { Step } from './steps';
import { expectClock, expectInteger, expectOneOf, expectOptions, invalid } from './validate';

/** How a rate-limited response says when to come back. */
export type RateLimitForm = 'seconds' | 'date' | 'ratelimit' | 'x-ratelimit';

/** Options of {@link rateLimited}. */
export interface RateLimitedOptions {
  /**
   * Seconds until the client may try again: a whole number, as every form carries whole seconds.
   * @example
   * ```ts
   * rateLimited({ retryAfter: 2 });
   * ```
   */
  retryAfter: number;
  /**
   * The header form of the hint:
   * - `'seconds'`: `Retry-After: 2` (RFC 9110 §10.2.3, delay-seconds)
   * - `'date'`: `Retry-After: Thu, 01 Jan 2026 00:00:02 GMT`, the clock's now plus `retryAfter`
   * - `'ratelimit'`: `RateLimit: "default";r=0;t=2` (draft-ietf-httpapi-ratelimit-headers)
   * - `'x-ratelimit'`: `X-RateLimit-Remaining: 0` and `X-RateLimit-Reset: 2` (de facto)
   * @default 'seconds'
   * @example
   * ```ts
   * rateLimited({ retryAfter: 2, as: 'ratelimit' });
   * ```
   */
  as?: RateLimitForm;
  /**
   * The response status. A 503 with `Retry-After` is the other common form.
   * @default 429
   * @example
   * ```ts
   * rateLimited({ retryAfter: 30, status: 503 });
   * ```
   */
  status?: number;
  /**
   * The clock `'date'` reads now from. Pass the client's clock (a `virtualClock()` in tests).
   * @default systemClock
   * @example
   * ```ts
   * rateLimited({ retryAfter: 2, as: 'date', clock: virtualClock(Date.UTC(2026, 0, 1)) });
   * ```
   */
  clock?: Clock;
  /**
   * The quota policy the server advertises: `RateLimit-Policy: "default";q=100;w=60` with the
   * `'ratelimit'` form, `X-RateLimit-Limit: 100` with `'x-ratelimit'`; ignored by the other forms.
   * @default undefined (no policy header)
   * @example
   * ```ts
   * rateLimited({ retryAfter: 2, as: 'ratelimit', policy: { quota: 100, window: 60 } });
   * ```
   */
  policy?: { quota: number; window: number };
}

const FORMS: readonly RateLimitForm[] = ['seconds', 'date', 'ratelimit', 'x-ratelimit'];
const SECOND = 1000;

/**
 * A step answering that the client is over its rate limit (429 by default), with a hint of when to
 * come back in one of four header forms. A client that honours hints waits at least `retryAfter`
 * seconds before its next attempt.
 *
 * @example
 * ```ts
 * http.get('https://api.example/orders', sequence([rateLimited({ retryAfter: 1 }), status(200)]));
 * ```
 */
export function rateLimited(options: RateLimitedOptions): Step {
  if (options === undefined) throw invalid('options', 'an object with retryAfter', options);
  const input = expectOptions('options', options);
  const seconds = expectInteger('retryAfter', input.retryAfter, 0);
  const form = expectOneOf('as', input.as, FORMS, 'seconds');
  const code = expectInteger('status', input.status ?? 429, 200);
  if (code > 599) throw invalid('status', 'an HTTP status code in [200, 599]', code);
  const clock = expectClock<Clock>('clock', input.clock, systemClock);
  const policy = input.policy === undefined ? undefined : expectOptions('policy', input.policy);
  const quota = policy && expectInteger('policy.quota', policy.quota, 0);
  const window = policy && expectInteger('policy.window', policy.window, 1);

  return () => {
    const headers: Record<string, string> = {};
    switch (form) {
      case 'seconds':
        headers['retry-after'] = String(seconds);
        break;
      case 'date': {
        // RFC 9110 §5.6.7: an HTTP-date has one-second resolution. Round up, so the date is never
        // earlier than now + retryAfter and a client that honours it waits the full time.
        const at = Math.ceil((clock.now() + seconds * SECOND) / SECOND) * SECOND;
        // toUTCString() is the IMF-fixdate form (ECMA-262 Date.prototype.toUTCString).
        headers['retry-after'] = new Date(at).toUTCString();
        break;
      }
      case 'ratelimit':
        // draft-ietf-httpapi-ratelimit-headers §4: r = remaining quota, t = seconds until it returns.
        headers.ratelimit = `"default";r=0;t=${seconds}`;
        if (policy) headers['ratelimit-policy'] = `"default";q=${quota};w=${window}`;
        break;
      case 'x-ratelimit':
        headers['x-ratelimit-remaining'] = '0';
        headers['x-ratelimit-reset'] = String(seconds);
        if (policy) headers['x-ratelimit-limit'] = String(quota);
        break;
    }
    return new HttpResponse(null, { status: code, headers });
  };
}
