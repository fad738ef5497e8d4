/**
 * Headers added to every attempt of every HTTP request in this realm, by instrumentation rather
 * than by the request's own options: trace context (`traceparent`) from `@retryline/otel`, say.
 */

import { invalid } from '../policy/normalize';

/** The attempt a hook adds headers to. */
export interface AttemptHeadersContext {
  /** The logical request's id: the same on every attempt, as in its events. */
  readonly requestId: string;
  /** 1 for the first try. */
  readonly attempt: number;
  /** `'fetch'`, `'axios'`, `'ky'`. */
  readonly client: string;
  /** Upper-case. */
  readonly method: string;
  /** Redacted, as in events. */
  readonly url: string;
}

/** Returns the headers to add to one attempt (none: `undefined`). */
export type AttemptHeadersHook = (
  attempt: AttemptHeadersContext,
) => Readonly<Record<string, string>> | undefined;

const hooks = new Set<AttemptHeadersHook>();

/**
 * Adds the headers `hook` returns to every attempt of every HTTP request (fetch, axios, ky) in this
 * realm; returns a function that removes the hook. The hook runs once per attempt, before that
 * attempt's `attempt-start` event, and its headers show in that event (redacted). A header the
 * caller set on the request is kept; a hook that throws adds nothing.
 *
 * @example
 * ```ts
 * const stop = addAttemptHeaders(({ attempt }) => ({ 'x-attempt': String(attempt) }));
 * ```
 */
export function addAttemptHeaders(hook: AttemptHeadersHook): () => void {
  if (typeof hook !== 'function') throw invalid('hook', 'a function', hook);
  hooks.add(hook);
  return () => {
    hooks.delete(hook);
  };
}

/** Whether any hook adds headers (instrumentation is installed). */
export const attemptHeaderHooks = (): boolean => hooks.size > 0;

/**
 * The headers every hook adds to this attempt (`undefined` when there is no hook). The attempt is
 * described only when a hook will read it.
 */
export function hookHeaders(describe: () => AttemptHeadersContext): Record<string, string> | undefined {
  if (hooks.size === 0) return undefined;
  const attempt = describe();
  const headers: Record<string, string> = {};
  for (const hook of hooks) {
    let added: Readonly<Record<string, string>> | undefined;
    try {
      added = hook(attempt);
    } catch {
      // Instrumentation must not change whether or how a request is sent.
      continue;
    }
    if (typeof added !== 'object' || added === null) continue;
    for (const name of Object.keys(added)) {
      const value = added[name];
      if (typeof value === 'string' && name !== '__proto__') headers[name] = value;
    }
  }
  return headers;
}
