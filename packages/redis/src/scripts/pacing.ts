import { type Script, script } from './lua';

/**
 * Server-informed pacing: the time a key's quota is back, the later of the stored and the given
 * one, kept until it passes. With the Redis clock the caller's `until` is moved into Redis time by
 * the caller's offset (`until − callerNow + redisNow`), so a host whose clock is ahead does not
 * pause the others for longer than the server asked.
 *
 * ARGV[4]: until (caller's clock). Answer: ok, now.
 */
export const PACING_SET: Script = script(
  'pacingSet',
  `
local untilNow = tonumber(ARGV[4])
if ARGV[1] ~= 'caller' then untilNow = untilNow - cnow + now end
if untilNow <= now then return {'ok', num(rnow)} end
local current = tonumber(redis.call('GET', KEYS[1]))
if current and current > untilNow then untilNow = current end
redis.call('SET', KEYS[1], num(untilNow), 'PX', px(untilNow - now + GRACE))
return {'ok', num(rnow)}
`,
);

/** Answer: ok, now, until (store clock) or '' when the quota is not spent. */
export const PACING_GET: Script = script(
  'pacingGet',
  `
local current = tonumber(redis.call('GET', KEYS[1]))
if current == nil then return {'ok', num(rnow), ''} end
if current > now then return {'ok', num(rnow), num(current)} end
redis.call('DEL', KEYS[1])
return {'ok', num(rnow), ''}
`,
);
