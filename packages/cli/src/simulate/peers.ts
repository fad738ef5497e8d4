/**
 * The peers' retry defaults as storm policies, so a storm can compare immediate retries, axios-retry's
 * defaults, ky's defaults, Retryline's defaults, Retryline with breaker and Retryline with adaptive
 * throttle; and, for the closed-loop storm (`closed-storm.ts`), no retries at all, axios-retry with
 * `retryDelay: exponentialDelay`, and p-retry's defaults as well.
 *
 * No peer can run its real code in virtual time: ky waits between retries with its own
 * `delay()` (`ky/distribution/utils/delay.js`, a bare `setTimeout`; no option replaces it) and times
 * attempts out with another bare `setTimeout` (`utils/timeout.js`); axios-retry waits with
 * `setTimeout` (`axios-retry/dist/esm/index.js`, `handleRetry`) and measures the time left with
 * `Date.now()`; p-retry waits with `setTimeout` (`p-retry/index.js` lines 108–131, `delayForRetry`)
 * and measures `maxRetryTime` with `performance.now()` (lines 104–106). So each is modelled as a
 * plain loop on the simulation's clock, with the numbers and rules taken from the installed sources
 * (ky 1.14.3, axios-retry 4.5.0 with axios 1.21.1, p-retry 9.0.0), cited where they are used. The
 * scenario's per-attempt timeout stands in for each library's timeout (ky: 10 s per attempt by
 * default; axios: none by default; p-retry has none of its own: the caller's fetch is given one).
 *
 * What matters in the storm: **neither ky nor axios-retry retries a timeout by default**, whatever
 * the delay. ky's `retryOnTimeout` is `false`; axios reports a timeout as `ECONNABORTED`, which
 * axios-retry's default condition excludes (so `exponentialDelay` changes nothing there). The storm's
 * server only ever times out (it answers `503` only with a `queueLimit`), so there both peers send
 * each request once. **p-retry retries any error but a non-network `TypeError`**, a timeout
 * included, up to 10 times, 1 s, 2 s, 4 s … apart, without jitter.
 */

import { adaptiveThrottle, circuitBreaker, type Random } from '@retryline/core';
import { defaultGuardsPolicy, immediateRetryPolicy, type StormPolicy } from './storm';

/** What a peer's timeout rejects with (ky: `TimeoutError`; axios: `AxiosError` code `ECONNABORTED`). */
class PeerTimeout extends Error {
  constructor(
    override readonly name: string,
    message: string,
  ) {
    super(message);
  }
}

/** A peer's final non-2xx answer, thrown as the peer throws it (ky `HTTPError`, axios `AxiosError`). */
class PeerHttpError extends Error {
  constructor(
    override readonly name: string,
    readonly response: Response,
  ) {
    super(`Request failed with status code ${response.status}`);
  }
}

// The reason an attempt's timer is cancelled with (see storm.ts).
const SETTLED = Symbol('settled');

/**
 * One attempt with a timeout on the simulation's clock: resolves with the server's response, or
 * rejects with `timeoutError()` once `timeoutMs` has passed (aborting the fetch, as both peers do).
 */
async function attemptWithTimeout(
  fetchImpl: typeof fetch,
  clock: { sleep(ms: number, signal?: AbortSignal): Promise<void> },
  url: string,
  init: RequestInit,
  timeoutMs: number,
  timeoutError: () => Error,
): Promise<Response> {
  const attempt = new AbortController();
  const timer = new AbortController();
  clock.sleep(timeoutMs, timer.signal).then(
    () => attempt.abort(timeoutError()),
    () => {},
  );
  try {
    return await fetchImpl(url, { ...init, signal: attempt.signal });
  } finally {
    timer.abort(SETTLED);
  }
}

/** The `Retry-After` header in milliseconds (seconds only: the simulated server sends no dates). */
function retryAfterMs(response: Response): number | undefined {
  const header = response.headers.get('retry-after');
  if (header === null) return undefined;
  const seconds = Number(header);
  return Number.isFinite(seconds) && seconds >= 0 ? seconds * 1_000 : undefined;
}

// ky 1.14.3, distribution/utils/normalize.js lines 3–16: the default retry options.
const KY_RETRY_LIMIT = 2; // `limit: 2`
const KY_RETRY_STATUS_CODES: readonly number[] = [408, 413, 429, 500, 502, 503, 504]; // `retryStatusCodes`
const KY_RETRY_AFTER_STATUS_CODES: readonly number[] = [413, 429, 503]; // `retryAfterStatusCodes`
/** `delay: attemptCount => 0.3 * (2 ** (attemptCount - 1)) * 1000`; `jitter: undefined`, `backoffLimit: Infinity`. */
const kyDelay = (retryCount: number) => 0.3 * 2 ** (retryCount - 1) * 1_000;

