/**
 * Server-informed pacing: whether a response says the client's quota is spent, and
 * until when. A 429 with any hint says so; so does a response of any status whose `RateLimit`
 * field has a policy with `r=0`, or whose `RateLimit-Remaining` / `X-RateLimit-Remaining` is 0
 * next to a reset. A reset header alone (quota left unknown) says nothing. Pure.
 */

import type { HeadersLike } from './headers';
import { parseSpentQuota, type RetryHint } from './retry-hint';

/**
 * When the quota a response speaks of is back, if the response says it is spent; else `undefined`.
 * `hint` is what `parseRetryHint` read from the same headers: a 429 is spent until it, whatever
 * header it came from; any other status only by what {@link parseSpentQuota} reads.
 *
 * @example
 * ```ts
 * const headers = { ratelimit: '"default";r=0;t=10' };
 * quotaSpentUntil(200, headers, parseRetryHint(headers, 0)); // 10000
 * ```
 */
export function quotaSpentUntil(
  status: number,
  headers: HeadersLike,
  hint: RetryHint | undefined,
): number | undefined {
  if (!hint) return undefined;
  if (status === 429) return hint.retryAt;
  return parseSpentQuota(headers, hint.retryAt - hint.delay)?.retryAt;
}
