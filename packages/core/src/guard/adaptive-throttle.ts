/**
 * Adaptive client-side throttling, as described in Google's *Site Reliability Engineering*,
 * chapter 21 "Handling Overload" (https://sre.google/sre-book/handling-overload/): each client
 * counts, per key over a sliding window, the attempts it was asked to make (`requests`) and those
 * the server accepted (`accepts`), and refuses a new attempt locally, before anything is sent,
 * with probability
 *
 *     max(0, (requests − k × accepts) / (requests + 1))
 *
 * While the server accepts what it is sent, nothing is refused. Once it starts rejecting (429, 5xx,
 * timeouts, refused connections), the client sheds the part of its load the server would reject
 * anyway, at no cost to the server; the attempts it refuses locally still count as requests, so the
 * refusal rate rises with the rejection rate and falls as accepts come back. `k` = 2 lets a client
 * send about twice what the server accepts: slow to react, but little waste of capacity when it
 * recovers.
 *
 * The counts are this process's own (the rule is each client's view of what the server accepts
 * from it): a throttle keeps its history in memory even for a client whose store is shared.
 */

import { ThrottledError } from '../errors';
import { finiteNumber, own } from '../policy/normalize';
import { systemClock } from '../time/clock';
import {
  type BoundGuard,
  checkObject,
  type GuardSession,
  type GuardValue,
  type GuardValueOptions,
  guardHome,
  guardValue,
  unsent,
} from './guard';
import { type GuardStore, IDLE_MS, type Memory, memoryOf, memoryStore, type Slot } from './store';

/** `adaptiveThrottle()`'s options: the rule's two numbers, and where the state lives. */
export interface AdaptiveThrottleOptions extends GuardValueOptions {
  /**
   * How many attempts per accepted one a client may send before it starts refusing some locally.
   * Lower sheds sooner (and wastes more capacity when the server recovers); at least 1.
   * @default 2
   */
  readonly k?: number;
  /**
   * Milliseconds of history the counts are kept over.
   * @default 120_000 (two minutes)
   */
  readonly windowMs?: number;
}

/** The throttle's rules, defaults filled in. */
export interface AdaptiveThrottleConfig {
  readonly k: number;
  readonly windowMs: number;
}

/** What a throttle has counted for a key over its window, and its refusal probability now. */
export interface ThrottleSnapshot {
  /** Attempts whose outcome is known (those refused locally included); attempts in flight are not counted yet. */
  readonly requests: number;
  readonly accepts: number;
  /** The probability that the next attempt is refused locally, 0 to 1. */
  readonly rejection: number;
}

/** An adaptive throttle: give it to one client or several; they share its counts. */
export interface AdaptiveThrottle extends GuardValue<'throttle'> {
  readonly config: AdaptiveThrottleConfig;
  /** The counts for `key` (by default an origin) over the window at `now`. */
  state(key: string, now?: number): ThrottleSnapshot;
}

/** The throttle's defaults, as in the SRE book: k = 2 over two minutes. */
export const THROTTLE_DEFAULTS = /* @__PURE__ */ Object.freeze({ k: 2, windowMs: 120_000 } as const);

/** How many buckets the window is cut into (as the retry budget's). */
const BUCKETS = 10;

/** One bucket of `windowMs / BUCKETS` ms; `slot` is `floor(now × BUCKETS / windowMs)`. */
interface Bucket {
  slot: number;
  requests: number;
  accepts: number;
}

/**
 * A key's counts: at most {@link BUCKETS} buckets, oldest first. An attempt that is sent is counted
 * once its outcome is known; a refused one at once. Kept in memory only, so mutable.
 */
interface ThrottleState {
  buckets: Bucket[];
}

type ThrottleSlot = Slot<ThrottleState, AdaptiveThrottleConfig>;

const idle = (slot: ThrottleSlot, now: number) => now - slot.last >= Math.max(IDLE_MS, slot.config.windowMs);

const slotOf = (config: AdaptiveThrottleConfig, now: number) => Math.floor((now * BUCKETS) / config.windowMs);

/**
 * The bucket `now` counts in, made if needed; buckets that left the window are dropped. A `now` a
 * little behind the newest bucket (a clock nudged back) counts in it; one a whole window behind (the
 * wall clock stepped back) starts the counts afresh, or the future buckets would stay in the window
 * until the clock caught up with them.
 */
function bucketAt(state: ThrottleState, config: AdaptiveThrottleConfig, now: number): Bucket {
  let newest = state.buckets.at(-1);
  if (newest && newest.slot - slotOf(config, now) >= BUCKETS) {
    state.buckets = [];
    newest = undefined;
  }
  const slot = Math.max(slotOf(config, now), newest?.slot ?? 0);
  if (newest?.slot === slot) return newest;
  const oldest = slot - BUCKETS + 1;
  if (state.buckets.length > 0 && (state.buckets[0] as Bucket).slot < oldest) {
    state.buckets = state.buckets.filter((bucket) => bucket.slot >= oldest);
  }
  const bucket = { slot, requests: 0, accepts: 0 };
  state.buckets.push(bucket);
  return bucket;
}

/**
 * The counts over the window at `now`, and the refusal probability they give. Attempts still in
 * flight are not in them: they are neither accepted nor rejected yet, and counting them as requests
 * would have a client that sends many at once (a cold start, a burst) refuse its own next attempts
 * against a healthy server.
 */
