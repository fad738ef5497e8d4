/**
 * The peers' retry defaults as storm policies, so a storm can compare immediate retries, axios-retry's
 * defaults, ky's defaults, Retryline's defaults, and Retryline with breaker.
 *
 * Neither peer can run its real code in virtual time: ky waits between retries with its own
 * `delay()` (`ky/distribution/utils/delay.js`, a bare `setTimeout`; no option replaces it) and times
 * attempts out with another bare `setTimeout` (`utils/timeout.js`); axios-retry waits with
 * `setTimeout` (`axios-retry/dist/esm/index.js`, `handleRetry`) and measures the time left with
 * `Date.now()`. So each is modelled as a plain loop on the simulation's clock, with the numbers and
 * rules taken from the installed sources (ky 1.14.3, axios-retry 4.5.0 with axios 1.21.1), cited
 * where they are used. The scenario's per-attempt timeout stands in for each library's timeout
 * (ky: 10 s per attempt by default; axios: none by default).
 *
 * What matters in the storm: **neither peer retries a timeout by default.** ky's `retryOnTimeout`
 * is `false`; axios reports a timeout as `ECONNABORTED`, which axios-retry's default condition
 * excludes. The storm's server only ever times out (it answers `503` only with a `queueLimit`), so
 * there both peers send each request once.
 */

import { circuitBreaker } from '@retryline/core';
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

// axios-retry 4.5.0, dist/esm/index.js lines 76–81: `DEFAULT_OPTIONS`.
const AXIOS_RETRIES = 3; // `retries: 3`
// Lines 18–19: GET is among `IDEMPOTENT_HTTP_METHODS`.

/**
 * axios-retry's defaults (axios-retry 4.5.0 on axios 1.21.1), as a loop on the simulation's clock.
 * From `axios-retry/dist/esm/index.js`:
 *
 * - `DEFAULT_OPTIONS` (lines 76–81): `retries: 3`, `retryCondition: isNetworkOrIdempotentRequestError`,
 *   `retryDelay: noDelay`, `shouldResetTimeout: false`.
 * - The condition (lines 3–41): `isNetworkError` (no response, an error code other than
 *   `ERR_CANCELED`/`ECONNABORTED`, allowed by is-retry-allowed) or `isIdempotentRequestError`
 *   (`code !== 'ECONNABORTED'` and no response, 429 or 5xx, on GET/HEAD/OPTIONS/PUT/DELETE). axios
 *   reports a timeout as `ECONNABORTED` (`axios/lib/adapters/http.js` line 768, `xhr.js` line 235,
 *   with the default `transitional.clarifyTimeoutError: false`), so **a timeout is not retried**.
 *   Every transport error here is taken as retryable (the simulated server has none of the codes
 *   is-retry-allowed refuses).
 * - `noDelay` (lines 56–58): 0 ms, or the response's `Retry-After`.
 * - `handleRetry` (lines 126–139) with `shouldResetTimeout: false`: the next attempt's timeout is
 *   what is left of the last one's (`config.timeout - lastRequestDuration - delay`), and the retry
 *   is refused once nothing is left: one timeout covers all attempts. axios's own default is
 *   `timeout: 0` (none, `axios/lib/defaults/index.js` line 149); here it is the scenario's.
 * - axios's default `validateStatus` rejects any non-2xx with an `AxiosError` carrying the response.
 */
export const axiosRetryDefaultsPolicy: StormPolicy = {
  name: 'axios-retry defaults',
  send: (fetchImpl, clock, { timeoutMs }) =>
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
        const delay = error instanceof PeerHttpError ? Math.max(0, retryAfterMs(error.response) ?? 0) : 0; // noDelay
        timeout = timeout - (clock.now() - started) - delay; // shouldResetTimeout: false
        if (timeout <= 0) throw error;
        await clock.sleep(delay);
      }
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

/** Retryline's defaults, named for the comparison (the same options as {@link defaultGuardsPolicy}). */
const retrylineDefaultsPolicy: StormPolicy = { ...defaultGuardsPolicy, name: 'Retryline defaults' };

/** How many retries the naive peer in {@link STORM_POLICIES} sends. */
export const IMMEDIATE_RETRIES = 3;

/**
 * The policies `retryline simulate storm` compares, in this order: immediate retries,
 * axios-retry's defaults, ky's defaults, Retryline's defaults, Retryline with breaker.
 */
export const STORM_POLICIES: readonly StormPolicy[] = [
  immediateRetryPolicy(IMMEDIATE_RETRIES),
  axiosRetryDefaultsPolicy,
  kyDefaultsPolicy,
  retrylineDefaultsPolicy,
  retrylineWithBreakerPolicy,
];
