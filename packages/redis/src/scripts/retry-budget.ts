import { BUDGET_BUCKETS, type BudgetState } from '@retryline/core/store';
import { type Script, script } from './lua';

type BudgetBucket = BudgetState['buckets'][number];

/**
 * The retry budget of core's `retry-budget.ts` in Lua: one script for both operations. The state is
 * one string of numbers, `slot requests retries` per bucket, oldest first (at most
 * BUDGET_BUCKETS buckets). Every bucket has left the window `windowMs` after the last operation, so
 * that is how long the key lives.
 *
 * ARGV[4…]: ratio, windowMs, minPerSecond, and `request` or `retry`. Answer: ok, now, allowed,
 * remaining, the new state.
 */
export const BUDGET: Script = script(
  'budget',
  `
local BUCKETS = ${BUDGET_BUCKETS}
local ratio = tonumber(ARGV[4])
local windowMs = tonumber(ARGV[5])
local minPerSecond = tonumber(ARGV[6])
local kind = ARGV[7]

local raw = redis.call('GET', KEYS[1])
local flat = {}
if raw then for x in string.gmatch(raw, '%S+') do flat[#flat + 1] = tonumber(x) end end
local newest = -math.huge
if #flat > 0 then newest = flat[#flat - 2] end
-- A now behind the newest bucket counts in the newest bucket: time never runs back.
local slot = math.max(math.floor((now * BUCKETS) / windowMs), newest)
local oldest = slot - BUCKETS + 1
local slots, requests, retries = {}, {}, {}
local totalRequests, totalRetries = 0, 0
for i = 1, #flat, 3 do
  if flat[i] >= oldest then
    slots[#slots + 1] = flat[i]
    requests[#requests + 1] = flat[i + 1]
    retries[#retries + 1] = flat[i + 2]
    totalRequests = totalRequests + flat[i + 1]
    totalRetries = totalRetries + flat[i + 2]
  end
end
local function limit(r) return ratio * r + (minPerSecond * windowMs) / 1000 end

local allowed, remaining = '1', 0
-- retries + 1 <= limit rather than retries < limit: with a fractional limit the latter would let
-- the window end one retry above it.
if kind == 'retry' and totalRetries + 1 > limit(totalRequests) then
  allowed = '0'
else
  local n = #slots
  if n == 0 or slots[n] ~= slot then
    n = n + 1
    slots[n], requests[n], retries[n] = slot, 0, 0
  end
  if kind == 'retry' then
    retries[n] = retries[n] + 1
    totalRetries = totalRetries + 1
  else
    requests[n] = requests[n] + 1
    totalRequests = totalRequests + 1
  end
  remaining = math.max(0, math.floor(limit(totalRequests) - totalRetries))
end

local parts = {}
for i = 1, #slots do
  parts[#parts + 1] = num(slots[i]) .. ' ' .. num(requests[i]) .. ' ' .. num(retries[i])
end
local encoded = table.concat(parts, ' ')
if #slots == 0 then redis.call('DEL', KEYS[1])
else redis.call('SET', KEYS[1], encoded, 'PX', px(windowMs + GRACE)) end
return {'ok', num(rnow), allowed, num(remaining), encoded}
`,
);

/** The budget buckets a script answered with (slots are the store clock's). */
export function decodeBudgetBuckets(encoded: string): BudgetBucket[] {
  const numbers = encoded === '' ? [] : encoded.split(' ').map(Number);
  const buckets: BudgetBucket[] = [];
  for (let i = 0; i + 2 < numbers.length; i += 3) {
    buckets.push({ slot: numbers[i] ?? 0, requests: numbers[i + 1] ?? 0, retries: numbers[i + 2] ?? 0 });
  }
  return buckets;
}
