import type { BreakerState, BreakerStateName, BreakerTransition } from '@retryline/core/store';
import { type Script, script } from './lua';

/**
 * The circuit breaker of core's `breaker.ts` in Lua. The state is one string,
 * `state|window|consecutive|openedAt|trialAt|trials|trialSuccesses`, with the window as `0`/`1`
 * characters (oldest first, `1` a failure) and absent times empty. A key holds it for
 * `openMs + idleMs` after the last operation, so a breaker nobody calls is forgotten, as the memory
 * store forgets a closed breaker idle for a minute; a missing key is a closed breaker.
 *
 * ARGV[4…]: failureRate, windowSize, minCalls, consecutiveFailures ('' when absent), openMs,
 * halfOpenCalls, idleMs, and for a record the outcome. Answer: ok, now, allowed (admit only),
 * transition (`from>to` or ''), retryAt ('' unless refused), the new state.
 */
const BREAKER = `
local failureRate = tonumber(ARGV[4])
local windowSize = tonumber(ARGV[5])
local minCalls = tonumber(ARGV[6])
local consecutiveFailures = tonumber(ARGV[7])
local openMs = tonumber(ARGV[8])
local halfOpenCalls = tonumber(ARGV[9])
local ttl = px(openMs + tonumber(ARGV[10]))

local raw = redis.call('GET', KEYS[1])
local st
if raw then
  local s, w, c, o, a, t, n = string.match(raw, '^([^|]*)|([^|]*)|([^|]*)|([^|]*)|([^|]*)|([^|]*)|([^|]*)$')
  st = { s = s, w = w, c = tonumber(c), o = tonumber(o), a = tonumber(a), t = tonumber(t), n = tonumber(n) }
else
  st = { s = 'closed', w = '', c = 0, t = 0, n = 0 }
end
local function opt(x) if x == nil then return '' end return num(x) end
local function encode(x)
  return x.s .. '|' .. x.w .. '|' .. num(x.c) .. '|' .. opt(x.o) .. '|' .. opt(x.a) .. '|' .. num(x.t) .. '|' .. num(x.n)
end
local function opened(x)
  return { s = 'open', w = x.w, c = x.c, o = now, t = 0, n = 0 }
end
local function halfOpen(x, trials, successes)
  return { s = 'half-open', w = x.w, c = x.c, a = now, t = trials, n = successes }
end
-- Writes a changed state (a closed breaker with an empty window is the missing key), or keeps an
-- unchanged one alive.
local function save(x, changed)
  if changed then
    if x.s == 'closed' and x.w == '' and x.c == 0 then redis.call('DEL', KEYS[1])
    else redis.call('SET', KEYS[1], encode(x), 'PX', ttl) end
  elseif raw then
    redis.call('PEXPIRE', KEYS[1], ttl)
  end
end
`;

export const BREAKER_ADMIT: Script = script(
  'breakerAdmit',
  `${BREAKER}
local allowed, transition, retryAt, changed = '1', '', '', false
if st.s == 'open' then
  local openedAt = st.o or now
  if now - openedAt < openMs then
    allowed = '0'
    retryAt = num(openedAt + openMs)
  else
    st = halfOpen(st, 1, 0)
    transition = 'open>half-open'
    changed = true
  end
elseif st.s == 'half-open' then
  local trialAt = st.a or now
  -- Only trials still outstanding can be lost; the successes already seen stand.
  local trials = st.t
  if now - trialAt >= openMs then trials = st.n end
  if trials < halfOpenCalls then
    st = halfOpen(st, trials + 1, st.n)
    changed = true
  else
    allowed = '0'
    retryAt = num(trialAt + openMs)
  end
end
save(st, changed)
return {'ok', num(rnow), allowed, transition, retryAt, encode(st)}
`,
);

export const BREAKER_RECORD: Script = script(
  'breakerRecord',
  `${BREAKER}
local outcome = ARGV[11]
local transition, changed = '', false
if st.s == 'half-open' then
  local outstanding = st.t > st.n
  if outcome == 'failure' then
    st = opened(st)
    transition = 'half-open>open'
    changed = true
  elseif outstanding and outcome == 'ignored' then
    st.t = st.t - 1
    changed = true
  elseif outstanding then
    if st.n + 1 >= halfOpenCalls then
      st = { s = 'closed', w = '', c = 0, t = 0, n = 0 }
      transition = 'half-open>closed'
    else
      st.n = st.n + 1
    end
    changed = true
  end
elseif st.s == 'closed' and outcome ~= 'ignored' then
  local failed = outcome == 'failure'
  local w = st.w .. (failed and '1' or '0')
  if #w > windowSize then w = string.sub(w, #w - windowSize + 1) end
  st.w = w
  if failed then st.c = st.c + 1 else st.c = 0 end
  local _, failures = string.gsub(w, '1', '')
  local byRate = #w >= minCalls and failures / #w > failureRate
  local byCount = consecutiveFailures ~= nil and st.c >= consecutiveFailures
  if byRate or byCount then
    st = opened(st)
    transition = 'closed>open'
  end
  changed = true
end
save(st, changed)
return {'ok', num(rnow), '1', transition, '', encode(st)}
`,
);

/** The breaker state a script answered with, its times moved into the caller's clock by `shift`. */
export function decodeBreakerState(encoded: string, shift: number): BreakerState {
  const [state = 'closed', window = '', consecutive, openedAt, trialAt, trials, trialSuccesses] =
    encoded.split('|');
  return {
    state: state as BreakerStateName,
    window: [...window].map((c) => c === '1'),
    consecutive: Number(consecutive),
    ...(openedAt ? { openedAt: Number(openedAt) + shift } : {}),
    ...(trialAt ? { trialAt: Number(trialAt) + shift } : {}),
    trials: Number(trials),
    trialSuccesses: Number(trialSuccesses),
  };
}

/** `from>to`, as a script writes a transition, or undefined for ''. */
export function decodeTransition(encoded: string | undefined): BreakerTransition | undefined {
  if (!encoded) return undefined;
  const [from, to] = encoded.split('>') as [BreakerStateName, BreakerStateName];
  return { from, to };
}
