import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidOptionsError } from '../errors';
import {
  type BreakerConfig,
  type BreakerOptions,
  type BreakerOutcome,
  type BreakerState,
  breakerAdmit,
  breakerRecord,
  breakerSnapshot,
  initialBreakerState,
  normalizeBreaker,
} from './breaker';

/** Records outcomes in order at time `now`, returning the final state and every transition seen. */
function feed(
  config: BreakerConfig,
  outcomes: readonly BreakerOutcome[],
  now = 0,
  from = initialBreakerState(),
) {
  let state = from;
  const transitions: string[] = [];
  for (const outcome of outcomes) {
    const result = breakerRecord(state, config, outcome, now);
    state = result.state;
    if (result.transition) transitions.push(`${result.transition.from}->${result.transition.to}`);
  }
  return { state, transitions };
}

const F = 'failure' as const;
const S = 'success' as const;
const I = 'ignored' as const;

/** A breaker opened at t = 1000 by four failures (window 4, min 4, openMs 5000). */
function openAt1000(options: BreakerOptions = {}) {
  const config = normalizeBreaker({ windowSize: 4, minCalls: 4, openMs: 5000, ...options });
  const { state } = feed(config, [F, F, F, F], 1000);
  expect(state).toMatchObject({ state: 'open', openedAt: 1000 });
  return { config, state };
}

describe('normalizeBreaker', () => {
  it('takes the documented defaults for no options, with consecutiveFailures off', () => {
    const config = normalizeBreaker();
    expect(config).toEqual({
      failureRate: 0.5,
      windowSize: 20,
      minCalls: 20,
      openMs: 30_000,
      halfOpenCalls: 1,
    });
    expect('consecutiveFailures' in config).toBe(false);
    expect(normalizeBreaker({})).toEqual(config);
  });

  it('keeps what is given and caps the default minCalls at a smaller windowSize', () => {
    expect(
      normalizeBreaker({
        failureRate: 0.25,
        windowSize: 50,
        minCalls: 10,
        consecutiveFailures: 3,
        openMs: 1,
        halfOpenCalls: 2,
      }),
    ).toEqual({
      failureRate: 0.25,
      windowSize: 50,
      minCalls: 10,
      consecutiveFailures: 3,
      openMs: 1,
      halfOpenCalls: 2,
    });
    expect(normalizeBreaker({ windowSize: 5 }).minCalls).toBe(5);
  });

  it.each<[unknown, string]>([
    [false, 'Expected breaker to be an object of breaker options, got false'],
    [null, 'Expected breaker to be an object of breaker options, got null'],
    [[], 'Expected breaker to be an object of breaker options, got an array'],
    [5, 'Expected breaker to be an object of breaker options, got 5'],
    [{ failureRate: 1.5 }, 'Expected breaker.failureRate to be a finite number between 0 and 1, got 1.5'],
    [{ failureRate: -0.1 }, 'Expected breaker.failureRate to be a finite number between 0 and 1, got -0.1'],
    [
      { failureRate: Number.NaN },
      'Expected breaker.failureRate to be a finite number between 0 and 1, got NaN',
    ],
    [{ failureRate: '0.5' }, "Expected breaker.failureRate to be a finite number between 0 and 1, got '0.5'"],
    [{ windowSize: 0 }, 'Expected breaker.windowSize to be an integer ≥ 1, got 0'],
    [{ windowSize: 2.5 }, 'Expected breaker.windowSize to be an integer ≥ 1, got 2.5'],
    [{ minCalls: 0 }, 'Expected breaker.minCalls to be an integer between 1 and 20, got 0'],
    [{ windowSize: 10, minCalls: 11 }, 'Expected breaker.minCalls to be an integer between 1 and 10, got 11'],
    [{ consecutiveFailures: 0 }, 'Expected breaker.consecutiveFailures to be an integer ≥ 1, got 0'],
    [{ consecutiveFailures: true }, 'Expected breaker.consecutiveFailures to be an integer ≥ 1, got true'],
    [{ openMs: 0 }, 'Expected breaker.openMs to be a finite number between 1 and 2147483647, got 0'],
    [
      { openMs: Number.POSITIVE_INFINITY },
      'Expected breaker.openMs to be a finite number between 1 and 2147483647, got Infinity',
    ],
    [{ halfOpenCalls: 0 }, 'Expected breaker.halfOpenCalls to be an integer ≥ 1, got 0'],
    [{ halfOpenCalls: 1.5 }, 'Expected breaker.halfOpenCalls to be an integer ≥ 1, got 1.5'],
  ])('rejects %o: %s', (options, message) => {
    const call = () => normalizeBreaker(options as BreakerOptions);
    expect(call).toThrow(InvalidOptionsError);
    expect(call).toThrow(message);
  });

  it('names the offending option on the error', () => {
    try {
      normalizeBreaker({ windowSize: 10, minCalls: 11 });
      expect.unreachable();
    } catch (error) {
      expect((error as InvalidOptionsError).option).toBe('breaker.minCalls');
    }
  });

  it('ignores inherited options (prototype pollution)', () => {
    const options = Object.create({ failureRate: 5, openMs: -1 }) as BreakerOptions;
    expect(normalizeBreaker(options)).toEqual(normalizeBreaker());
  });
});