/**
 * ky's defaults (ky 1.14.3), as a loop on the simulation's clock. From `core/Ky.js`:
 *
 * - `#retry` (lines 306–347): an attempt that throws is retried after `#calculateRetryDelay`'s wait.
 * - `#calculateRetryDelay` (lines 229–288): `retryCount++`, give up past `limit` (2, so 3 attempts);
 *   GET is in `methods`; a `TimeoutError` is rethrown because `retryOnTimeout` is `false`
 *   (lines 257–260); an `HTTPError` (any non-2xx, `throwHttpErrors: true`) is retried only for
 *   `statusCodes`, after `Retry-After` for 413/429/503 when the response has one (`maxRetryAfter`
 *   Infinity), never for 413; anything else (a network error) is retried after `delay(retryCount)`:
 *   300 ms, then 600 ms, no jitter.
 * - `#fetch` (lines 349–376): `timeout()` covers each attempt on its own (10 s by default, line 153;
 *   here the scenario's `timeoutMs`).
 */
export const kyDefaultsPolicy: StormPolicy = {
  name: 'ky defaults',
  send: (fetchImpl, clock, { timeoutMs }) =>
    async function sendLikeKy(url, init) {
      for (let retryCount = 0; ; ) {
        let error: Error;
        let wait: number | undefined;
        try {
          const response = await attemptWithTimeout(
            fetchImpl,
            clock,
            url,
            init,
            timeoutMs,
            () => new PeerTimeout('TimeoutError', `Request timed out: GET ${url}`),
          );
          if (response.ok) return response;
          error = new PeerHttpError('HTTPError', response);
        } catch (thrown) {
          error = thrown instanceof Error ? thrown : new Error(String(thrown));
        }
        retryCount++;
        if (retryCount > KY_RETRY_LIMIT) throw error;
        if (error instanceof PeerTimeout) throw error; // retryOnTimeout: false
        if (error instanceof PeerHttpError) {
          const { status } = error.response;
          if (!KY_RETRY_STATUS_CODES.includes(status)) throw error;
          if (KY_RETRY_AFTER_STATUS_CODES.includes(status)) wait = retryAfterMs(error.response);
          if (wait === undefined && status === 413) throw error;
        }
        await clock.sleep(wait ?? kyDelay(retryCount));
      }
    },
};

// axios-retry 4.5.0, dist/esm/index.js lines 76–84: `DEFAULT_OPTIONS`.
const AXIOS_RETRIES = 3; // `retries: 3`
// Lines 18–19: GET is among `IDEMPOTENT_HTTP_METHODS`.

/**
 * axios-retry's retry delay: `retryDelay(retryCount, error)`, called with the retry's number
 * (1 for the first retry: `handleRetry` increments `retryCount` first, lines 127–129).
 */
type AxiosRetryDelay = (retryNumber: number, response: Response | undefined, random: Random) => number;

/**
 * `noDelay` (axios-retry 4.5.0, lines 56–58): 0 ms, or the response's `Retry-After`
 * (`retryAfter`, lines 43–55).
 */
const axiosNoDelay: AxiosRetryDelay = (_retryNumber, response) =>
  Math.max(0, (response && retryAfterMs(response)) ?? 0);

/**
 * `exponentialDelay` (axios-retry 4.5.0, lines 59–64) with its default `delayFactor = 100`:
 * `delay = max(2 ** retryNumber * 100, retryAfter(error))`, plus `delay * 0.2 * Math.random()`
 * (0–20 %, here from the run's seeded random). So 200–240 ms, 400–480 ms, 800–960 ms.
 */
const axiosExponentialDelay: AxiosRetryDelay = (retryNumber, response, random) => {
  const delay = Math.max(2 ** retryNumber * 100, (response && retryAfterMs(response)) ?? 0);
  return delay + delay * 0.2 * random();
};

/**
 * axios-retry (4.5.0 on axios 1.21.1) with its default options but `retryDelay`, as a loop on the
 * simulation's clock. From `axios-retry/dist/esm/index.js`:
 *
 * - `DEFAULT_OPTIONS` (lines 76–84): `retries: 3`, `retryCondition: isNetworkOrIdempotentRequestError`,
 *   `retryDelay: noDelay`, `shouldResetTimeout: false`.
 * - The condition (lines 3–41): `isNetworkError` (no response, an error code other than
 *   `ERR_CANCELED`/`ECONNABORTED`, allowed by is-retry-allowed) or `isIdempotentRequestError`
 *   (`code !== 'ECONNABORTED'` and no response, 429 or 5xx, on GET/HEAD/OPTIONS/PUT/DELETE). axios
 *   reports a timeout as `ECONNABORTED` (`axios/lib/adapters/http.js` line 768, `xhr.js` line 235,
 *   with the default `transitional.clarifyTimeoutError: false`), so **a timeout is not retried**,
 *   whatever `retryDelay` is. Every transport error here is taken as retryable (the simulated
 *   server has none of the codes is-retry-allowed refuses).
 * - `shouldRetry` (lines 110–125): a retry while `retryCount < retries` and the condition holds.
 * - `handleRetry` (lines 126–161) with `shouldResetTimeout: false`: `delay = retryDelay(retryCount,
 *   error)`; the next attempt's timeout is what is left of the last one's (`config.timeout -
 *   lastRequestDuration - delay`, `lastRequestTime` being reset as each attempt starts, line 168),
 *   and the retry is refused once nothing is left: one timeout covers all attempts. axios's own
 *   default is `timeout: 0` (none, `axios/lib/defaults/index.js` line 149); here it is the scenario's.
 * - axios's default `validateStatus` rejects any non-2xx with an `AxiosError` carrying the response.
 */
