/**
 * How the panel words times, waits and outcomes. Pure, so the waterfall's labels and the detail
 * pane's explanations are tested as strings.
 */

import type { ParkedSpan, ProbeMark, ProbeResult } from '../model/gate-lane';
import type { GuardState } from '../model/lane-state';
import type { AttemptRow, GuardWaitRow, RequestRow, RowOutcome, WaitRow } from '../model/timeline';
import { MAX_REQUEST_BYTES, MAX_REQUEST_EVENTS } from '../shared/protocol';

/** `412 ms`, `2 s`, `1.5 s`, `2 min`, `∞`. */
export function formatMs(ms: number): string {
  if (!Number.isFinite(ms)) return ms > 0 ? '∞' : '–';
  const abs = Math.abs(ms);
  if (abs < 1000) return `${Math.round(ms)} ms`;
  if (abs < 60_000) return `${trim(ms / 1000)} s`;
  if (abs < 3_600_000) return `${trim(ms / 60_000)} min`;
  return `${trim(ms / 3_600_000)} h`;
}

/** One decimal at most, and none when it is zero. */
function trim(value: number): string {
  return String(Math.round(value * 10) / 10);
}

/** Header names as servers spell them, for the hint sources core reports in lower case. */
const HINT_HEADERS: Readonly<Record<string, string>> = {
  'retry-after': 'Retry-After',
  ratelimit: 'RateLimit',
  'ratelimit-reset': 'RateLimit-Reset',
  'x-ratelimit-reset': 'X-RateLimit-Reset',
};

export function hintHeader(source: string | undefined): string {
  if (source === undefined) return 'rate limit';
  return Object.hasOwn(HINT_HEADERS, source) ? (HINT_HEADERS[source] as string) : source;
}

/** The waterfall's label of a retry wait: `backoff 412 ms (exponential, full)`, `Retry-After 2 s`. */
export function waitLabel(wait: WaitRow): string {
  switch (wait.reason) {
    case 'backoff':
      return `backoff ${formatMs(wait.delay)} (${wait.strategy}, ${wait.jitter})`;
    case 'retry-after':
      return `Retry-After ${formatMs(wait.delay)}`;
    case 'rate-limit-reset':
      return `${hintHeader(wait.hint?.source)} ${formatMs(wait.delay)}`;
  }
}

/**
 * A retry wait's labels, longest first, for the waterfall to show the longest that fits:
 * `backoff 412 ms (exponential, full)`, `backoff 412 ms`, `412 ms`.
 */
export function waitLabels(wait: WaitRow): string[] {
  const full = waitLabel(wait);
  const delay = formatMs(wait.delay);
  const word = wait.reason === 'backoff' ? 'backoff' : full.slice(0, full.length - delay.length - 1);
  return unique([full, `${word} ${delay}`, delay]);
}

/** The waterfall's label of a guard wait: `limiter 100 ms`, `bulkhead 30 ms`, `pacing 1 s`. */
export function guardLabel(wait: GuardWaitRow): string {
  return `${wait.guard} ${formatMs(wait.waited)}`;
}

/** A guard wait's labels, longest first: `pacing 1 s`, `1 s`. */
export function guardLabels(wait: GuardWaitRow): string[] {
  return [guardLabel(wait), formatMs(wait.waited)];
}

function unique(labels: string[]): string[] {
  return [...new Set(labels)];
}

/** A probe's marker on its lane (a sign, so the result reads without colour) and what it says. */
const PROBE_RESULTS: Readonly<Record<ProbeResult, { readonly sign: string; readonly text: string }>> = {
  recovered: { sign: '✓', text: 'recovered' },
  failed: { sign: '✗', text: 'still failing' },
  aborted: { sign: '–', text: 'aborted' },
  pending: { sign: '…', text: 'no result yet' },
};

/** The sign on a probe's marker: ✓ recovered, ✗ still failing, – aborted, … no result yet. */
export function probeSign(result: ProbeResult): string {
  return PROBE_RESULTS[result].sign;
}