describe('closed', () => {
  const config = normalizeBreaker({ windowSize: 4, minCalls: 4 });

  it('admits every call without changing state', () => {
    const state = initialBreakerState();
    expect(breakerAdmit(state, config, 123)).toEqual({ allowed: true, state });
  });

  it('does not open when the failure rate equals failureRate, and opens when one more failure exceeds it', () => {
    const atThreshold = feed(config, [S, F, S, F], 10);
    expect(atThreshold.state.state).toBe('closed');
    expect(breakerSnapshot(atThreshold.state, config, 10)).toEqual({
      state: 'closed',
      failureRate: 0.5,
      calls: 4,
    });
    // The oldest success slides out: 3 failures of 4.
    const next = breakerRecord(atThreshold.state, config, F, 20);
    expect(next.transition).toEqual({ from: 'closed', to: 'open' });
    expect(next.state).toMatchObject({
      state: 'open',
      openedAt: 20,
      window: [F, S, F, F].map((o) => o === F),
    });
  });

  it('never opens on rate below minCalls, even at a 100% failure rate', () => {
    const below = normalizeBreaker({ windowSize: 10, minCalls: 5 });
    const { state, transitions } = feed(below, [F, F, F, F]);
    expect(state.state).toBe('closed');
    expect(transitions).toEqual([]);
    expect(breakerRecord(state, below, F, 0).state.state).toBe('open');
  });

  it('opens after consecutiveFailures in a row, below minCalls and below the rate', () => {
    const streak = normalizeBreaker({ windowSize: 20, minCalls: 20, consecutiveFailures: 3 });
    const broken = feed(streak, [F, F, S, F, F]);
    expect(broken.state).toMatchObject({ state: 'closed', consecutive: 2 });
    const { state, transitions } = feed(streak, [S, S, S, S, F, F, F], 7);
    expect(transitions).toEqual(['closed->open']);
    expect(state).toMatchObject({ state: 'open', openedAt: 7 });
  });

  it('never counts ignored outcomes: not in the window, and they do not break a streak', () => {
    const streak = normalizeBreaker({ windowSize: 4, minCalls: 4, consecutiveFailures: 3 });
    const { state } = feed(streak, [F, I, F, I, I, I, I, I]);
    expect(state).toEqual({ ...initialBreakerState(), window: [true, true], consecutive: 2 });
    expect(breakerRecord(state, streak, F, 0).state.state).toBe('open');
  });

  it('slides the window: old failures age out', () => {
    const { state } = feed(config, [F, F, S, S, S, S]);
    expect(state.window).toEqual([false, false, false, false]);
    const after = feed(config, [F, S], 0, state).state;
    expect(after).toMatchObject({ state: 'closed', window: [false, false, true, false] });
    expect(breakerSnapshot(after, config, 0)).toEqual({ state: 'closed', failureRate: 0.25, calls: 4 });
    // Only the last four calls count: [S, F, S, F] is at the threshold, [F, S, F, F] is over it.
    expect(feed(config, [F], 0, after).state.state).toBe('closed');
    expect(feed(config, [F, F], 0, after).state.state).toBe('open');
  });

  it('can open on a success that brings the window up to minCalls', () => {
    const { state, transitions } = feed(config, [F, F, F, S]);
    expect(transitions).toEqual(['closed->open']);
    expect(state.state).toBe('open');
  });
});

