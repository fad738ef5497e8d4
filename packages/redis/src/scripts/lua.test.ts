import { describe, expect, it } from 'vitest';
import { BREAKER_ADMIT, BREAKER_RECORD } from './breaker';
import { BULKHEAD_ACQUIRE, BULKHEAD_RELEASE, BULKHEAD_RENEW } from './bulkhead';
import type { Script } from './lua';
import { PACING_GET, PACING_SET } from './pacing';
import { GATE_ADMIT, GATE_RECORD } from './recovery-gate';
import { BUDGET } from './retry-budget';
import { LIMITER_TAKE } from './token-bucket';

const SCRIPTS: readonly Script[] = [
  BREAKER_ADMIT,
  BREAKER_RECORD,
  BUDGET,
  LIMITER_TAKE,
  BULKHEAD_ACQUIRE,
  BULKHEAD_RELEASE,
  BULKHEAD_RENEW,
  PACING_SET,
  PACING_GET,
  GATE_ADMIT,
  GATE_RECORD,
];

describe('the scripts', () => {
  // Redis refuses an expiry past its integer range ('invalid expire time'), and core accepts
  // windows, refills and open periods whose expiry would be that far: every expiry a script sets
  // goes through the prelude's px(), which caps it at 1e15 ms.
  it.each(SCRIPTS.map((s) => [s.name, s] as const))('%s sets every expiry through px()', (_name, script) => {
    const lua = script.lua;
    // Only PX and PEXPIRE: no EX, EXPIRE, SETEX, PSETEX, EXPIREAT or PEXPIREAT to slip past the cap.
    expect(lua).not.toMatch(/'(EX|EXPIRE|SETEX|PSETEX|EXPIREAT|PEXPIREAT|EXAT|PXAT)'/i);
    const capped = new Set([...lua.matchAll(/local (\w+) = px\(/g)].map((match) => match[1]));
    const expiries = [...lua.matchAll(/'(?:PX|PEXPIRE)',(?: KEYS\[1\],)? ([^)\n]+)/g)].map((m) => m[1] ?? '');
    // Each PX and PEXPIRE is seen by the pattern above, so none escapes the check below.
    expect(expiries).toHaveLength(lua.match(/'(?:PX|PEXPIRE)'/g)?.length ?? 0);
    for (const expiry of expiries) {
      expect(expiry.startsWith('px(') || capped.has(expiry.trim()), `${script.name}: ${expiry}`).toBe(true);
    }
  });
});