/** What a probe's marker says: `probe 200: recovered`, `probe ECONNRESET: still failing`. */
export function probeLabel(probe: ProbeMark): string {
  const answer = probe.status ?? probe.error?.code ?? probe.error?.name;
  return `probe${answer === undefined ? '' : ` ${answer}`}: ${PROBE_RESULTS[probe.result].text}`;
}

/** The text of a parked span on its lane: `3 parked`. */
export function parkedLabel(span: ParkedSpan): string {
  return `${span.retries} parked`;
}

/** A parked span told in full, for its title: how many, at most how many at once, from when to when. */
export function parkedDescription(span: ParkedSpan): string {
  const retries = span.retries === 1 ? '1 retry' : `${span.retries} retries`;
  const when =
    span.to === undefined
      ? `from ${clockTime(span.from)}, still parked`
      : `${clockTime(span.from)} – ${clockTime(span.to)}`;
  return `${retries} parked by the recovery gate (at most ${span.most} at once), ${when}`;
}

/** Below this a difference of times is rounding, not a difference (events carry fractional ms). */
const EPSILON_MS = 0.5;

/**
 * How a wait's delay was computed, step by step, for the detail pane, from the event's own
 * figures. With a server hint core waits `max(hint + U(0, min(hint/10, 1 s)), backoff)` (see
 * packages/core/src/policy/decide.ts), the hint first clamped to `maxRetryAfter` when
 * `onRetryAfterTooLong` is `'clamp'`; the event's `reason` says which side won, and `delay` against
 * `hint.delay` shows the spread or the clamp.
 */
export function waitComputation(wait: WaitRow): string[] {
  const backoff = `${wait.strategy} backoff ${formatMs(wait.raw)} → capped ${formatMs(wait.capped)}`;
  const jitter = wait.jitter === 'none' ? 'no' : wait.jitter;
  if (wait.reason === 'backoff') {
    const lines = [
      wait.jitter === 'none'
        ? `${backoff} → no jitter → ${formatMs(wait.delay)}`
        : `${backoff} → ${wait.jitter} jitter → ${formatMs(wait.delay)}`,
    ];
    // A hint the backoff outlasted (with its spread, or clamped) is still worth showing.
    if (wait.hint) {
      lines.push(
        `${hintHeader(wait.hint.source)} header asked for ${formatMs(wait.hint.delay)}: the backoff was longer, so it set the wait`,
      );
    }
    return lines;
  }
  const header = hintHeader(wait.hint?.source ?? (wait.reason === 'retry-after' ? 'retry-after' : undefined));
  const backoffLine = `${backoff} (before ${jitter} jitter): not longer than the hint’s wait`;
  if (!wait.hint) {
    return [`${header} hint`, backoffLine, `waited ${formatMs(wait.delay)}: the hint plus its random spread`];
  }
  const asked = wait.hint.delay;
  if (wait.delay < asked - EPSILON_MS) {
    // Only a clamp waits less than the server asked: maxRetryAfter took the hint's place.
    return [
      `${header} header asked for ${formatMs(asked)}: more than maxRetryAfter, which took its place (onRetryAfterTooLong: 'clamp')`,
      backoffLine,
      `waited ${formatMs(wait.delay)}: maxRetryAfter plus its random spread (up to a tenth of it, at most 1 s)`,
    ];
  }
  const spread = Math.max(0, wait.delay - asked);
  const maxSpread = Math.min(asked / 10, 1000);
  return [
    `${header} header asked for ${formatMs(asked)}`,
    backoffLine,
    spread <= maxSpread + EPSILON_MS
      ? `waited ${formatMs(wait.delay)}: the ${formatMs(asked)} asked plus ${formatMs(spread)} of random spread (up to ${formatMs(maxSpread)}: a tenth of the hint, at most 1 s)`
      : `waited ${formatMs(wait.delay)}, ${formatMs(spread)} more than asked`,
  ];
}