describe('open', () => {
  it('refuses calls with retryAt = openedAt + openMs until openMs has passed', () => {
    const { config, state } = openAt1000();
    for (const now of [1000, 3000, 5999]) {
      expect(breakerAdmit(state, config, now)).toEqual({ allowed: false, state, retryAt: 6000 });
    }
    expect(breakerSnapshot(state, config, 5999)).toEqual({
      state: 'open',
      failureRate: 1,
      calls: 4,
      retryAt: 6000,
    });
  });

  it('ignores outcomes of calls sent before it opened', () => {
    const { config, state } = openAt1000();
    for (const outcome of [S, F, I]) expect(breakerRecord(state, config, outcome, 2000)).toEqual({ state });
  });

  it('turns half-open after openMs, admits one trial and refuses a concurrent second', () => {
    const { config, state } = openAt1000();
    const first = breakerAdmit(state, config, 6000);
    expect(first).toMatchObject({ allowed: true, transition: { from: 'open', to: 'half-open' } });
    expect(first.state).toMatchObject({ state: 'half-open', trialAt: 6000, trials: 1, trialSuccesses: 0 });
    const second = breakerAdmit(first.state, config, 6100);
    // A trial is presumed lost after openMs without an outcome: that is when another call may go.
    expect(second).toEqual({ allowed: false, state: first.state, retryAt: 11_000 });
    expect(breakerSnapshot(first.state, config, 6100)).toMatchObject({ state: 'half-open', retryAt: 11_000 });
  });
});

describe('half-open', () => {
  function halfOpened(options: BreakerOptions = {}) {
    const { config, state } = openAt1000(options);
    const admission = breakerAdmit(state, config, 6000);
    if (!admission.allowed) throw new Error('expected a trial');
    return { config, state: admission.state };
  }

  it('closes on the trial success, with a fresh window', () => {
    const { config, state } = halfOpened();
    const result = breakerRecord(state, config, S, 6500);
    expect(result).toEqual({ state: initialBreakerState(), transition: { from: 'half-open', to: 'closed' } });
    expect(breakerAdmit(result.state, config, 6500).allowed).toBe(true);
  });

  it('re-opens on the trial failure, with a new openedAt', () => {
    const { config, state } = halfOpened();
    const result = breakerRecord(state, config, F, 6500);
    expect(result.transition).toEqual({ from: 'half-open', to: 'open' });
    expect(result.state).toMatchObject({ state: 'open', openedAt: 6500, trials: 0 });
    expect(breakerAdmit(result.state, config, 11_499)).toMatchObject({ allowed: false, retryAt: 11_500 });
    expect(breakerAdmit(result.state, config, 11_500).allowed).toBe(true);
  });

  it('needs every one of halfOpenCalls trials to succeed before closing', () => {
    const { config, state } = halfOpened({ halfOpenCalls: 3 });
    let current = state;
    for (const now of [6001, 6002]) {
      const admission = breakerAdmit(current, config, now);
      expect(admission.allowed).toBe(true);
      current = admission.state;
    }
    expect(breakerAdmit(current, config, 6003)).toMatchObject({ allowed: false, retryAt: 11_002 });
    const two = feed(config, [S, S], 6100, current);
    expect(two.state).toMatchObject({ state: 'half-open', trials: 3, trialSuccesses: 2 });
    expect(two.transitions).toEqual([]);
    expect(feed(config, [S], 6200, two.state).transitions).toEqual(['half-open->closed']);
    expect(feed(config, [F], 6200, two.state).transitions).toEqual(['half-open->open']);
  });

  it('lets an ignored trial outcome free its slot, and counts no success without a trial awaiting one', () => {
    const { config, state } = halfOpened();
    const released = breakerRecord(state, config, I, 6100).state;
    expect(released).toMatchObject({ state: 'half-open', trials: 0 });
    // A late success from before the breaker opened does not close it: no trial is outstanding.
    expect(breakerRecord(released, config, S, 6100)).toEqual({ state: released });
    expect(breakerAdmit(released, config, 6200)).toMatchObject({ allowed: true, state: { trials: 1 } });
  });

  it('presumes a trial lost after openMs and admits a replacement', () => {
    const { config, state } = halfOpened();
    expect(breakerAdmit(state, config, 10_999).allowed).toBe(false);
    const replacement = breakerAdmit(state, config, 11_000);
    expect(replacement).toMatchObject({
      allowed: true,
      state: { state: 'half-open', trialAt: 11_000, trials: 1 },
    });
  });

  it('re-opens on any failure while half-open, even one no trial is awaiting', () => {
    const { config, state } = halfOpened();
    const released = breakerRecord(state, config, I, 6100).state;
    expect(breakerRecord(released, config, F, 6150)).toMatchObject({
      state: { state: 'open', openedAt: 6150 },
      transition: { from: 'half-open', to: 'open' },
    });
  });

  it('keeps the successes already seen when it replaces a lost trial', () => {
    const { config, state } = halfOpened({ halfOpenCalls: 2 });
    const both = breakerAdmit(state, config, 6001).state;
    const oneGood = breakerRecord(both, config, S, 6002).state;
    expect(breakerAdmit(oneGood, config, 11_000)).toMatchObject({ allowed: false, retryAt: 11_001 });
    const replaced = breakerAdmit(oneGood, config, 11_001);
    expect(replaced).toMatchObject({
      allowed: true,
      state: { trials: 2, trialSuccesses: 1, trialAt: 11_001 },
    });
    expect(breakerRecord(replaced.state, config, S, 11_500).transition).toEqual({
      from: 'half-open',
      to: 'closed',
    });
  });
});

