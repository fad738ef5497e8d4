import { type Script, script } from './lua';

/**
 * The recovery gate of core's `recovery-gate.ts` (`gateAdmit`, `gateRecord`) in Lua. The state is
 * one string, `failures holding probeUntil nextProbeAt` (`holding` as 1 or 0, times in the store's
 * clock); a missing key is a key that has seen nothing (`gateInit()`), and a state equal to it is
 * deleted rather than kept. A key lives `idleMs` past its last operation, and at least until its
 * probe's lease and its next probe time have passed, so parked retries polling it keep it alive;
 * one nobody asks about is forgotten, as the memory store sweeps an idle gate.
 *
 * ARGV[4…]: idleMs, then for an admit the probe's leaseMs, for a record holdAfter, the outcome
 * (success, failure, ignored), whether the attempt was the probe (1 or 0), and probeWait.
 * Answer: ok, now, then the verdict (go, probe, park) for an admit, or recovered (1 or 0) and the
 * failures in a row for a record.
 */
const GATE = `
local idleMs = tonumber(ARGV[4])
local raw = redis.call('GET', KEYS[1])
local st
if raw then
  local f, h, p, n = string.match(raw, '^(%S+) (%S+) (%S+) (%S+)$')
  st = { failures = tonumber(f), holding = h == '1', probeUntil = tonumber(p), nextProbeAt = tonumber(n) }
else
  st = { failures = 0, holding = false, probeUntil = 0, nextProbeAt = 0 }
end
local function encode(x)
  local h = '0'
  if x.holding then h = '1' end
  return num(x.failures) .. ' ' .. h .. ' ' .. num(x.probeUntil) .. ' ' .. num(x.nextProbeAt)
end
-- Writes a changed state (one equal to a fresh state is the missing key), or keeps an unchanged
-- one alive.
local function save(x, changed)
  local ttl = px(math.max(idleMs, x.probeUntil - now, x.nextProbeAt - now) + GRACE)
  if changed then
    if x.failures == 0 and not x.holding and x.probeUntil == 0 and x.nextProbeAt == 0 then
      redis.call('DEL', KEYS[1])
    else
      redis.call('SET', KEYS[1], encode(x), 'PX', ttl)
    end
  elseif raw then
    redis.call('PEXPIRE', KEYS[1], ttl)
  end
end
`;

export const GATE_ADMIT: Script = script(
  'gateAdmit',
  `${GATE}
local leaseMs = tonumber(ARGV[5])
local verdict = 'go'
local changed = false
if st.holding then
  if st.probeUntil > now or st.nextProbeAt > now then
    verdict = 'park'
  else
    verdict = 'probe'
    st.probeUntil = now + leaseMs
    changed = true
  end
end
save(st, changed)
return {'ok', num(rnow), verdict}
`,
);

export const GATE_RECORD: Script = script(
  'gateRecord',
  `${GATE}
local holdAfter = tonumber(ARGV[5])
local health = ARGV[6]
local probe = ARGV[7] == '1'
local probeWait = tonumber(ARGV[8])
local recovered = '0'
local changed = false
if health == 'success' then
  -- A success leaves nothing to remember: the key's state goes, and a held key has recovered.
  if st.holding then recovered = '1' end
  if raw then redis.call('DEL', KEYS[1]) end
  return {'ok', num(rnow), recovered, num(0)}
elseif health == 'ignored' then
  if probe then
    st.probeUntil = 0
    changed = true
  end
else
  st.failures = st.failures + 1
  st.holding = st.holding or st.failures >= holdAfter
  if probe then
    st.probeUntil = 0
    st.nextProbeAt = now + probeWait
  end
  changed = true
end
save(st, changed)
return {'ok', num(rnow), recovered, num(st.failures)}
`,
);
