import type { BucketState } from '@retryline/core/store';
import { type Script, script } from './lua';

/**
 * The rate limiter's token bucket of core's `token-bucket.ts` in Lua: lazy refill, the same
 * one-billionth-of-a-token slack. The state is `tokens last`. A missing key is a full bucket, so
 * the key lives as long as the bucket takes to refill to full (plus a grace second).
 *
 * ARGV[4…]: capacity, refillPerSecond, n. Answer: ok, now, allowed, retryAt ('' when allowed), the
 * new state.
 */
export const LIMITER_TAKE: Script = script(
  'limiterTake',
  `
local EPSILON = 1e-9
local capacity = tonumber(ARGV[4])
local refillPerSecond = tonumber(ARGV[5])
local n = tonumber(ARGV[6])

local raw = redis.call('GET', KEYS[1])
local tokens, last = capacity, now
if raw then
  local t, l = string.match(raw, '^(%S+) (%S+)$')
  tokens, last = tonumber(t), tonumber(l)
end
-- A clock that went back adds nothing and does not move last back.
local elapsed = now - last
if elapsed > 0 then
  tokens = math.min(capacity, tokens + (elapsed * refillPerSecond) / 1000)
  last = now
end
local allowed, retryAt = '1', ''
if tokens + EPSILON >= n then
  tokens = math.max(0, tokens - n)
else
  allowed = '0'
  local missing = n - tokens
  local wait = 0
  if missing > EPSILON then wait = (missing * 1000) / refillPerSecond end
  retryAt = num(last + wait)
end
local encoded = num(tokens) .. ' ' .. num(last)
local full = math.max(0, last - now) + math.max(0, (capacity - tokens) * 1000 / refillPerSecond)
redis.call('SET', KEYS[1], encoded, 'PX', px(full + GRACE))
return {'ok', num(rnow), allowed, retryAt, encoded}
`,
);

/** The bucket a script answered with, `last` moved into the caller's clock by `shift`. */
export function decodeBucket(encoded: string, shift: number): BucketState {
  const [tokens, last] = encoded.split(' ');
  return { tokens: Number(tokens), last: Number(last) + shift };
}