describe('state as a value', () => {
  it('round-trips through JSON in every state', () => {
    const { config, state: open } = openAt1000();
    const half = breakerAdmit(open, config, 6000).state;
    for (const state of [initialBreakerState(), feed(config, [F, S]).state, open, half]) {
      expect(JSON.parse(JSON.stringify(state))).toEqual(state);
      expect(Object.values(state)).not.toContain(undefined);
    }
  });

  it('never mutates the state it is given', () => {
    const { config, state } = openAt1000();
    const frozen = structuredClone(state);
    breakerAdmit(state, config, 9000);
    breakerRecord(breakerAdmit(state, config, 9000).state, config, F, 9000);
    expect(state).toEqual(frozen);
  });
});

// ---------------------------------------------------------------------------------------------
// Model-based test: the same rules written as plainly as possible, in a different representation,
// compared with the pure functions after every step of random runs.

type Mode = 'closed' | 'open' | 'half-open';

class ReferenceBreaker {
  mode: Mode = 'closed';
  outcomes: Array<'F' | 'S'> = [];
  streak = 0;
  openedAt = 0;
  lastTrialAt = 0;
  trialsInFlight = 0;
  trialsPassed = 0;

  constructor(private readonly config: BreakerConfig) {}

  admit(now: number): { allowed: boolean; retryAt?: number } {
    const { openMs, halfOpenCalls } = this.config;
    if (this.mode === 'closed') return { allowed: true };
    if (this.mode === 'open') {
      if (now < this.openedAt + openMs) return { allowed: false, retryAt: this.openedAt + openMs };
      this.mode = 'half-open';
      this.trialsInFlight = 0;
      this.trialsPassed = 0;
      this.lastTrialAt = now;
    }
    if (now >= this.lastTrialAt + openMs) this.trialsInFlight = 0; // the trials in flight are lost
    if (this.trialsInFlight + this.trialsPassed < halfOpenCalls) {
      this.trialsInFlight += 1;
      this.lastTrialAt = now;
      return { allowed: true };
    }
    return { allowed: false, retryAt: this.lastTrialAt + openMs };
  }

  record(outcome: BreakerOutcome, now: number): void {
    if (this.mode === 'open') return;
    if (this.mode === 'half-open') {
      if (outcome === 'failure') {
        this.open(now);
      } else if (this.trialsInFlight > 0) {
        this.trialsInFlight -= 1;
        if (outcome === 'success') this.trialsPassed += 1;
        if (this.trialsPassed === this.config.halfOpenCalls) {
          this.mode = 'closed';
          this.outcomes = [];
          this.streak = 0;
        }
      }
      return;
    }
    if (outcome === 'ignored') return;
    this.outcomes.push(outcome === 'failure' ? 'F' : 'S');
    while (this.outcomes.length > this.config.windowSize) this.outcomes.shift();
    this.streak = outcome === 'failure' ? this.streak + 1 : 0;
    let failures = 0;
    for (const o of this.outcomes) if (o === 'F') failures += 1;
    const calls = this.outcomes.length;
    if (calls >= this.config.minCalls && failures / calls > this.config.failureRate) this.open(now);
    else if (this.config.consecutiveFailures !== undefined && this.streak >= this.config.consecutiveFailures)
      this.open(now);
  }

  /** retryAt as a refused admit now would report it, without admitting anything. */
  retryAt(now: number): number | undefined {
    const { openMs, halfOpenCalls } = this.config;
    if (this.mode === 'open') return now < this.openedAt + openMs ? this.openedAt + openMs : undefined;
    if (this.mode === 'half-open' && now < this.lastTrialAt + openMs) {
      return this.trialsInFlight + this.trialsPassed >= halfOpenCalls ? this.lastTrialAt + openMs : undefined;
    }
    return undefined;
  }

  private open(now: number): void {
    this.mode = 'open';
    this.openedAt = now;
  }
}

