import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { seededRandom } from '../time/random';
import { virtualClock } from '../time/virtual-clock';
import { type DelayHint, decide, initialState, type RetryState } from './decide';
import { computeDelay } from './delay';
import { MAX_DELAY_LIMIT, normalizePolicy } from './normalize';
import type { PolicyOptions } from './options';

const T0 = 1_000_000;

/** A policy with a visible backoff (1 s, constant, no jitter) and a constant random of 0.5. */
function policyWith(options: PolicyOptions = {}) {
  return normalizePolicy({
    clock: virtualClock(T0),
    random: () => 0.5,
    retries: 3,
    backoff: { strategy: 'constant', base: 1000 },
    jitter: 'none',
    ...options,
  });
}

/** The state after `attempts` attempts of a request that started at T0. */
function stateAfter(
  policy: ReturnType<typeof policyWith>,
  attempts: number,
  extra: Partial<RetryState> = {},
) {
  return { ...initialState(policy, T0), attempts, ...extra };
}

const retryAfter = (delay: number): DelayHint => ({ delay, source: 'retry-after' });

describe('decide', () => {
  it('starts from a serialisable state: no attempts, no delay, previous delay = base', () => {
    const policy = policyWith({ backoff: { strategy: 'exponential', base: 250 } });
    const state = initialState(policy, T0);
    expect(state).toEqual({ attempts: 0, startedAt: T0, totalDelay: 0, previousDelay: 250 });
    expect(JSON.parse(JSON.stringify(state))).toEqual(state);
  });

  it('waits the backoff when there is no hint', () => {
    const policy = policyWith();
    const decision = decide(policy, stateAfter(policy, 1), T0);
    expect(decision).toEqual({
      retry: true,
      reason: 'backoff',
      delay: 1000,
      nextAttempt: 2,
      computation: { retry: 1, delay: 1000, raw: 1000, capped: 1000, overCap: false },
      state: { attempts: 1, startedAt: T0, totalDelay: 1000, previousDelay: 1000 },
    });
    expect('hint' in decision).toBe(false);
  });

  it('draws the jittered backoff from the policy random, like computeDelay', () => {
    const options = { backoff: 'exponential', jitter: 'full' } as const;
    const policy = policyWith({ ...options, random: seededRandom(7) });
    const expected = computeDelay(policyWith(options), 2, 100, seededRandom(7));
    const decision = decide(policy, stateAfter(policy, 2, { previousDelay: 100 }), T0);
    expect(decision.retry && decision.delay).toBe(expected.delay);
    expect(decision.retry && decision.delay).toBeGreaterThanOrEqual(0);
    expect(decision.retry && decision.delay).toBeLessThan(400);
  });

  it('does not read the clock: the time is an argument', () => {
    const clock = virtualClock(T0);
    const now = vi.spyOn(clock, 'now');
    const policy = policyWith({ clock });
    decide(policy, stateAfter(policy, 1), T0 + 123, undefined, retryAfter(5000));
    expect(now).not.toHaveBeenCalled();
  });

  describe('with a server hint', () => {
    it.each([
      ['retry-after', 'retry-after'],
      ['ratelimit', 'rate-limit-reset'],
      ['ratelimit-reset', 'rate-limit-reset'],
      ['x-ratelimit-reset', 'rate-limit-reset'],
    ])(
      'waits hint + U(0, min(hint/10, 1 s)) when a %s hint is longer than the backoff (reason %s)',
      (source, reason) => {
        const policy = policyWith();
        const hint = { delay: 5000, source };
        const decision = decide(policy, stateAfter(policy, 1), T0, undefined, hint);
        // 5000 + min(500, 1000) · 0.5
        expect(decision).toMatchObject({ retry: true, reason, delay: 5250, nextAttempt: 2, hint });
      },
    );

    it('caps the spread at 1 s for long hints', () => {
      const policy = policyWith();
      const decision = decide(policy, stateAfter(policy, 1), T0, undefined, retryAfter(30_000));
      expect(decision).toMatchObject({ retry: true, reason: 'retry-after', delay: 30_500 });
    });

    it('keeps the backoff when it is longer than the hint and its spread, and still reports the hint', () => {
      const policy = policyWith();
      const decision = decide(policy, stateAfter(policy, 1), T0, undefined, retryAfter(200));
      expect(decision).toMatchObject({
        retry: true,
        reason: 'backoff',
        delay: 1000,
        hint: { delay: 200, source: 'retry-after' },
      });
    });

    it('takes the hint when hint + spread equals the backoff', () => {
      // 1000 + min(100, 1000) · 0 = 1000, the backoff exactly.
      const policy = policyWith({ random: () => 0 });
      const decision = decide(policy, stateAfter(policy, 1), T0, undefined, retryAfter(1000));
      expect(decision).toMatchObject({ retry: true, reason: 'retry-after', delay: 1000 });
    });

    it.each([0, 1, 999, 1000, 9_999, 10_000, 10_001, 50_000, 60_000])(
      'never comes back sooner than a %d ms hint, nor later than hint + min(hint/10, 1 s)',
      (hint) => {
        for (const r of [0, 0.25, 0.999_999_999]) {
          const policy = policyWith({ backoff: { strategy: 'constant', base: 0 }, random: () => r });
          const decision = decide(policy, stateAfter(policy, 1), T0, undefined, retryAfter(hint));
          if (!decision.retry) throw new Error(`expected a retry, got ${decision.reason}`);
          expect(decision.delay).toBeGreaterThanOrEqual(hint);
          expect(decision.delay).toBeLessThanOrEqual(hint + Math.min(hint / 10, 1000));
          expect(decision.delay - hint).toBeLessThan(1000);
          if (r === 0) expect(decision.delay).toBe(hint);
        }
      },
    );

    it("stops with 'retry-after-too-long' when the hint passes maxRetryAfter (default 60 s, 'fail')", () => {
      const policy = policyWith();
      expect(policy.maxRetryAfter).toBe(60_000);
      expect(policy.onRetryAfterTooLong).toBe('fail');
      const hint = retryAfter(60_001);
      expect(decide(policy, stateAfter(policy, 1), T0, undefined, hint)).toEqual({
        retry: false,
        reason: 'retry-after-too-long',
        computation: { retry: 1, delay: 1000, raw: 1000, capped: 1000, overCap: false },
        hint,
      });
      // Exactly the maximum is still honoured, with no spread past it.
      expect(decide(policy, stateAfter(policy, 1), T0, undefined, retryAfter(60_000))).toMatchObject({
        retry: true,
        reason: 'retry-after',
        delay: 60_000,
      });
      // Near it, the spread fits in the room left below it.
      expect(decide(policy, stateAfter(policy, 1), T0, undefined, retryAfter(59_800))).toMatchObject({
        delay: 59_900,
      });
    });

    it('honours a custom maxRetryAfter', () => {
      const policy = policyWith({ maxRetryAfter: 5000 });
      expect(decide(policy, stateAfter(policy, 1), T0, undefined, retryAfter(5001))).toMatchObject({
        retry: false,
        reason: 'retry-after-too-long',
      });
      expect(decide(policy, stateAfter(policy, 1), T0, undefined, retryAfter(4000))).toMatchObject({
        retry: true,
        delay: 4200,
      });
    });

    it("waits maxRetryAfter instead with onRetryAfterTooLong: 'clamp', never past it", () => {
      const policy = policyWith({ onRetryAfterTooLong: 'clamp', maxRetryAfter: 20_000 });
      const hint = retryAfter(3_600_000);
      const decision = decide(policy, stateAfter(policy, 1), T0, undefined, hint);
      // No spread past the cap.
      expect(decision).toMatchObject({ retry: true, reason: 'retry-after', delay: 20_000, hint });
    });

    it("stops with 'retry-after-too-long' when the hint ends at or after the deadline", () => {
      const policy = policyWith({ deadline: 10_000, random: () => 0 });
      const now = T0 + 4000;
      // Ends exactly at the deadline.
      expect(decide(policy, stateAfter(policy, 1), now, undefined, retryAfter(6000))).toMatchObject({
        retry: false,
        reason: 'retry-after-too-long',
        hint: { delay: 6000 },
      });
      expect(decide(policy, stateAfter(policy, 1), now, undefined, retryAfter(7000))).toMatchObject({
        retry: false,
        reason: 'retry-after-too-long',
      });
      // One millisecond before it is fine.
      expect(decide(policy, stateAfter(policy, 1), now, undefined, retryAfter(5999))).toMatchObject({
        retry: true,
        reason: 'retry-after',
        delay: 5999,
      });
    });

    it("stops with 'retry-after-too-long' at the deadline even with 'clamp'", () => {
      const policy = policyWith({ deadline: 10_000, onRetryAfterTooLong: 'clamp' });
      const now = T0 + 4000;
      expect(decide(policy, stateAfter(policy, 1), now, undefined, retryAfter(8000))).toMatchObject({
        retry: false,
        reason: 'retry-after-too-long',
      });
      // Clamped to 60 s, still past the deadline.
      expect(decide(policy, stateAfter(policy, 1), now, undefined, retryAfter(3_600_000))).toMatchObject({
        retry: false,
        reason: 'retry-after-too-long',
        hint: { delay: 3_600_000 },
      });
    });

    it("stops with 'deadline' when the backoff (not a hint) would end at the deadline", () => {
      const policy = policyWith({ deadline: 10_000 });
      expect(decide(policy, stateAfter(policy, 1), T0 + 9000, undefined)).toEqual({
        retry: false,
        reason: 'deadline',
        computation: { retry: 1, delay: 1000, raw: 1000, capped: 1000, overCap: false },
      });
      expect(decide(policy, stateAfter(policy, 1), T0 + 8999, undefined)).toMatchObject({ retry: true });
    });

    it("stops with 'retries' when no retry is left, before any hint is considered", () => {
      const random = vi.fn(() => 0.5);
      const policy = policyWith({ retries: 2, random });
      for (const hint of [undefined, retryAfter(1000), retryAfter(3_600_000)]) {
        expect(decide(policy, stateAfter(policy, 3), T0, undefined, hint)).toEqual({
          retry: false,
          reason: 'retries',
        });
      }
      expect(random).not.toHaveBeenCalled();
      // retries: 0 stops after the first attempt.
      const none = policyWith({ retries: 0 });
      expect(decide(none, stateAfter(none, 1), T0, undefined, retryAfter(10))).toEqual({
        retry: false,
        reason: 'retries',
      });
    });

    it("gives up at maxDelay with onMaxDelay: 'give-up' whatever the hint", () => {
      const policy = policyWith({
        backoff: { strategy: 'exponential', base: 1000 },
        maxDelay: 1500,
        onMaxDelay: 'give-up',
      });
      for (const hint of [retryAfter(500), retryAfter(5000)]) {
        expect(decide(policy, stateAfter(policy, 1), T0, undefined, hint)).toEqual({
          retry: false,
          reason: 'max-delay',
          computation: { retry: 1, delay: 1500, raw: 2000, capped: 1500, overCap: true },
        });
      }
    });
  });

  describe('state', () => {
    it('adds the delay to totalDelay and keeps attempts and startedAt', () => {
      const policy = policyWith();
      const state = stateAfter(policy, 2, { totalDelay: 3000, previousDelay: 1000 });
      const decision = decide(policy, state, T0 + 5000, undefined, retryAfter(8000));
      if (!decision.retry) throw new Error('expected a retry');
      expect(decision.nextAttempt).toBe(3);
      // 8000 + 800 · 0.5
      expect(decision.delay).toBe(8400);
      expect(decision.state).toEqual({ attempts: 2, startedAt: T0, totalDelay: 11_400, previousDelay: 1000 });
      expect(JSON.parse(JSON.stringify(decision.state))).toEqual(decision.state);
      // The input state is a value: left untouched.
      expect(state).toEqual({ attempts: 2, startedAt: T0, totalDelay: 3000, previousDelay: 1000 });
    });

    it('carries the chosen backoff as previousDelay, from which decorrelated jitter walks', () => {
      const policy = policyWith({ backoff: { strategy: 'exponential', base: 100 }, jitter: 'decorrelated' });
      const first = decide(policy, stateAfter(policy, 1), T0);
      if (!first.retry) throw new Error('expected a retry');
      // U(base, 3 · base) at 0.5: 100 + 0.5 · 200
      expect(first.delay).toBe(200);
      expect(first.state.previousDelay).toBe(200);
      const second = decide(policy, { ...first.state, attempts: 2 }, T0 + 200);
      if (!second.retry) throw new Error('expected a retry');
      // U(100, 3 · 200) at 0.5: 100 + 0.5 · 500
      expect(second.delay).toBe(350);
      expect(second.state).toEqual({ attempts: 2, startedAt: T0, totalDelay: 550, previousDelay: 350 });
    });
  });

  it('property: a retry after a hint waits a finite delay ≥ 0, and ≥ the hint when the hint is honoured', () => {
    const jitter = fc.constantFrom('none', 'constant', 'equal', 'full', 'decorrelated', 'proportional');
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 10_000_000 }),
        fc.integer(),
        jitter,
        fc.integer({ min: 0, max: MAX_DELAY_LIMIT }),
        fc.constantFrom('fail', 'clamp'),
        fc.constantFrom('retry-after', 'ratelimit', 'x-ratelimit-reset'),
        (hintDelay, seed, jitterType, maxRetryAfter, onRetryAfterTooLong, source) => {
          const policy = policyWith({
            backoff: { strategy: 'exponential', base: 100 },
            jitter: jitterType,
            random: seededRandom(seed),
            maxRetryAfter,
            onRetryAfterTooLong,
          });
          const hint = { delay: hintDelay, source };
          const decision = decide(policy, stateAfter(policy, 1), T0, undefined, hint);
          const tooLong = hintDelay > maxRetryAfter;
          if (tooLong && onRetryAfterTooLong === 'fail') {
            expect(decision).toMatchObject({ retry: false, reason: 'retry-after-too-long' });
            return;
          }
          if (!decision.retry) throw new Error(`expected a retry, got ${decision.reason}`);
          expect(Number.isFinite(decision.delay)).toBe(true);
          expect(decision.delay).toBeGreaterThanOrEqual(0);
          const asked = tooLong ? maxRetryAfter : hintDelay;
          expect(decision.delay).toBeGreaterThanOrEqual(asked);
          expect(decision.delay).toBeGreaterThanOrEqual(decision.computation.delay);
          expect(decision.delay).toBeLessThanOrEqual(
            Math.max(asked + Math.min(asked / 10, 1000), decision.computation.delay),
          );
          expect(decision.state.totalDelay).toBe(decision.delay);
        },
      ),
    );
  });
});
