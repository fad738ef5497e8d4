import { type Script, script } from './lua';

/**
 * The bulkhead of core's `bulkhead.ts` in Lua, with leases. Holders live in other processes, and a
 * process that dies never releases: so each place and each queue slot carries an expiry, and
 * expired ones are dropped before every decision. A place's lease is renewed by the process that
 * holds it (see `redisStore`'s `leaseMs`); a waiter's slot is renewed each time it asks again,
 * which it does at least every `pollMs`. Without expiries the answers are exactly core's.
 *
 * State: JSON `{"a": [[holder, expiry], …], "q": [[holder, expiry], …]}` (places, then the queue
 * in arrival order), expiries as `%.17g` strings. The key lives until the last lease ends.
 */
const BULKHEAD = `
local raw = redis.call('GET', KEYS[1])
local active, queue = {}, {}
if raw then
  local st = cjson.decode(raw)
  -- cjson writes an empty array as {}: ipairs reads both alike.
  for _, e in ipairs(st.a) do if tonumber(e[2]) > now then active[#active + 1] = e end end
  for _, e in ipairs(st.q) do if tonumber(e[2]) > now then queue[#queue + 1] = e end end
end
local function indexOf(list, holder)
  for i, e in ipairs(list) do if e[1] == holder then return i end end
  return nil
end
local function save()
  if #active == 0 and #queue == 0 then
    redis.call('DEL', KEYS[1])
    return
  end
  local latest = now
  for _, e in ipairs(active) do latest = math.max(latest, tonumber(e[2])) end
  for _, e in ipairs(queue) do latest = math.max(latest, tonumber(e[2])) end
  redis.call('SET', KEYS[1], cjson.encode({ a = active, q = queue }), 'PX', px(latest - now + GRACE))
end
`;

/**
 * ARGV[4…]: maxConcurrent, maxQueue ('inf' for Infinity), holder, leaseMs, queueLeaseMs.
 * Answer: ok, now, `acquired` | `queued` | `rejected`.
 */
export const BULKHEAD_ACQUIRE: Script = script(
  'bulkheadAcquire',
  `${BULKHEAD}
local maxConcurrent = arg(ARGV[4])
local maxQueue = arg(ARGV[5])
local holder = ARGV[6]
local lease = num(now + tonumber(ARGV[7]))
local queueLease = num(now + tonumber(ARGV[8]))

local result
local held = indexOf(active, holder)
local position = indexOf(queue, holder)
if held then
  active[held][2] = lease
  result = 'acquired'
else
  local free = maxConcurrent - #active
  -- First come, first served: a place goes to the holder only when everyone ahead has one.
  local ahead = #queue
  if position then ahead = position - 1 end
  if free > ahead then
    if position then table.remove(queue, position) end
    active[#active + 1] = { holder, lease }
    result = 'acquired'
  elseif position then
    queue[position][2] = queueLease
    result = 'queued'
  elseif #queue < maxQueue then
    queue[#queue + 1] = { holder, queueLease }
    result = 'queued'
  else
    result = 'rejected'
  end
end
save()
return {'ok', num(rnow), result}
`,
);

/** ARGV[4]: holder. Answer: ok, now. */
export const BULKHEAD_RELEASE: Script = script(
  'bulkheadRelease',
  `${BULKHEAD}
local holder = ARGV[4]
local i = indexOf(active, holder)
if i then table.remove(active, i) end
i = indexOf(queue, holder)
if i then table.remove(queue, i) end
save()
return {'ok', num(rnow)}
`,
);

/** ARGV[4…]: leaseMs, then the holders whose places to renew. Answer: ok, now, how many renewed. */
export const BULKHEAD_RENEW: Script = script(
  'bulkheadRenew',
  `${BULKHEAD}
local lease = num(now + tonumber(ARGV[4]))
local mine = {}
for i = 5, #ARGV do mine[ARGV[i]] = true end
local renewed = 0
for _, e in ipairs(active) do
  if mine[e[1]] then
    e[2] = lease
    renewed = renewed + 1
  end
end
save()
return {'ok', num(rnow), num(renewed)}
`,
);