type Op =
  | { readonly kind: 'admit' }
  | { readonly kind: 'record'; readonly pick: number; readonly outcome: BreakerOutcome }
  | { readonly kind: 'advance'; readonly ms: number }
  | { readonly kind: 'to-retry-at'; readonly offset: -1 | 0 };

const configArb: fc.Arbitrary<BreakerOptions> = fc
  .record({
    windowSize: fc.integer({ min: 1, max: 8 }),
    minFraction: fc.double({ min: 0, max: 1, noNaN: true }),
    failureRate: fc.oneof(fc.constantFrom(0, 0.25, 0.5, 0.75, 1), fc.double({ min: 0, max: 1, noNaN: true })),
    consecutiveFailures: fc.option(fc.integer({ min: 1, max: 5 }), { nil: undefined }),
    openMs: fc.integer({ min: 1, max: 5000 }),
    halfOpenCalls: fc.integer({ min: 1, max: 3 }),
  })
  .map(({ minFraction, consecutiveFailures, ...rest }) => ({
    ...rest,
    minCalls: Math.max(1, Math.ceil(minFraction * rest.windowSize)),
    ...(consecutiveFailures === undefined ? {} : { consecutiveFailures }),
  }));

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.constant({ kind: 'admit' as const }) },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('record' as const),
      pick: fc.nat(),
      outcome: fc.constantFrom<BreakerOutcome>('success', 'failure', 'ignored'),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('advance' as const),
      ms: fc.oneof(fc.integer({ min: 0, max: 3 }), fc.integer({ min: 0, max: 6000 })),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('to-retry-at' as const),
      offset: fc.constantFrom<-1 | 0>(-1, 0),
    }),
  },
);

describe('breaker against a reference model', () => {
  it('agrees on state, admission and retryAt after every step, and its state round-trips through JSON', () => {
    const transitionsSeen = new Map<string, number>();
    const saw = (t: { from: string; to: string }) =>
      transitionsSeen.set(`${t.from}->${t.to}`, (transitionsSeen.get(`${t.from}->${t.to}`) ?? 0) + 1);
    fc.assert(
      fc.property(configArb, fc.array(opArb, { maxLength: 60, size: 'max' }), (options, ops) => {
        const config = normalizeBreaker(options);
        const model = new ReferenceBreaker(config);
        let state: BreakerState = initialBreakerState();
        let now = 1_000_000;
        // Calls admitted and not yet reported: an outcome is only ever recorded for one of them.
        let inFlight = 0;

        for (const op of ops) {
          if (op.kind === 'advance') now += op.ms;
          else if (op.kind === 'to-retry-at') {
            const at = model.retryAt(now);
            if (at !== undefined && at + op.offset >= now) now = at + op.offset;
          } else if (op.kind === 'admit') {
            const expected = model.admit(now);
            const actual = breakerAdmit(state, config, now);
            expect(actual.allowed).toBe(expected.allowed);
            expect(actual.allowed ? undefined : actual.retryAt).toBe(expected.retryAt);
            if (!actual.allowed) expect(actual.state).toBe(state);
            if (actual.allowed) inFlight += 1;
            if (actual.allowed && actual.transition) saw(actual.transition);
            state = actual.state;
          } else if (inFlight > 0) {
            const before = state.state;
            model.record(op.outcome, now);
            const result = breakerRecord(state, config, op.outcome, now);
            inFlight -= 1;
            expect(result.transition === undefined).toBe(result.state.state === before);
            if (result.transition) {
              saw(result.transition);
              expect(result.transition).toEqual({ from: before, to: result.state.state });
            }
            state = result.state;
          }

          expect(state.state).toBe(model.mode);
          expect(state.window).toEqual(model.outcomes.map((o) => o === 'F'));
          expect(state.consecutive).toBe(model.streak);
          const snapshot = breakerSnapshot(state, config, now);
          const failures = model.outcomes.filter((o) => o === 'F').length;
          const retryAt = model.retryAt(now);
          expect(snapshot).toEqual({
            state: model.mode,
            calls: model.outcomes.length,
            failureRate: model.outcomes.length === 0 ? 0 : failures / model.outcomes.length,
            ...(retryAt === undefined ? {} : { retryAt }),
          });
          expect(JSON.parse(JSON.stringify(state))).toEqual(state);
        }
      }),
      { numRuns: 600 },
    );
    // The runs must actually move the breaker around, or the agreement above says little.
    for (const kind of ['closed->open', 'open->half-open', 'half-open->closed', 'half-open->open']) {
      expect(transitionsSeen.get(kind), kind).toBeGreaterThan(25);
    }
    expect([...transitionsSeen.keys()]).toHaveLength(4);
  });
});
