/**
 * The fake HTTP client the failover and hedging tests of core run requests through: endpoints
 * answer by `behave(base, n)` (n: the endpoint's nth request), on a virtual clock; every send is
 * kept with the URL it went to and whether its signal was aborted.
 */
import { retryBudget } from '../../packages/core/src/guard/retry-budget';
import { memoryStore } from '../../packages/core/src/guard/store';
import {
  type HttpAttempt,
  type HttpExchange,
  type HttpRetryOptions,
  runHttpRequest,
} from '../../packages/core/src/http/request-engine';
import { seededRandom } from '../../packages/core/src/time/random';
import type { VirtualClock } from '../../packages/core/src/time/virtual-clock';

export const A = 'https://a.api.example';
export const B = 'https://b.api.example';
export const C = 'https://c.api.example';

/** A budget that gives every request its hedge: for tests of hedging itself, not of the budget. */
export const everyHedge = () => retryBudget({ ratio: 1, minPerSecond: 0 });

export interface Reply {
  readonly status: number;
  readonly headers: Headers;
  readonly from: string;
}

export type Behaviour = number | 'refuse' | 'hang' | { readonly after: number; readonly status: number };

export const refused = (url: string) =>
  new TypeError('fetch failed', {
    cause: Object.assign(new Error('connect ECONNREFUSED'), {
      code: 'ECONNREFUSED',
      port: 443,
      hostname: new URL(url).hostname,
    }),
  });

/** A client whose endpoints answer by `behave(base, n)`; `maxInFlight` is the most sends at once. */
export function client(behave: (base: string, n: number) => Behaviour, clock: VirtualClock) {
  const sends: Array<{ url: string; attempt: HttpAttempt; aborted: () => boolean; settled: boolean }> = [];
  const counts = new Map<string, number>();
  const discarded: Reply[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const request = (
    method: string,
    url: string,
    options: HttpRetryOptions,
    headers?: Record<string, string>,
  ): Promise<{ response: Reply }> => {
    const exchange: HttpExchange<Reply> = {
      client: 'test',
      method,
      url,
      headers,
      replayable: true,
      options,
      send(attempt) {
        const to = attempt.url ?? url;
        const base = new URL(to).origin;
        const n = (counts.get(base) ?? 0) + 1;
        counts.set(base, n);
        const record = { url: to, attempt, aborted: () => attempt.signal?.aborted === true, settled: false };
        sends.push(record);
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        const done = <T>(p: Promise<T>) =>
          p.finally(() => {
            record.settled = true;
            inFlight--;
          });
        const behaviour = behave(base, n);
        const reply = (status: number) => ({ status, headers: new Headers(), from: base });
        if (behaviour === 'refuse') return done(Promise.reject(refused(to)));
        if (typeof behaviour === 'number') return done(Promise.resolve(reply(behaviour)));
        return done(
          new Promise<Reply>((resolve, reject) => {
            attempt.signal?.addEventListener('abort', () => reject(attempt.signal?.reason), { once: true });
            if (behaviour !== 'hang')
              clock.sleep(behaviour.after).then(() => resolve(reply(behaviour.status)));
          }),
        );
      },
      inspect: (response) => response,
      discard: (response) => {
        discarded.push(response);
      },
      redirected: () => false,
    };
    return runHttpRequest(exchange);
  };
  return { sends, counts, discarded, request, maxInFlight: () => maxInFlight };
}

export const base = (clock: VirtualClock, more: HttpRetryOptions = {}): HttpRetryOptions => ({
  clock,
  random: seededRandom(7),
  backoff: 10,
  jitter: 'none',
  store: memoryStore(),
  ...more,
});

/** Runs `pending` to its end on the virtual clock. */
export async function settle<T>(clock: VirtualClock, pending: Promise<T>): Promise<T> {
  const result = pending.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  await clock.runAll();
  const done = await result;
  if ('error' in done) throw done.error;
  return done.value;
}
