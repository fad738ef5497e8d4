import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidOptionsError } from '../errors';
import {
  type BucketMap,
  type BucketState,
  bucketInit,
  bucketTake,
  bucketTimeUntil,
  evictIdle,
  isIdle,
  keyedTake,
  normalizeBucket,
} from './token-bucket';

// The demo limiter: a burst of 50, 100 tokens a second.
const SEED = normalizeBucket({ capacity: 50, refillPerSecond: 100 });
// 250/s is a quarter token per ms, exact in binary, so waits compare with toBe.
const QUARTER = normalizeBucket({ capacity: 50, refillPerSecond: 250 });
const EMPTY: BucketState = { tokens: 0, last: 0 };

function thrown(run: () => unknown): InvalidOptionsError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidOptionsError);
    return error as InvalidOptionsError;
  }
  throw new Error('expected an InvalidOptionsError');
}

/** Takes one token at a time at `now` until refused; returns how many were taken. */
function drain(state: BucketState, config = SEED, now = 0) {
  let taken = 0;
  let current = state;
  for (;;) {
    const result = bucketTake(current, config, 1, now);
    current = result.state;
    if (!result.allowed) return { taken, state: current };
    taken += 1;
  }
}

describe('normalizeBucket', () => {
  it('keeps valid options', () => {
    expect(normalizeBucket({ capacity: 1, refillPerSecond: 0.5 })).toEqual({
      capacity: 1,
      refillPerSecond: 0.5,
    });
  });

  it.each([
    [
      { refillPerSecond: 1 },
      'limiter.capacity',
      'Expected limiter.capacity to be a finite number ≥ 1, got undefined',
    ],
    [
      { capacity: 0, refillPerSecond: 1 },
      'limiter.capacity',
      'Expected limiter.capacity to be a finite number ≥ 1, got 0',
    ],
    [
      { capacity: 0.5, refillPerSecond: 1 },
      'limiter.capacity',
      'Expected limiter.capacity to be a finite number ≥ 1, got 0.5',
    ],
    [
      { capacity: Number.POSITIVE_INFINITY, refillPerSecond: 1 },
      'limiter.capacity',
      'Expected limiter.capacity to be a finite number ≥ 1, got Infinity',
    ],
    [
      { capacity: '5', refillPerSecond: 1 },
      'limiter.capacity',
      "Expected limiter.capacity to be a finite number ≥ 1, got '5'",
    ],
    [
      { capacity: 5 },
      'limiter.refillPerSecond',
      'Expected limiter.refillPerSecond to be a finite number > 0, got undefined',
    ],
    [
      { capacity: 5, refillPerSecond: 0 },
      'limiter.refillPerSecond',
      'Expected limiter.refillPerSecond to be a finite number > 0, got 0',
    ],
    [
      { capacity: 5, refillPerSecond: -1 },
      'limiter.refillPerSecond',
      'Expected limiter.refillPerSecond to be a finite number > 0, got -1',
    ],
    [
      { capacity: 5, refillPerSecond: Number.NaN },
      'limiter.refillPerSecond',
      'Expected limiter.refillPerSecond to be a finite number > 0, got NaN',
    ],
    [null, 'limiter', 'Expected limiter to be an object with capacity and refillPerSecond, got null'],
    [[], 'limiter', 'Expected limiter to be an object with capacity and refillPerSecond, got an array'],
    [100, 'limiter', 'Expected limiter to be an object with capacity and refillPerSecond, got 100'],
  ])('rejects %o', (input, option, message) => {
    const error = thrown(() => normalizeBucket(input as never));
    expect(error.message).toBe(message);
    expect(error.option).toBe(option);
  });

  it('names the options under the prefix it is given, and reads own properties only', () => {
    expect(thrown(() => normalizeBucket({ capacity: 0, refillPerSecond: 1 }, 'rateLimit')).option).toBe(
      'rateLimit.capacity',
    );
    const inherited = Object.create({ capacity: 5, refillPerSecond: 1 }) as never;
    expect(thrown(() => normalizeBucket(inherited)).option).toBe('limiter.capacity');
  });

  it.each([
    [51, 'Expected n to be a finite number between 0 and 50, got 51'],
    [-1, 'Expected n to be a finite number between 0 and 50, got -1'],
    [Number.NaN, 'Expected n to be a finite number between 0 and 50, got NaN'],
  ])('refuses to take or wait for n = %s tokens', (n, message) => {
    expect(thrown(() => bucketTake(EMPTY, SEED, n, 0)).message).toBe(message);
    expect(thrown(() => bucketTimeUntil(EMPTY, SEED, n, 0)).message).toBe(message);
  });
});