/**
 * How each outcome reads: in full (the detail pane, the filter, titles), short (the list's
 * Outcome column), and, for a request a guard refused, the guard that did, named as the app
 * configured it: a pacing refusal (`quota-spent`) says pacing, never limiter.
 */
const OUTCOMES: Readonly<
  Record<RowOutcome, { readonly label: string; readonly short: string; readonly guard?: string }>
> = {
  success: { label: 'success', short: 'success' },
  exhausted: { label: 'retries exhausted', short: 'exhausted' },
  'not-retryable': { label: 'not retryable', short: 'not retryable' },
  aborted: { label: 'aborted', short: 'aborted' },
  deadline: { label: 'deadline exceeded', short: 'deadline' },
  'breaker-open': { label: 'breaker open', short: 'breaker open', guard: 'breaker' },
  'budget-exhausted': { label: 'retry budget exhausted', short: 'budget spent', guard: 'budget' },
  'rate-limited': { label: 'rate limited (limiter)', short: 'limiter', guard: 'limiter' },
  'quota-spent': { label: 'quota spent (pacing)', short: 'quota spent', guard: 'pacing' },
  'bulkhead-rejected': { label: 'bulkhead full', short: 'bulkhead full', guard: 'bulkhead' },
  throttled: { label: 'throttled (client-side)', short: 'throttled', guard: 'throttle' },
  'retry-after-too-long': {
    label: 'Retry-After too long',
    short: 'hint too long',
    guard: 'Retry-After too long',
  },
  'origin-failing': { label: 'origin still failing (parked)', short: 'origin failing', guard: 'gate' },
  pending: { label: 'pending', short: 'pending' },
};

export function outcomeLabel(outcome: RowOutcome): string {
  return OUTCOMES[outcome].label;
}

/** The Outcome column's text: a word or two (the full label is the cell's title). */
export function outcomeShort(outcome: RowOutcome): string {
  return OUTCOMES[outcome].short;
}

/**
 * The marker a request refused by a guard gets at its end (such a request may have no attempt
 * bar at all, and nothing else would show why it stopped): the guard's name.
 */
export function refusalLabel(row: RequestRow): string | undefined {
  return OUTCOMES[row.outcome].guard;
}

/** What the row says when the extension stopped recording a request's events at its limit. */
export function truncationText(truncated: NonNullable<RequestRow['truncated']>): string {
  const limit = `the extension keeps at most ${MAX_REQUEST_EVENTS} events or ${MAX_REQUEST_BYTES / 1024} KB of one request`;
  return truncated.dropped > 0
    ? `${truncated.dropped} later events of this request were not recorded (${limit}); its end was`
    : `This request reached the recording limit (${limit}): later events are not recorded, its end is`;
}

/** The sign of an attempt answered by a fault injected from the panel, on the row's attempts cell. */
export const INJECTED_SIGN = '⚡';

/** Who answered an injected attempt, as its bar's title and the row's label say. */
export const INJECTED_BY = 'injected by the Retryline panel';

/**
 * What the detail pane says of an injected attempt. Core answers it at the send step
 * (packages/core/src/http/fault.ts): a status or a network error is made up without sending it;
 * a `slow` step waits first, then answers so, or, naming no answer, sends it as usual.
 */
export const INJECTED_DETAIL = `${INJECTED_SIGN} ${INJECTED_BY} (not sent): the panel answered it with a status or a network error of its choosing — unless the fault only delayed it (slow), after which it was sent to the server as usual.`;

/** What a hedge is called: on its bar (for screen readers) and in the details. */
export const HEDGE_LABEL = 'hedge';

/** What an attempt cancelled because its hedge answered says in place of a status of its own. */
export const HEDGE_ANSWERED = 'cancelled: hedge answered';

/**
 * What the detail pane says of a hedge. Core sends one (packages/core/src/http/request-engine.ts)
 * when an attempt of an idempotent request is late, to another endpoint where there is one.
 */
export const HEDGE_DETAIL =
  'A hedge: a second copy of this attempt, sent while it was late (to another endpoint, where there is one). The first good answer of the two was taken and the other cancelled.';

