/**
 * The filter's terms: words separated by spaces, each of which a row must pass. A word is looked
 * for in the row's search text, which holds what the request went through as well as what it was
 * (`backoff`, `pacing`, `parked`, `breaker`, `retried`, `injected` …: {@link retryTerms}); a `*`
 * in a word stands for any run of characters within one field (`/api*orders`, `*.example.com`:
 * {@link wildcardMatcher}); `key:value` terms ask one thing exactly (`is:retried`, `is:injected`,
 * `status:5xx`, `outcome:exhausted,deadline`); a leading `-` turns any term around. Quotes keep
 * spaces in a word (`"retry budget"`).
 */

import type { RequestRow, RowOutcome } from './timeline';

/** One term of the query: a row passes it when `test(row) !== negated`. */
export interface FilterTerm {
  readonly test: (row: RequestRow) => boolean;
  readonly negated: boolean;
}

/** How each outcome a guard refused is named in the filter (what refused it). */
const REFUSED_BY: Readonly<Partial<Record<RowOutcome, string>>> = {
  'breaker-open': 'breaker',
  'budget-exhausted': 'budget',
  'rate-limited': 'limiter',
  'quota-spent': 'pacing',
  'bulkhead-rejected': 'bulkhead',
  throttled: 'throttle',
  'retry-after-too-long': 'retry-after',
  'origin-failing': 'parked',
};

/** Every outcome a row can have, for `outcome:` (and its error message). */
export const OUTCOMES: readonly RowOutcome[] = [
  'success',
  'exhausted',
  'not-retryable',
  'aborted',
  'deadline',
  'breaker-open',
  'budget-exhausted',
  'rate-limited',
  'quota-spent',
  'bulkhead-rejected',
  'throttled',
  'retry-after-too-long',
  'origin-failing',
  'pending',
];

/** Whether a guard refused the request (it ended without the answer it asked for, by a guard's say). */
export const isRefused = (row: RequestRow): boolean => REFUSED_BY[row.outcome] !== undefined;
/** Whether it was sent more than once, or waited to be. */
export const isRetried = (row: RequestRow): boolean => row.attempts.length > 1 || row.waits.length > 0;
/** Whether it ended without success (refusals included). */
export const isFailed = (row: RequestRow): boolean => row.outcome !== 'success' && row.outcome !== 'pending';
/** Whether it spent any time waiting: a retry's wait or a guard's hold. */
export const isWaited = (row: RequestRow): boolean => waitedMs(row) > 0;
/** Whether the panel's fault injection answered any of its attempts. */
export const isInjected = (row: RequestRow): boolean => row.injected > 0;

/** The milliseconds a request spent waiting: its retries' delays and its guards' holds. */
export function waitedMs(row: RequestRow): number {
  let sum = 0;
  for (const wait of row.waits) sum += wait.delay;
  for (const wait of row.guardWaits) sum += wait.waited;
  return sum;
}

/** The `is:` words. */
const IS: Readonly<Record<string, (row: RequestRow) => boolean>> = {
  retried: isRetried,
  failed: isFailed,
  refused: isRefused,
  waited: isWaited,
  injected: isInjected,
  pending: (row) => row.outcome === 'pending',
  success: (row) => row.outcome === 'success',
  truncated: (row) => row.truncated !== undefined,
};

/** What a request went through, as words its search text holds: wait reasons, guards, refusals. */
export function retryTerms(row: RequestRow): string[] {
  const terms: string[] = [];
  for (const wait of row.waits) terms.push(wait.reason);
  for (const wait of row.guardWaits) terms.push(wait.guard);
  const refused = REFUSED_BY[row.outcome];
  if (refused !== undefined) terms.push(refused);
  if (isRetried(row)) terms.push('retried');
  if (isInjected(row)) terms.push('injected');
  return terms;
}