describe('token bucket', () => {
  it('starts full: a burst of exactly capacity, then a refusal that says when to come back', () => {
    const burst = drain(bucketInit(SEED, 0));
    expect(burst.taken).toBe(50);
    expect(bucketTake(burst.state, SEED, 1, 0)).toEqual({
      allowed: false,
      state: { tokens: 0, last: 0 },
      retryAt: 10,
    });
  });

  it('seed demo: bursts of callers for one second against burst 50, rate 100 get exactly 150 through', () => {
    let state = bucketInit(SEED, 0);
    let accepted = 0;
    let beforeLastMs = 0;
    // Eight concurrent callers every millisecond from 0 to 1000 ms: 8,008 calls.
    for (let now = 0; now <= 1000; now++) {
      if (now === 1000) beforeLastMs = accepted;
      for (let caller = 0; caller < 8; caller++) {
        const result = bucketTake(state, SEED, 1, now);
        state = result.state;
        if (result.allowed) accepted += 1;
      }
    }
    expect(accepted).toBe(150);
    // The 100th refilled token lands exactly at one second, not a float's hair later.
    expect(beforeLastMs).toBe(149);
    expect(state.tokens).toBeLessThan(1);
  });

  it('holds exactly `rate` tokens after one idle second from empty', () => {
    const config = normalizeBucket({ capacity: 500, refillPerSecond: 100 });
    expect(drain(EMPTY, config, 999).taken).toBe(99);
    expect(drain(EMPTY, config, 1000).taken).toBe(100);
  });

  it('never holds more than capacity, however long it sat idle', () => {
    const hour = 3_600_000;
    expect(drain(EMPTY, SEED, hour).taken).toBe(50);
    expect(bucketTake(EMPTY, SEED, 50, hour).state).toEqual({ tokens: 0, last: hour });
    expect(bucketTimeUntil(EMPTY, SEED, 50, hour)).toBe(0);
  });

  it('takes several tokens at once, or none of them', () => {
    const state: BucketState = { tokens: 3, last: 0 };
    expect(bucketTake(state, SEED, 3, 0)).toEqual({ allowed: true, state: { tokens: 0, last: 0 } });
    // A refused take of 4 leaves the 3 tokens where they were.
    expect(bucketTake(state, SEED, 4, 0)).toEqual({ allowed: false, state, retryAt: 10 });
  });

  it('counts a token short by float dust as whole, and never goes below zero for it', () => {
    // What ten 0.1-token refills sum to in binary floating point.
    const dust: BucketState = { tokens: 0.9999999999999999, last: 0 };
    expect(bucketTake(dust, SEED, 1, 0)).toEqual({ allowed: true, state: { tokens: 0, last: 0 } });
    expect(bucketTimeUntil(dust, SEED, 1, 0)).toBe(0);
    expect(bucketTake({ tokens: 0.999, last: 0 }, SEED, 1, 0).allowed).toBe(false);
  });

  it('timeUntil is exact', () => {
    expect(bucketTimeUntil(EMPTY, QUARTER, 1, 0)).toBe(4);
    expect(bucketTimeUntil(EMPTY, QUARTER, 50, 0)).toBe(200);
    expect(bucketTimeUntil(EMPTY, QUARTER, 1, 3)).toBe(1);
    expect(bucketTimeUntil(EMPTY, QUARTER, 1, 4)).toBe(0);
    expect(bucketTimeUntil(EMPTY, QUARTER, 0, 0)).toBe(0);
    expect(bucketTimeUntil(bucketInit(QUARTER, 0), QUARTER, 50, 0)).toBe(0);
    expect(bucketTimeUntil({ tokens: 10, last: 0 }, QUARTER, 12, 0)).toBe(8);
  });

  it('a take refused at `now` succeeds at its retryAt, and not a millisecond before', () => {
    const refused = bucketTake({ tokens: 0.5, last: 0 }, SEED, 2, 0);
    if (refused.allowed) throw new Error('expected a refusal');
    expect(refused.retryAt).toBe(15);
    expect(bucketTimeUntil({ tokens: 0.5, last: 0 }, SEED, 2, 0)).toBe(15);
    expect(bucketTake(refused.state, SEED, 2, 14).allowed).toBe(false);
    expect(bucketTake(refused.state, SEED, 2, 15).allowed).toBe(true);
  });

  it('does not refill twice when the clock goes back', () => {
    const state: BucketState = { tokens: 0, last: 1000 };
    // 100 ms behind `last`: nothing is added, `last` stays, and the wait includes the gap.
    expect(bucketTake(state, QUARTER, 1, 900)).toEqual({ allowed: false, state, retryAt: 1004 });
    expect(bucketTimeUntil(state, QUARTER, 1, 900)).toBe(104);
    expect(drain(state, QUARTER, 1004).taken).toBe(1);
  });

  it('keeps its state as plain JSON', () => {
    const { state } = bucketTake(bucketInit(SEED, 0), SEED, 7, 123);
    expect(JSON.parse(JSON.stringify(state))).toEqual(state);
    expect(state).toEqual({ tokens: 43, last: 123 });
  });

  it('property: tokens stay in [0, capacity] and acceptances within capacity + rate × elapsed', () => {
    type Op = { kind: 'take'; n: number } | { kind: 'advance'; ms: number };
    const op: fc.Arbitrary<Op> = fc.oneof(
      fc.integer({ min: 0, max: 5 }).map((n) => ({ kind: 'take' as const, n })),
      fc.integer({ min: 0, max: 200 }).map((ms) => ({ kind: 'advance' as const, ms })),
    );
    fc.assert(
      fc.property(
        fc.integer({ min: 5, max: 60 }),
        fc.integer({ min: 1, max: 500 }),
        fc.array(op, { maxLength: 500 }),
        (capacity, rate, ops) => {
          const config = normalizeBucket({ capacity, refillPerSecond: rate });
          let state = bucketInit(config, 0);
          // A reference in thousandths of a token: whole ms × whole rate is exact in integers.
          let milli = capacity * 1000;
          let last = 0;
          let now = 0;
          let accepted = 0;
          for (const step of ops) {
            if (step.kind === 'advance') {
              now += step.ms;
              continue;
            }
            milli = Math.min(capacity * 1000, milli + (now - last) * rate);
            last = now;
            const result = bucketTake(state, config, step.n, now);
            expect(result.allowed).toBe(milli >= step.n * 1000);
            if (result.allowed) {
              milli -= step.n * 1000;
              accepted += step.n;
            } else {
              // The wait it announces is the wait there is.
              expect(result.retryAt).toBeCloseTo(now + (step.n * 1000 - milli) / rate, 6);
              expect(bucketTake(result.state, config, step.n, result.retryAt).allowed).toBe(true);
            }
            state = result.state;
            expect(state.tokens).toBeGreaterThanOrEqual(0);
            expect(state.tokens).toBeLessThanOrEqual(capacity);
            expect(state.tokens).toBeCloseTo(milli / 1000, 6);
            expect(accepted).toBeLessThanOrEqual(capacity + (rate * now) / 1000);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('keyed limiter', () => {
  it('gives each key its own bucket, full on first sight', () => {
    let map: BucketMap = {};
    for (let i = 0; i < 50; i++) map = keyedTake(map, SEED, 'a.example', 1, 0).state;
    const a = keyedTake(map, SEED, 'a.example', 1, 0);
    expect(a).toEqual({ allowed: false, state: map, retryAt: 10 });
    const b = keyedTake(map, SEED, 'b.example', 1, 0);
    expect(b.allowed).toBe(true);
    expect(b.state).toEqual({ 'a.example': { tokens: 0, last: 0 }, 'b.example': { tokens: 49, last: 0 } });
    // Pure: the map it was given is unchanged.
    expect(Object.keys(map)).toEqual(['a.example']);
  });

  it('treats `__proto__` and `constructor` as keys like any other', () => {
    let map: BucketMap = {};
    for (const key of ['__proto__', 'constructor', '__proto__']) {
      const result = keyedTake(map, SEED, key, 10, 0);
      expect(result.allowed).toBe(true);
      map = result.state;
    }
    expect(Object.hasOwn(map, '__proto__')).toBe(true);
    expect(Object.getOwnPropertyDescriptor(map, '__proto__')?.value).toEqual({ tokens: 30, last: 0 });
    expect(Object.getPrototypeOf(map)).toBe(Object.prototype);
    expect(JSON.parse(JSON.stringify(map))).toEqual(map);
    const evicted = evictIdle(map, SEED, 0, 0);
    expect(Object.hasOwn(evicted.state, '__proto__')).toBe(true);
    expect(Object.getOwnPropertyDescriptor(evicted.state, '__proto__')?.value).toEqual({
      tokens: 30,
      last: 0,
    });
  });

  it('evicts 10,000 idle keys and keeps the active ones', () => {
    const map: Record<string, BucketState> = {};
    // Idle: a burst at 0, full again by 500 ms, untouched since.
    for (let i = 0; i < 10_000; i++) map[`idle-${i}`] = { tokens: 0, last: 0 };
    for (let i = 0; i < 5; i++) map[`active-${i}`] = { tokens: 50, last: 59_000 };
    const result = evictIdle(map, SEED, 60_000, 60_000);
    expect(result.evicted).toBe(10_000);
    expect(Object.keys(result.state).sort()).toEqual([
      'active-0',
      'active-1',
      'active-2',
      'active-3',
      'active-4',
    ]);
    expect(evictIdle(map, SEED, 59_999, 60_000).evicted).toBe(0);
  });

  it('keeps a bucket untouched for idleMs that is not yet full: it still remembers a debt', () => {
    const slow = normalizeBucket({ capacity: 50, refillPerSecond: 0.5 });
    const indebted: BucketState = { tokens: 0, last: 0 };
    expect(isIdle(indebted, slow, 60_000, 60_000)).toBe(false);
    expect(evictIdle({ k: indebted }, slow, 60_000, 60_000)).toEqual({ evicted: 0, state: { k: indebted } });
    // Full at 100 s: dropping it then loses nothing.
    expect(isIdle(indebted, slow, 100_000, 60_000)).toBe(true);
    expect(isIdle(indebted, slow, 99_999, 60_000)).toBe(false);
  });

  it('evicting changes no later decision (a full bucket carries no information)', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.tuple(
            fc.constantFrom('a', 'b', 'c'),
            fc.integer({ min: 0, max: 5 }),
            fc.integer({ min: 0, max: 800 }),
          ),
          {
            maxLength: 200,
          },
        ),
        fc.integer({ min: 0, max: 1000 }),
        (calls, idleMs) => {
          let kept: BucketMap = {};
          let swept: BucketMap = {};
          let now = 0;
          for (const [key, n, ms] of calls) {
            now += ms;
            swept = evictIdle(swept, SEED, now, idleMs).state;
            const a = keyedTake(kept, SEED, key, n, now);
            const b = keyedTake(swept, SEED, key, n, now);
            expect(b.allowed).toBe(a.allowed);
            kept = a.state;
            swept = b.state;
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});
