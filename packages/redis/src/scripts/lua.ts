/**
 * What every script starts with. Each guard operation is one script, so one round trip and atomic
 * (Redis runs a script to the end before anything else). The layout of ARGV is shared:
 *
 * - `ARGV[1]` the clock: `redis` takes `now` from Redis `TIME`, so hosts with skewed clocks agree;
 *   `caller` takes the caller's `now` (for tests that pass time in).
 * - `ARGV[2]` the caller's `now` (epoch ms).
 * - `ARGV[3]` a deadline in Redis time (ms): a script that starts after it does nothing and answers
 *   `late`. ioredis resends commands that were in flight when the connection dropped once it
 *   reconnects; the store has answered for them by then (fail-open), so applying them would count
 *   a request twice or take a bulkhead place nobody releases.
 * - `ARGV[4…]` the operation's own arguments.
 *
 * Every answer is an array of strings, `ok` or `late` then Redis's `now`: numbers are formatted
 * with `%.17g` because Redis turns a Lua number into an integer reply (dropping fractions) and
 * cjson writes only 14 significant digits; 17 make every double round-trip exactly, so the
 * arithmetic below (the same operations in the same order as core's pure functions, on the same
 * IEEE doubles) gives the same answers.
 */
export const PRELUDE = `
local function num(x) return string.format('%.17g', x) end
local function arg(x) if x == 'inf' then return math.huge end return tonumber(x) end
local time = redis.call('TIME')
local rnow = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local deadline = tonumber(ARGV[3])
if deadline > 0 and rnow > deadline then return {'late', num(rnow)} end
local cnow = tonumber(ARGV[2])
local now = rnow
if ARGV[1] == 'caller' then now = cnow end
-- Extra life for a key past the moment its state stops mattering: covers clock granularity.
local GRACE = 1000
-- A key's time to live as PX takes it: whole, at least 1 ms, and at most 1e15 ms (about 31,700
-- years). Core accepts windows and refills whose expiry would pass Redis's integer range, which
-- refuses the write; state that lives past the cap outlives any process that reads it.
local function px(ms) return string.format('%d', math.max(1, math.min(math.ceil(ms), 1e15))) end
`;

/** A script: its name (the ioredis command it is defined as) and its Lua source. */
export interface Script {
  readonly name: string;
  readonly lua: string;
}

/** Prepends the prelude to a script body. */
export function script(name: string, body: string): Script {
  return { name, lua: `${PRELUDE}\n${body.trim()}\n` };
}