/** Splits the query into words; quotes keep a phrase together (and are dropped). */
export function splitWords(text: string): string[] {
  return [...text.matchAll(/-?"[^"]*"?|\S+/g)].map((match) => match[0]);
}

/** A word of the query as a term reads it: lower case, quotes dropped, and whether a `-` turns it around. */
export function readWord(word: string): { readonly body: string; readonly negated: boolean } {
  const negated = word.length > 1 && word.startsWith('-');
  return { body: (negated ? word.slice(1) : word).replaceAll('"', '').toLowerCase(), negated };
}

/**
 * Reads the query's terms, or why one cannot be read. `search(row)` is the row's lower-case
 * search text, which a plain word is looked for in.
 */
export function parseTerms(
  text: string,
  search: (row: RequestRow) => string,
): FilterTerm[] | { readonly error: string } {
  const terms: FilterTerm[] = [];
  for (const word of splitWords(text)) {
    const { body, negated } = readWord(word);
    if (body === '') continue;
    const test = keyedTest(body) ?? wordTest(body, search);
    if (typeof test === 'string') return { error: test };
    terms.push({ test, negated });
  }
  return terms;
}

/** A plain word's test: a substring of the search text, or with a `*`, a {@link wildcardMatcher}. */
function wordTest(body: string, search: (row: RequestRow) => string): (row: RequestRow) => boolean {
  if (!body.includes('*')) return (row) => search(row).includes(body);
  const matches = wildcardMatcher(body);
  return (row) => matches(search(row));
}

/**
 * Whether `text` holds `word`, each `*` of which stands for any run of characters (none too), in
 * one of its lines (the search text's fields: a `*` never spans two). Case as given; unanchored,
 * as a plain word is.
 *
 * No regular expression is built from the word (it is user input, as a fault rule's pattern is,
 * and runs of `.*` backtrack): the parts between the stars are found in order with `indexOf`,
 * each at its leftmost place after the one before. For a pattern whose only wildcard is `*` the
 * leftmost place is never worse than a later one (it leaves the most room for the parts after
 * it), so no choice is tried twice: a line is searched once, part after part, and given up as
 * soon as a part lies beyond it. A 100 000-character URL against a word of 500 stars costs at
 * most one pass over the URL, not a search per way of splitting it.
 */
export function wildcardMatcher(word: string): (text: string) => boolean {
  const parts = word.split('*').filter((part) => part !== '');
  const [first, ...rest] = parts;
  if (first === undefined) return () => true;
  return (text) => {
    let from = 0;
    for (;;) {
      const at = text.indexOf(first, from);
      if (at < 0) return false;
      const newline = text.indexOf('\n', at);
      const end = newline < 0 ? text.length : newline;
      let next = at + first.length;
      let inLine = true;
      for (const part of rest) {
        const found = text.indexOf(part, next);
        // Not after this place: not after any later one either.
        if (found < 0) return false;
        next = found + part.length;
        if (next > end) {
          inLine = false;
          break;
        }
      }
      if (inLine) return true;
      from = end + 1;
    }
  };
}

/** A `key:value` term's test, an error for a known key with a bad value, or undefined for a plain word. */
function keyedTest(body: string): ((row: RequestRow) => boolean) | string | undefined {
  const colon = body.indexOf(':');
  if (colon <= 0) return undefined;
  const key = body.slice(0, colon);
  const value = body.slice(colon + 1);
  switch (key) {
    case 'is': {
      // Its own words only: `is:__proto__` would find every object's prototype, and no test.
      const test = Object.hasOwn(IS, value) ? IS[value] : undefined;
      return test ?? `Unknown is:${value}; use one of ${Object.keys(IS).join(', ')}.`;
    }
    case 'status':
      return statusTest(value);
    case 'outcome':
      return outcomeTest(value);
    case 'method':
      return (row) => row.method.toLowerCase() === value;
    case 'client':
      return (row) => row.client.toLowerCase() === value;
    default:
      // `http://…` and the like: not a key, a word.
      return undefined;
  }
}

/** `status:503`, `status:5xx`, `status:429,503`: the final status or any attempt's. */
function statusTest(value: string): ((row: RequestRow) => boolean) | string {
  const patterns = value.split(',').filter((part) => part !== '');
  if (patterns.length === 0 || !patterns.every((part) => /^[1-5][0-9x]{2}$/.test(part))) {
    return `Expected status:NNN (e.g. status:503, status:5xx), got status:${value}.`;
  }
  const matches = (status: number | undefined) =>
    status !== undefined &&
    patterns.some((part) => [...part].every((digit, at) => digit === 'x' || digit === String(status)[at]));
  return (row) => matches(row.status) || row.attempts.some((attempt) => matches(attempt.status));
}

/** `outcome:exhausted,deadline`: any of the outcomes named. */
function outcomeTest(value: string): ((row: RequestRow) => boolean) | string {
  const wanted = value.split(',').filter((part) => part !== '');
  const unknown = wanted.find((part) => !OUTCOMES.includes(part as RowOutcome));
  if (wanted.length === 0 || unknown !== undefined) {
    return `Unknown outcome ${unknown ?? '(none)'}; use one or more of ${OUTCOMES.join(', ')}, separated by commas.`;
  }
  const set = new Set(wanted);
  return (row) => set.has(row.outcome);
}

/** The query with `term` added at its end, or taken out when it is there (a chip's toggle). */
export function toggleTerm(text: string, term: string): string {
  const words = splitWords(text.trim());
  const kept = words.filter((word) => word.toLowerCase() !== term.toLowerCase());
  return (kept.length === words.length ? [...kept, term] : kept).join(' ');
}

/** Whether the query has `term` as one of its words. */
export function hasTerm(text: string, term: string): boolean {
  return splitWords(text.trim()).some((word) => word.toLowerCase() === term.toLowerCase());
}