/** What the detail pane says of an attempt its hedge answered for. */
export const HEDGE_ANSWERED_DETAIL =
  'Cancelled: its hedge answered first, and that answer was taken. The status and outcome shown are the hedge’s answer, as the retry loop judged it.';

/**
 * The attempts cell: the count (`3`, or `3+` when the extension stopped recording the request),
 * and what it says in words (`3 attempts, 2 injected by the Retryline panel, 1 hedge`). A hedge
 * is not an attempt of its own: it is told apart, never counted in.
 */
export function attemptsCount(row: Pick<RequestRow, 'attempts' | 'injected' | 'hedges' | 'truncated'>): {
  readonly text: string;
  readonly label: string;
} {
  const n = row.attempts.length;
  const text = row.truncated ? `${n}+` : String(n);
  const parts = [`${text} ${n === 1 && !row.truncated ? 'attempt' : 'attempts'}`];
  if (row.injected > 0) parts.push(`${row.injected} ${INJECTED_BY}`);
  if (row.hedges.length > 0) parts.push(hedgesText(row.hedges.length));
  return { text, label: parts.join(', ') };
}

/** `1 hedge`, `2 hedges`. */
export function hedgesText(count: number): string {
  return `${count} ${count === 1 ? 'hedge' : 'hedges'}`;
}

/** What names an attempt in titles: `attempt 2`, or for its hedge `hedge of attempt 2`. */
export function attemptName(attempt: Pick<AttemptRow, 'n' | 'hedge'>): string {
  return attempt.hedge ? `hedge of attempt ${attempt.n}` : `attempt ${attempt.n}`;
}

/**
 * An attempt's bar's title: what answered it, how long it took, when it was sent, the endpoint it
 * went to and whether the panel's fault injection answered it:
 * `attempt 1: 503 · 50 ms · 12:00:01.100 · to https://eu.api.example`.
 */
export function attemptTitle(attempt: AttemptRow): string {
  const answer =
    attempt.answeredBy === 'hedge'
      ? HEDGE_ANSWERED
      : (attempt.status ?? attempt.error?.name ?? attempt.outcome);
  const parts = [
    `${attemptName(attempt)}: ${answer}`,
    attempt.end === undefined ? 'running' : formatMs(attempt.end - attempt.start),
    clockTime(attempt.start),
  ];
  if (attempt.endpoint !== undefined) parts.push(`to ${attempt.endpoint}`);
  if (attempt.injected) parts.push(INJECTED_BY);
  return parts.join(' · ');
}

/** What an attempt's status cell says: the status, or how it ended without one. */
export function attemptStatusText(attempt: AttemptRow): string {
  if (attempt.answeredBy === 'hedge') return HEDGE_ANSWERED;
  if (attempt.status !== undefined) return String(attempt.status);
  if (attempt.outcome === 'pending') return 'pending';
  if (attempt.error) return attempt.error.code ?? attempt.error.name;
  return attempt.outcome;
}

/** The row's status in full: the final status, else how it stands (an error's code or name). */
export function rowStatusText(row: RequestRow): string {
  if (row.status !== undefined) return String(row.status);
  if (row.outcome === 'pending') return '…';
  const last = row.attempts[row.attempts.length - 1];
  if (last?.error) return last.error.code ?? last.error.name;
  return row.attempts.length === 0 ? '—' : 'failed';
}

/**
 * Errors without a status, in a word a narrow Status column can show (the full code and
 * message go in its title). Node's and undici's codes, and the DOM's error names.
 */
const ERROR_WORDS: Readonly<Record<string, string>> = {
  ECONNRESET: 'reset',
  UND_ERR_SOCKET: 'reset',
  EPIPE: 'reset',
  ECONNREFUSED: 'refused',
  ETIMEDOUT: 'timeout',
  UND_ERR_CONNECT_TIMEOUT: 'timeout',
  UND_ERR_HEADERS_TIMEOUT: 'timeout',
  UND_ERR_BODY_TIMEOUT: 'timeout',
  ECONNABORTED: 'timeout',
  TimeoutError: 'timeout',
  ENOTFOUND: 'DNS',
  EAI_AGAIN: 'DNS',
  AbortError: 'aborted',
  ERR_CANCELED: 'aborted',
  // fetch's network failure (a reset, a refused connection or CORS: the page cannot tell which).
  TypeError: 'network',
  ERR_NETWORK: 'network',
};

