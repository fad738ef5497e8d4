import type { Step, StepInfo } from './steps';
import { describeValue, invalid } from './validate';

/**
 * Which attempts share one counter:
 * - `'handler'`: one counter for the whole script.
 * - `{ header: 'x-request-id' }`: one counter per value of that request header (a request without
 *   it counts in the handler-wide counter). Tests that run concurrently and give each logical
 *   request its own id (`requestIdHeader`, or the idempotency key) never share counters.
 * - `(request) => string`: one counter per returned key.
 */
export type Scope = 'handler' | { readonly header: string } | ((request: Request) => string);

/** A step that follows a script over attempts, and can be asked how far it got. */
export interface Script extends Step {
  /** Forgets every counter (and every generator and start time), as if no request had come. */
  reset(): void;
  /**
   * Attempts answered so far: all of them, or those of one scope key (a header value, or what a
   * scope function returned).
   */
  attempts(key?: string): number;
}

/** How a script answers the attempt-th attempt of one scope key, given that key's own state. */
export type Answer<S> = (state: S, attempt: number, info: StepInfo) => ReturnType<Step>;

type KeyOf = (request: Request) => string | undefined;

function keyFunction(scope: unknown): KeyOf {
  if (scope === undefined || scope === 'handler') return () => undefined;
  if (typeof scope === 'function') {
    return (request) => {
      const key: unknown = scope(request);
      if (typeof key !== 'string') {
        throw new TypeError(
          `[Retryline msw] Expected scope(request) to return a string key, got ${describeValue(key)}`,
        );
      }
      return key;
    };
  }
  const header = (scope as { header?: unknown } | null)?.header;
  if (typeof scope === 'object' && typeof header === 'string' && header !== '') {
    // A request without the header, or with an empty one, falls back to the handler-wide counter.
    return (request) => request.headers.get(header) || undefined;
  }
  throw invalid('scope', "'handler', { header: string } or a function (request) => string", scope);
}

/**
 * Builds a {@link Script}: one state per scope key, created on the key's first attempt, and an
 * attempt number given synchronously on arrival, so concurrent attempts never share a number.
 */
export function createScript<S>(scope: unknown, fresh: (info: StepInfo) => S, answer: Answer<S>): Script {
  const keyOf = keyFunction(scope);
  let shared: { attempts: number; state: S } | undefined;
  const keyed = new Map<string, { attempts: number; state: S }>();
  let total = 0;

  const script = ((info: StepInfo) => {
    const key = keyOf(info.request);
    let entry = key === undefined ? shared : keyed.get(key);
    if (!entry) {
      entry = { attempts: 0, state: fresh(info) };
      if (key === undefined) shared = entry;
      else keyed.set(key, entry);
    }
    entry.attempts += 1;
    total += 1;
    return answer(entry.state, entry.attempts, info);
  }) as Script;
  script.reset = () => {
    shared = undefined;
    keyed.clear();
    total = 0;
  };
  script.attempts = (key) => (key === undefined ? total : (keyed.get(key)?.attempts ?? 0));
  return script;
}
