/**
 * How the panel words times, waits and outcomes. Pure, so the waterfall's labels and the detail
 * pane's explanations are tested as strings.
 */

import type { AttemptRow, GuardWaitRow, RequestRow, RowOutcome, WaitRow } from '../model/timeline';

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

/** The waterfall's label of a guard wait: `limiter 100 ms`, `bulkhead 30 ms`, `pacing 1 s`. */
export function guardLabel(wait: GuardWaitRow): string {
  return `${wait.guard} ${formatMs(wait.waited)}`;
}

/** How a wait's delay was computed, step by step, for the detail pane. */
export function waitComputation(wait: WaitRow): string[] {
  const backoff = `${wait.strategy} backoff ${formatMs(wait.raw)} → capped ${formatMs(wait.capped)}`;
  if (wait.reason === 'backoff') {
    return [
      wait.jitter === 'none'
        ? `${backoff} → no jitter → ${formatMs(wait.delay)}`
        : `${backoff} → ${wait.jitter} jitter → ${formatMs(wait.delay)}`,
    ];
  }
  const lines = [
    wait.hint
      ? `${hintHeader(wait.hint.source)} header asked for ${formatMs(wait.hint.delay)}`
      : `${hintHeader(wait.reason === 'retry-after' ? 'retry-after' : undefined)} hint`,
    `${backoff} (before ${wait.jitter === 'none' ? 'no' : wait.jitter} jitter)`,
    `waited ${formatMs(wait.delay)}, the longer of the two`,
  ];
  return lines;
}

const OUTCOME_LABELS: Readonly<Record<RowOutcome, string>> = {
  success: 'success',
  exhausted: 'retries exhausted',
  'not-retryable': 'not retryable',
  aborted: 'aborted',
  deadline: 'deadline exceeded',
  'breaker-open': 'breaker open',
  'budget-exhausted': 'budget exhausted',
  'rate-limited': 'rate limited',
  'bulkhead-rejected': 'bulkhead full',
  'retry-after-too-long': 'Retry-After too long',
  pending: 'pending',
};

export function outcomeLabel(outcome: RowOutcome): string {
  return OUTCOME_LABELS[outcome];
}

/**
 * The marker a request refused by a guard gets at its end (such a request may have no attempt
 * bar at all, and nothing else would show why it stopped).
 */
export function refusalLabel(row: RequestRow): string | undefined {
  switch (row.outcome) {
    case 'breaker-open':
      return 'breaker';
    case 'budget-exhausted':
      return 'budget';
    case 'rate-limited':
      return 'limiter';
    case 'bulkhead-rejected':
      return 'bulkhead';
    case 'retry-after-too-long':
      return 'Retry-After too long';
    default:
      return undefined;
  }
}

/** What an attempt's status cell says: the status, or how it ended without one. */
export function attemptStatusText(attempt: AttemptRow): string {
  if (attempt.status !== undefined) return String(attempt.status);
  if (attempt.outcome === 'pending') return 'pending';
  if (attempt.error) return attempt.error.code ?? attempt.error.name;
  return attempt.outcome;
}

/** The row's status cell: the final status, else a short word for how it stands. */
export function rowStatusText(row: RequestRow): string {
  if (row.status !== undefined) return String(row.status);
  if (row.outcome === 'pending') return '…';
  const last = row.attempts[row.attempts.length - 1];
  if (last?.error) return last.error.code ?? last.error.name;
  return row.attempts.length === 0 ? '—' : 'failed';
}

/** `12:03:04.567` in local time. */
export function clockTime(t: number): string {
  if (!Number.isFinite(t) || Math.abs(t) > 8.64e15) return '–';
  const d = new Date(t);
  const pad = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
}
