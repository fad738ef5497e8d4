import type { AttemptPhase } from '../events/types';
import type { HeadersLike } from './headers';

/** How a failed send failed: provably before the server saw it, or somewhere unknown. */
export interface TransportFailure {
  readonly phase: Exclude<AttemptPhase, 'response'>;
  /** The error code found on the error or its causes (`ECONNREFUSED`, `UND_ERR_SOCKET` …). */
  readonly code?: string;
}

// The attempt never left this host: no connection, no route, no name (nothing was sent, so it is
// safe to retry whatever the method) — when it is the request's own first hop (see classifyTransportError).
const NOT_SENT = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EAI_NONAME',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
]);

// The connection broke while the request may already have been processed: retried only when the
// request is idempotent.
const UNKNOWN = new Set([
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'ECONNABORTED',
  'ERR_NETWORK',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'ERR_STREAM_PREMATURE_CLOSE',
]);

// Browsers hide the cause of a network failure behind one opaque TypeError per engine.
const OPAQUE_NETWORK_MESSAGES = [
  'fetch failed', // undici
  'failed to fetch', // Chromium
  'networkerror when attempting to fetch resource.', // Firefox
  'load failed', // Safari
  'network request failed',
  'network error',
];

// undici's `fetch failed` also stands for failures of the fetch itself, not of the network: its
// cause then says which, with no error code. Retrying those repeats them (a redirect loop, 20 sends
// per attempt).
const FETCH_REFUSALS = [
  'redirect count exceeded',
  'unexpected redirect', // redirect: 'error'
  'unknown scheme',
  'bad port', // a port fetch blocks (1, 25, 6000 …)
  'url scheme must be a http(s) scheme',
];

/** Whether undici refused the fetch itself (its cause names the reason, with no code). */
function isFetchRefusal(error: unknown, codes: readonly string[]): boolean {
  if (codes.length > 0) return false;
  const cause = (error as { cause?: unknown }).cause;
  const message =
    typeof cause === 'object' && cause !== null ? (cause as { message?: unknown }).message : undefined;
  return typeof message === 'string' && FETCH_REFUSALS.includes(message.toLowerCase());
}

/** The error and its causes, outermost first (at most five deep: a cycle must not hang us). */
function chainOf(error: unknown): object[] {
  const chain: object[] = [];
  let current: unknown = error;
  for (let depth = 0; depth < 5 && typeof current === 'object' && current !== null; depth++) {
    chain.push(current);
    current = (current as { cause?: unknown }).cause;
  }
  return chain;
}

function codesOf(chain: readonly object[]): string[] {
  const codes: string[] = [];
  for (const link of chain) {
    const { code } = link as { code?: unknown };
    if (typeof code === 'string') codes.push(code);
  }
  return codes;
}

/**
 * The request an attempt was for, as far as its client can say where the attempt failed: `url`
 * is the request's own, `redirected` whether the client followed a redirect before failing —
 * `false` only when it provably did not (fetch with `redirect: 'manual'` or `'error'`, axios's
 * hop count), `undefined` when it cannot tell.
 */
export interface FirstHop {
  readonly url: string;
  readonly redirected: boolean | undefined;
}

const DEFAULT_PORTS: Readonly<Record<string, string>> = {
  'http:': '80',
  'https:': '443',
  'ws:': '80',
  'wss:': '443',
};

/**
 * Whether what the error says it failed to reach (the `port`, `address` or `hostname` Node puts on
 * a connect or lookup error) is the request URL's own host and port. An error that names neither a
 * port nor a host proves nothing (a client's own error, thrown after it may have sent): false.
 * An address is compared only with an IP literal (a name's addresses are not known here).
 */
function failedOnHost(chain: readonly object[], url: string): boolean {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return false;
  }
  const port = target.port || DEFAULT_PORTS[target.protocol];
  const host = target.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  const literal = host.includes(':') || /^[\d.]+$/.test(host);
  let named = false;
  for (const link of chain) {
    const { port: failedPort, address, hostname } = link as Record<string, unknown>;
    if (typeof failedPort === 'number' || typeof failedPort === 'string') {
      if (String(failedPort) !== port) return false;
      named = true;
    }
    if (literal && typeof address === 'string' && address.toLowerCase() !== host) return false;
    if (typeof hostname === 'string') {
      if (hostname.toLowerCase() !== host) return false;
      named = true;
    }
  }
  return named;
}