function axiosRetryPolicy(name: string, retryDelay: AxiosRetryDelay): StormPolicy {
  return {
    name,
    send: (fetchImpl, clock, { timeoutMs, random }) =>
      async function sendLikeAxiosRetry(url, init) {
        let timeout = timeoutMs;
        for (let retryCount = 0; ; ) {
          const started = clock.now();
          let error: Error;
          try {
            const response = await attemptWithTimeout(
              fetchImpl,
              clock,
              url,
              init,
              timeout,
              () => new PeerTimeout('AxiosError', `timeout of ${timeout}ms exceeded`),
            );
            if (response.ok) return response;
            error = new PeerHttpError('AxiosError', response);
          } catch (thrown) {
            error = thrown instanceof Error ? thrown : new Error(String(thrown));
          }
          if (error instanceof PeerTimeout) throw error; // ECONNABORTED: not retried
          if (error instanceof PeerHttpError) {
            const { status } = error.response;
            if (status !== 429 && !(status >= 500 && status <= 599)) throw error;
          }
          if (retryCount >= AXIOS_RETRIES) throw error;
          retryCount++;
          const delay = retryDelay(
            retryCount,
            error instanceof PeerHttpError ? error.response : undefined,
            random,
          );
          timeout = timeout - (clock.now() - started) - delay; // shouldResetTimeout: false
          if (timeout <= 0) throw error;
          await clock.sleep(delay);
        }
      },
  };
}

/** axios-retry's defaults: `retryDelay: noDelay` (see {@link axiosRetryPolicy}). */
export const axiosRetryDefaultsPolicy: StormPolicy = axiosRetryPolicy('axios-retry defaults', axiosNoDelay);

/**
 * axios-retry with `retryDelay: axiosRetry.exponentialDelay`, as its README.md line 30 sets it, and
 * its other defaults (see {@link axiosRetryPolicy}): 200, 400, 800 ms plus up to 20 % jitter. A
 * timeout is still not retried.
 */
export const axiosRetryExponentialPolicy: StormPolicy = axiosRetryPolicy(
  'axios-retry exponentialDelay',
  axiosExponentialDelay,
);

// p-retry 9.0.0, index.js lines 249–261: the defaults `pRetry` fills in.
const P_RETRY_RETRIES = 10; // `options.retries ??= 10`
const P_RETRY_FACTOR = 2; // `options.factor ??= 2`
const P_RETRY_MIN_TIMEOUT = 1_000; // `options.minTimeout ??= 1000`; `maxTimeout` and `maxRetryTime` Infinity
// Lines 85–86: `maximumDelay`, the longest wait `setTimeout` can hold.
const P_RETRY_MAXIMUM_DELAY = 2 ** 31 - 1;
/**
 * `calculateDelay` (lines 88–102) with `randomize: false` (no jitter) and `maxTimeout: Infinity`:
 * `round(minTimeout * factor ** retriesConsumed)`, capped at `maximumDelay`. So 1 s, 2 s, 4 s … 512 s.
 */
const pRetryDelay = (retriesConsumed: number) =>
  Math.min(Math.round(P_RETRY_MIN_TIMEOUT * P_RETRY_FACTOR ** retriesConsumed), P_RETRY_MAXIMUM_DELAY);

/**
 * p-retry's defaults (p-retry 9.0.0) around a fetch with the scenario's timeout, as a loop on the
 * simulation's clock. The operation is the README's (readme.md lines 64–72): `fetch`, and `throw`
 * when `!response.ok`, so any non-2xx is a failure; the fetch is given the scenario's timeout as
 * `signal: AbortSignal.timeout(timeoutMs)`, which rejects with a `TimeoutError` `DOMException`. From
 * `p-retry/index.js`:
 *
 * - `pRetry` (lines 245–312): attempts while `retriesConsumed <= retries` (10 retries, 11 attempts).
 * - `onAttemptFailure` (lines 158–243): every error is retried but a `TypeError` that is not a
 *   network error (line 179), so **a timeout is retried**; the wait is `calculateDelay`'s (lines
 *   88–102, {@link pRetryDelay}), without jitter: 1 s, 2 s, 4 s … after each failure.
 */
