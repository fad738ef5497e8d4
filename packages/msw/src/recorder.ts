import type { Clock } from '@retryline/core';
import { systemClock } from '@retryline/core/adapter';
import { type HttpHandler, http } from 'msw';
import { RECORDER } from './recorder-brand';
import { expectClock, expectOptions, invalid } from './validate';

/** One request as msw saw it arrive: one attempt of the client under test. */
export interface AttemptRecord {
  /** Upper-case method: `'GET'`, `'POST'` … */
  readonly method: string;
  /** The full URL, query included. */
  readonly url: string;
  /** Request headers by lower-case name (repeated headers joined with `', '`). */
  readonly headers: Readonly<Record<string, string>>;
  /**
   * The request body as text, `undefined` for a request without one. Bodies are read in the
   * background: `await recorder.flush()` before reading them.
   */
  readonly body: string | undefined;
  /** `clock.now()` when the request started. */
  readonly time: number;
}

/**
 * Which attempts a {@link Recorder.for} view shows:
 * - a string: an exact URL (`'https://api.example/orders'`) or a path (`'/orders'`), optionally after
 *   a method (`'POST /orders'`); the query string counts only when the string has one;
 * - a RegExp, tested against the full URL;
 * - a predicate on the {@link AttemptRecord}.
 */
export type AttemptFilter = string | RegExp | ((attempt: AttemptRecord) => boolean);

/** Every attempt msw saw, in order of arrival: what the vitest matchers read. */
export interface Recorder {
  /** The attempts so far (this view's, for a `for()` view), oldest first. */
  readonly attempts: readonly AttemptRecord[];
  /** A live view of the attempts that match `filter`; the matchers work on it too. */
  for(filter: AttemptFilter): Recorder;
  /** Resolves once every body read started so far has finished. */
  flush(): Promise<void>;
  /** Forgets the attempts recorded so far (on a view: only the ones it shows). */
  clear(): void;
  /** Stops recording (on a view too: it stops the recorder it came from). */
  dispose(): void;
}

/** A recorder made from handlers: put its `handlers` in `setupServer()` or `setupWorker()`. */
export interface HandlersRecorder<H> extends Recorder {
  /** A catch-all handler that records and falls through, followed by the handlers given. */
  readonly handlers: Array<HttpHandler | H>;
}

/** What {@link recordAttempts} listens to: an msw `setupServer()` or `setupWorker()`. */
export interface LifeCycleSource {
  readonly events: {
    on(type: 'request:start', listener: (event: { request: Request; requestId: string }) => void): unknown;
    removeListener(
      type: 'request:start',
      listener: (event: { request: Request; requestId: string }) => void,
    ): unknown;
  };
}

/** Options of {@link recordAttempts}. */
export interface RecordOptions {
  /**
   * The clock each attempt's `time` is read from. Pass the client's `virtualClock()` to compare
   * waits in virtual time.
   * @default systemClock
   * @example
   * ```ts
   * const recorder = recordAttempts(server, { clock: virtualClock() });
   * ```
   */
  clock?: Clock;
}

interface Root {
  readonly records: AttemptRecord[];
  readonly pending: Set<Promise<void>>;
  dispose(): void;
}

function urlParts(url: string, withQuery: boolean) {
  const parsed = new URL(url);
  const path = parsed.pathname + (withQuery ? parsed.search : '');
  return { path, full: parsed.origin + path };
}

function matcherOf(filter: AttemptFilter): (attempt: AttemptRecord) => boolean {
  if (typeof filter === 'function') return filter;
  if (filter instanceof RegExp) {
    // A global or sticky RegExp keeps state between test() calls; a copy without those flags does not.
    const pattern = new RegExp(filter.source, filter.flags.replace(/[gy]/g, ''));
    return (attempt) => pattern.test(attempt.url);
  }
  if (typeof filter !== 'string' || filter.trim() === '') {
    throw invalid('filter', 'a URL, a path, a RegExp or a predicate', filter);
  }
  const [, method, rest] = /^([A-Za-z]+)\s+(\S.*)$/.exec(filter.trim()) ?? [];
  const target = (rest ?? filter).trim();
  const withQuery = target.includes('?');
  const isPath = target.startsWith('/');
  let expected: string;
  try {
    // A path is read the way a URL's path is, so '/café' or '/search?q=a b' match the encoded
    // request URL as the full-URL form of the same filter does.
    expected = isPath ? urlParts(`http://path${target}`, withQuery).path : urlParts(target, withQuery).full;
  } catch {
    throw invalid('filter', 'a URL, a path (starting with /), a RegExp or a predicate', filter);
  }
  return (attempt) => {
    if (method && attempt.method !== method.toUpperCase()) return false;
    const parts = urlParts(attempt.url, withQuery);
    return (isPath ? parts.path : parts.full) === expected;
  };
}