/**
 * Classifies an error thrown by a send. `undefined` means it is not a transport failure at all (an
 * invalid URL, a bug in a hook): such errors are never retried. Works across clients: undici's
 * `TypeError('fetch failed', { cause })`, node's `ECONNRESET`, axios's `ECONNABORTED`/`ERR_NETWORK`,
 * and the browsers' opaque `TypeError`.
 *
 * A "never reached" code (`ECONNREFUSED`, `ENOTFOUND` …) proves `not-sent` only for the request's
 * own first hop: a client that follows a 303 or 307 to a host that refuses reports the
 * same code after the first server processed the request. So it is `not-sent` only when `hop` says
 * no redirect was followed and the error names no other host or port; otherwise `unknown`.
 */
export function classifyTransportError(error: unknown, hop?: FirstHop): TransportFailure | undefined {
  const chain = chainOf(error);
  const codes = codesOf(chain);
  const notSent = codes.find((code) => NOT_SENT.has(code));
  if (notSent) {
    const proven = hop !== undefined && hop.redirected === false && failedOnHost(chain, hop.url);
    return { phase: proven ? 'not-sent' : 'unknown', code: notSent };
  }
  const unknown = codes.find((code) => UNKNOWN.has(code));
  if (unknown) return { phase: 'unknown', code: unknown };
  const message =
    typeof error === 'object' && error !== null ? (error as { message?: unknown }).message : undefined;
  if (
    typeof message === 'string' &&
    OPAQUE_NETWORK_MESSAGES.includes(message.toLowerCase()) &&
    !isFetchRefusal(error, codes)
  ) {
    return codes[0] === undefined ? { phase: 'unknown' } : { phase: 'unknown', code: codes[0] };
  }
  return undefined;
}

/** RFC 9110 §9.2.2: methods whose repetition has the same effect as one request. */
export const IDEMPOTENT_METHODS: readonly string[] = ['GET', 'HEAD', 'OPTIONS', 'TRACE', 'PUT', 'DELETE'];

/** Statuses retried by default: timeouts, rate limits and server errors that are usually transient. */
export const RETRYABLE_STATUSES: readonly number[] = [408, 429, 500, 502, 503, 504];

/** One failed attempt of an HTTP request, classified: what a `retryOn` predicate sees. */
export interface HttpOutcome {
  readonly attempt: number;
  readonly method: string;
  readonly url: string;
  readonly phase: AttemptPhase;
  /** The response status, for `phase: 'response'`. */
  readonly status?: number;
  /** The error code, for transport failures. */
  readonly code?: string;
  /** The error, for transport failures. */
  readonly error?: unknown;
  /** The response's headers, for `phase: 'response'`: a provider's own retry headers are read here. */
  readonly headers?: HeadersLike;
  /** Whether the request may be repeated: an idempotent method, or an idempotency key. */
  readonly idempotent: boolean;
  /** Whether the request carries an idempotency key. */
  readonly keyed: boolean;
  /** Whether the response carried a server hint (Retry-After or a rate-limit reset). */
  readonly hinted: boolean;
  /** Retryline's default verdict, so a predicate can extend it rather than restate it. */
  readonly retryable: boolean;
}

/** The lists a verdict is taken from; `retryOn: { statuses, methods }` replaces them. */
export interface RetryRules {
  readonly statuses: ReadonlySet<number>;
  readonly methods: ReadonlySet<string>;
}

/**
 * Retryline's default verdict: `not-sent` is safe for every method; `unknown` only for
 * idempotent requests; a response only when its status is retryable and the request idempotent.
 * 413 counts only with a hint (the server says when it can take the payload); 409 only for a keyed
 * request (the Idempotency-Key draft's "original request still in progress").
 */
export function isRetryableByDefault(outcome: Omit<HttpOutcome, 'retryable'>, rules: RetryRules): boolean {
  if (outcome.phase === 'not-sent') return true;
  const idempotent = outcome.keyed || rules.methods.has(outcome.method);
  if (!idempotent) return false;
  if (outcome.phase === 'unknown') return true;
  const status = outcome.status ?? 0;
  return (
    rules.statuses.has(status) || (status === 413 && outcome.hinted) || (status === 409 && outcome.keyed)
  );
}