export const pRetryDefaultsPolicy: StormPolicy = {
  name: 'p-retry defaults',
  send: (fetchImpl, clock, { timeoutMs }) =>
    async function sendLikePRetry(url, init) {
      for (let retriesConsumed = 0; ; retriesConsumed++) {
        try {
          const response = await attemptWithTimeout(
            fetchImpl,
            clock,
            url,
            init,
            timeoutMs,
            () => new PeerTimeout('TimeoutError', 'The operation was aborted due to timeout'),
          );
          if (!response.ok) throw new PeerHttpError('Error', response); // the README's operation
          return response;
        } catch (error) {
          // No simulated failure is a TypeError, so every one is retried until the retries run out.
          if (retriesConsumed >= P_RETRY_RETRIES) throw error;
          await clock.sleep(pRetryDelay(retriesConsumed));
        }
      }
    },
};

/**
 * No retries: one attempt with the scenario's timeout, its response (whatever the status) or its
 * error the request's outcome. The baseline every retry policy is measured against.
 */
export const noRetriesPolicy: StormPolicy = {
  name: 'no retries',
  send: (fetchImpl, clock, { timeoutMs }) =>
    function sendOnce(url, init) {
      return attemptWithTimeout(
        fetchImpl,
        clock,
        url,
        init,
        timeoutMs,
        () => new PeerTimeout('TimeoutError', `GET ${url} timed out after ${timeoutMs} ms`),
      );
    },
};

/**
 * Retryline's defaults with a circuit breaker as well (`circuitBreaker()`, its defaults): a breaker
 * of its own for each run, so runs share no state.
 */
export const retrylineWithBreakerPolicy: StormPolicy = {
  name: 'Retryline + breaker',
  options: () => ({ breaker: circuitBreaker() }),
};

/**
 * Retryline's defaults with adaptive client-side throttling as well (`adaptiveThrottle()`, its
 * defaults: k = 2 over two minutes; Google's SRE book, "Handling Overload",
 * https://sre.google/sre-book/handling-overload/): a throttle of its own for each client, so runs
 * share no counts.
 */
export const retrylineWithThrottlePolicy: StormPolicy = {
  name: 'Retryline + throttle',
  options: () => ({ throttle: adaptiveThrottle() }),
};

/** Retryline's defaults, named for the comparison (the same options as {@link defaultGuardsPolicy}). */
export const retrylineDefaultsPolicy: StormPolicy = { ...defaultGuardsPolicy, name: 'Retryline defaults' };

/** How many retries the naive peer in {@link STORM_POLICIES} sends. */
export const IMMEDIATE_RETRIES = 3;

/** The naive peer: immediate retries, {@link IMMEDIATE_RETRIES} of them (one value for both lists). */
const immediateRetries = immediateRetryPolicy(IMMEDIATE_RETRIES);

/**
 * The policies `retryline simulate storm` compares, in this order: immediate retries,
 * axios-retry's defaults, ky's defaults, Retryline's defaults, Retryline with breaker, Retryline
 * with adaptive throttle.
 */
export const STORM_POLICIES: readonly StormPolicy[] = [
  immediateRetries,
  axiosRetryDefaultsPolicy,
  kyDefaultsPolicy,
  retrylineDefaultsPolicy,
  retrylineWithBreakerPolicy,
  retrylineWithThrottlePolicy,
];

/**
 * The policies the closed-loop storm (`retryline simulate storm --clients`) compares, in this
 * order: no retries, immediate retries, axios-retry's defaults, axios-retry with
 * `exponentialDelay`, ky's defaults, p-retry's defaults, Retryline's defaults, Retryline with
 * breaker, Retryline with adaptive throttle.
 */
export const CLOSED_STORM_POLICIES: readonly StormPolicy[] = [
  noRetriesPolicy,
  immediateRetries,
  axiosRetryDefaultsPolicy,
  axiosRetryExponentialPolicy,
  kyDefaultsPolicy,
  pRetryDefaultsPolicy,
  retrylineDefaultsPolicy,
  retrylineWithBreakerPolicy,
  retrylineWithThrottlePolicy,
];

/**
 * The policies `retryline simulate overload` compares, in this order: no retries (the context),
 * Retryline's defaults (retries with the budget and the recovery gate), and the same with adaptive
 * throttling.
 */
export const OVERLOAD_POLICIES: readonly StormPolicy[] = [
  noRetriesPolicy,
  retrylineDefaultsPolicy,
  retrylineWithThrottlePolicy,
];