function view(root: Root, shows: (attempt: AttemptRecord) => boolean): Recorder {
  return {
    [RECORDER]: true,
    get attempts() {
      return Object.freeze(root.records.filter(shows));
    },
    for(filter) {
      const matches = matcherOf(filter);
      return view(root, (attempt) => shows(attempt) && matches(attempt));
    },
    async flush() {
      // Reads that start while waiting are waited for too.
      while (root.pending.size > 0) await Promise.all(root.pending);
    },
    clear() {
      const kept = root.records.filter((attempt) => !shows(attempt));
      root.records.splice(0, root.records.length, ...kept);
    },
    dispose: () => root.dispose(),
  } as Recorder;
}

function isLifeCycleSource(source: unknown): source is LifeCycleSource {
  const events = (source as { events?: { on?: unknown; removeListener?: unknown } } | null)?.events;
  return typeof events?.on === 'function' && typeof events.removeListener === 'function';
}

/**
 * Records every request msw sees, as one {@link AttemptRecord} each: method, URL, headers, body
 * and time. Give it the msw server (or worker) to record everything it intercepts, or an array of
 * handlers to get them back behind a recording catch-all in `recorder.handlers`.
 *
 * Runtime handlers added later with `server.use()` come before the catch-all, so with the
 * handlers form the requests they answer are not recorded; and as the catch-all matches every
 * request, msw's `onUnhandledRequest` no longer fires. The server form sees every request.
 *
 * @example
 * ```ts
 * const server = setupServer(http.get('https://api.example/orders', failTimes(2)));
 * server.listen();
 * const recorder = recordAttempts(server);
 * await fetch('https://api.example/orders');
 * recorder.attempts.length; // 1: fetch alone does not retry
 * ```
 */
export function recordAttempts(source: LifeCycleSource, options?: RecordOptions): Recorder;
export function recordAttempts<H>(handlers: readonly H[], options?: RecordOptions): HandlersRecorder<H>;
export function recordAttempts<H>(
  source: LifeCycleSource | readonly H[],
  options?: RecordOptions,
): Recorder | HandlersRecorder<H> {
  const clock = expectClock<Clock>('clock', expectOptions('options', options).clock, systemClock);
  let recording = true;
  const records: AttemptRecord[] = [];
  const pending = new Set<Promise<void>>();

  const record = (request: Request) => {
    if (!recording) return;
    const attempt: { -readonly [K in keyof AttemptRecord]: AttemptRecord[K] } = {
      method: request.method.toUpperCase(),
      url: request.url,
      headers: Object.fromEntries(request.headers.entries()),
      body: undefined,
      time: clock.now(),
    };
    records.push(attempt);
    if (request.body === null) return;
    // Read a clone: the request itself is still on its way to the handlers.
    const read = request
      .clone()
      .text()
      .then(
        (text) => {
          attempt.body = text;
        },
        () => {
          // A body that cannot be read (an aborted stream) stays undefined.
        },
      )
      .finally(() => pending.delete(read));
    pending.add(read);
  };

  if (Array.isArray(source)) {
    const root: Root = {
      records,
      pending,
      dispose: () => {
        recording = false;
      },
    };
    const catchAll = http.all('*', ({ request }) => {
      record(request);
      // Returning nothing falls through to the next handler (msw 2).
    });
    return Object.assign(
      view(root, () => true),
      { handlers: [catchAll, ...(source as readonly H[])] },
    );
  }
  if (!isLifeCycleSource(source)) {
    throw invalid('source', 'an msw server or worker (with events.on) or an array of handlers', source);
  }
  const listener = ({ request }: { request: Request }) => record(request);
  source.events.on('request:start', listener);
  const root: Root = {
    records,
    pending,
    dispose: () => {
      if (!recording) return;
      recording = false;
      source.events.removeListener('request:start', listener);
    },
  };
  return view(root, () => true);
}