function snapshot(state: ThrottleState, config: AdaptiveThrottleConfig, now: number): ThrottleSnapshot {
  const current = slotOf(config, now);
  const oldest = current - BUCKETS + 1;
  let requests = 0;
  let accepts = 0;
  for (const bucket of state.buckets) {
    // Buckets a whole window ahead of `now` are from before the clock stepped back: not counted.
    if (bucket.slot < oldest || bucket.slot - current >= BUCKETS) continue;
    requests += bucket.requests;
    accepts += bucket.accepts;
  }
  return { requests, accepts, rejection: Math.max(0, (requests - config.k * accepts) / (requests + 1)) };
}

/** Validates options once, at the boundary. */
function normalizeThrottle(input: AdaptiveThrottleOptions): AdaptiveThrottleConfig {
  checkObject('throttle', input, 'an object of adaptive throttle options');
  return {
    k: finiteNumber('throttle.k', own(input, 'k'), THROTTLE_DEFAULTS.k, 1),
    windowMs: finiteNumber('throttle.windowMs', own(input, 'windowMs'), THROTTLE_DEFAULTS.windowMs, 1),
  };
}

/** The memory the throttle counts in: its store's, or (for a shared store) a memory of its own. */
function memoryFor(store: GuardStore): Memory {
  return memoryOf(store) ?? (memoryOf(memoryStore()) as Memory);
}

/**
 * Adaptive client-side throttling per key (by default per origin): once the server rejects more
 * than it accepts, the client refuses part of its attempts itself, with probability
 * `max(0, (requests − k × accepts) / (requests + 1))` over the last `windowMs`, so an overloaded
 * server spends less of its capacity turning requests away. A refused first attempt rejects with
 * `ThrottledError` (nothing sent); a refused retry hands back the last response, its retry info
 * saying `stoppedBy: 'throttle'`. An accept is any response that is not a retryable failure (a 4xx
 * counts: the server did the work); 429s, 5xx, timeouts and transport failures are rejections.
 * Opt-in: no client throttles unless given one.
 *
 * @example
 * ```ts
 * const throttle = adaptiveThrottle({ k: 2 });
 * const api = retryFetch(fetch, { throttle });
 * throttle.state('https://api.example').rejection; // 0 while the server accepts what it is sent
 * ```
 */
export function adaptiveThrottle(options: AdaptiveThrottleOptions = {}): AdaptiveThrottle {
  const config = Object.freeze(normalizeThrottle(options));
  const home = guardHome('throttle', options);
  let memory: Memory | undefined;
  const table = (now?: number) => {
    memory ??= memoryFor(home.settled() as GuardStore);
    // Counts one operation, so idle keys are swept (every key is an origin a caller chose).
    if (now !== undefined) memory.tick(now);
    return memory.table<ThrottleState, AdaptiveThrottleConfig>('throttles', idle);
  };
  return guardValue<'throttle', AdaptiveThrottle>(
    {
      kind: 'throttle',
      config,
      state(key, now = systemClock.now()) {
        const slot = home.settled() === undefined ? undefined : table().get(key);
        return snapshot(slot ? slot.state : { buckets: [] }, config, now);
      },
    },
    (binding) => {
      home.forClient(binding);
      return { kind: 'throttle', keyOf: home.keyFor(binding), session: throttleSession(config, table) };
    },
  );
}

/** One request's throttle hooks: refuse some attempts, count each one once its outcome is known. */
function throttleSession(
  config: AdaptiveThrottleConfig,
  table: (now?: number) => Map<string, ThrottleSlot>,
): BoundGuard['session'] {
  return ({ key, policy, label }) => {
    /** Whether the attempt the throttle let through waits for its outcome to be counted. */
    let admitted = false;
    const stateOf = (now: number): ThrottleState => {
      const map = table(now);
      const slot = map.get(key);
      if (slot) {
        slot.last = now;
        return slot.state;
      }
      const state: ThrottleState = { buckets: [] };
      map.set(key, { state, config, last: now, handedOut: false });
      return state;
    };
    /** The attempt is not judged (aborted, or not sent after all): it counts for nothing. */
    const forget = () => {
      admitted = false;
      return undefined;
    };
    const session: GuardSession = {
      admit(attempt) {
        const now = policy.clock.now();
        const state = stateOf(now);
        const { rejection, requests, accepts } = snapshot(state, config, now);
        admitted = !(rejection > 0 && policy.random() < rejection);
        if (admitted) return undefined;
        // A refused attempt counts as a request at once: that is what makes the refusals adapt.
        bucketAt(state, config, now).requests += 1;
        return {
          outcome: 'throttled',
          error: new ThrottledError(
            `${label} was not sent: ${key} accepted ${accepts} of the last ${requests} attempts, so the client refuses ${Math.round(rejection * 100)}% of its attempts itself`,
            { rejection, ...unsent(attempt) },
          ),
        };
      },
      record(health) {
        if (admitted) {
          const now = policy.clock.now();
          const bucket = bucketAt(stateOf(now), config, now);
          bucket.requests += 1;
          if (health !== 'failure') bucket.accepts += 1;
        }
        return forget();
      },
      abandon: forget,
      unsent: forget,
    };
    return session;
  };
}