/** The Status column's text: the status, else a word for the error (`reset`, `timeout` …). */
export function rowStatusShort(row: RequestRow): string {
  if (row.status !== undefined || row.outcome === 'pending') return rowStatusText(row);
  const error = row.attempts[row.attempts.length - 1]?.error;
  if (!error) return rowStatusText(row);
  const known = [error.code, error.name].find((key) => key !== undefined && Object.hasOwn(ERROR_WORDS, key));
  return known === undefined ? 'error' : (ERROR_WORDS[known] as string);
}

/** The Status cell's title: the status or error in full, and how the request ended. */
export function rowStatusTitle(row: RequestRow): string {
  const error = row.status === undefined ? row.attempts[row.attempts.length - 1]?.error : undefined;
  const status = error
    ? `${error.code === undefined ? '' : `${error.code} `}(${error.name}: ${error.message})`
    : rowStatusText(row);
  return `${status} · ${outcomeLabel(row.outcome)}`;
}

/**
 * A request's short name, as a narrow list shows it: the last segment of its path (an id-like
 * one keeps its parent: `orders/1234`), and its query apart (`?page=*`), which may be cut where the
 * name may not. A row without a URL path keeps what it shows instead (an operation's name).
 */
export function shortName(row: Pick<RequestRow, 'origin' | 'path'>): { name: string; query: string } {
  if (row.origin === '' || !row.path.startsWith('/')) return { name: row.path, query: '' };
  const at = row.path.indexOf('?');
  const pathname = at < 0 ? row.path : row.path.slice(0, at);
  const query = at < 0 ? '' : row.path.slice(at);
  const segments = pathname.split('/').filter((segment) => segment !== '');
  const last = segments[segments.length - 1];
  if (last === undefined) return { name: '/', query };
  const parent = segments[segments.length - 2];
  const name = parent !== undefined && ID_LIKE.test(last) ? `${parent}/${last}` : last;
  return { name: `${name}${pathname.endsWith('/') ? '/' : ''}`, query };
}

/** A number, a UUID, a hex digest, or a mask: a segment that names a record, not a resource. */
const ID_LIKE = /^(?:\d+|[\da-f]{8}-[\da-f-]{27,}|[\da-f]{16,}|\*+)$/i;

/** The budget lane's count: `89 retries left`, `1 retry left`. */
export function budgetLabel(remaining: number): string {
  return `${remaining} ${remaining === 1 ? 'retry' : 'retries'} left`;
}

/** `12:03:04.567` in local time. */
export function clockTime(t: number): string {
  if (!Number.isFinite(t) || Math.abs(t) > 8.64e15) return '–';
  const d = new Date(t);
  const pad = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
}

/** A clock time to the second (`12:00:05`), for captions. */
export function clockSeconds(t: number): string {
  return clockTime(t).slice(0, 8);
}

/** A guard's state in words, for its lane's caption: `breaker open until 12:00:33`. */
export function guardStateText(state: GuardState): string {
  switch (state.kind) {
    case 'breaker-open':
      return state.until === undefined
        ? `breaker open since ${clockSeconds(state.since)}`
        : `breaker open until ${clockSeconds(state.until)}`;
    case 'breaker-half-open':
      return `breaker half-open (probing) since ${clockSeconds(state.since)}`;
    case 'budget-spent':
      return `retry budget spent since ${clockSeconds(state.since)}`;
    case 'parked':
      return `${state.retries === 1 ? '1 retry' : `${state.retries} retries`} parked since ${clockSeconds(state.since)}`;
    case 'quota-spent':
      return `quota spent until ${clockSeconds(state.until)}`;
  }
}
