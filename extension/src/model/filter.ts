/**
 * The panel's filters: a text query (words, `*` wildcards and `key:value` terms, see
 * filter-terms.ts, or `re:pattern` for a regular expression) and
 * exact choices of origin, client and outcome. Each row's search text is built once and kept
 * per row object (rows are immutable, so a changed row is a new key), which keeps filtering
 * 10 000 rows to one string test per row.
 */

import { parseTerms, retryTerms } from './filter-terms';
import type { RequestRow, RowOutcome, Timeline } from './timeline';

/** What the user chose. An absent choice matches every row. */
export interface FilterCriteria {
  /**
   * Words, each a substring (case-insensitive; `*` for any run of characters) or a `key:value` term,
   * or `re:pattern` (a regular expression, case-insensitive, `^`/`$` per field).
   */
  readonly text: string;
  /** A row's URL origin (`''` for rows without an absolute URL). */
  readonly origin?: string;
  readonly client?: string;
  readonly outcome?: RowOutcome;
}

/** A parsed text query. */
export type TextQuery =
  | { readonly kind: 'all' }
  | { readonly kind: 'substring'; readonly needle: string }
  | { readonly kind: 'regex'; readonly regex: RegExp }
  | { readonly kind: 'invalid'; readonly error: string };

/** A compiled filter: `error` explains a text query that could not be used (it then matches every row). */
export interface CompiledFilter {
  readonly test: (row: RequestRow) => boolean;
  /** Whether any criterion narrows the rows. */
  readonly active: boolean;
  readonly error?: string;
}

/** The longest text query accepted: a pasted novel is not a filter. */
export const MAX_QUERY_LENGTH = 1000;

/**
 * What marks a regular expression. Not `/pattern/flags`: what users filter by most is a URL path,
 * and `/api/ids` or `/v2/sms` read as a pattern with flags (or a bad one) instead of the path they
 * are. No URL path or method starts with `re:`.
 */
export const REGEX_PREFIX = 're:';

/**
 * The filter box's hint: what it searches and how to write a regular expression. Literal text
 * only, `re:` spelled out rather than built from {@link REGEX_PREFIX}: esbuild keeps a string
 * built from a binding in every bundle that imports this module (it cannot prove it free of side
 * effects there), and the page hook, which imports {@link compileFilter}, has no use for it.
 */
export const FILTER_HELP =
  'Words each narrow the list: method, URL, status, outcome, client, error name, or what a request ' +
  'went through (backoff, retry-after, pacing, parked, limiter, bulkhead, breaker, budget, retried, ' +
  'injected). * in a word matches any run of characters: /api/*/items, *.example.com. ' +
  'is:retried, is:failed, is:refused, is:waited, is:injected, is:hedged, is:pending; status:503 or ' +
  'status:5xx; outcome:exhausted,deadline; method:POST; client:ky; endpoint:eu.api (an attempt sent ' +
  'to an endpoint holding it). -word or -is:retried leaves matches out. ' +
  'Start with re: for a regular expression (^ and $ match each field), e.g. re:(fetch|ky)-flaky. ' +
  'Shortcut: / or Ctrl+F.';

/** Reads the text box: empty, a substring, or a regular expression (invalid ones are reported, never thrown). */
export function parseTextQuery(text: string): TextQuery {
  const trimmed = text.trim();
  if (trimmed === '') return { kind: 'all' };
  if (trimmed.length > MAX_QUERY_LENGTH) {
    return { kind: 'invalid', error: `The filter is longer than ${MAX_QUERY_LENGTH} characters.` };
  }
  if (!trimmed.toLowerCase().startsWith(REGEX_PREFIX)) {
    return { kind: 'substring', needle: trimmed.toLowerCase() };
  }
  const pattern = trimmed.slice(REGEX_PREFIX.length).trim();
  if (pattern === '') return { kind: 'all' };
  try {
    // Case-insensitive, as the substring search is; multiline, so `^` and `$` match each field
    // (the search text has one per line). No `g` or `y`, which make `test` stateful.
    return { kind: 'regex', regex: new RegExp(pattern, 'im') };
  } catch (error) {
    return { kind: 'invalid', error: `Invalid regular expression: ${(error as Error).message}` };
  }
}

interface Haystack {
  readonly raw: string;
  readonly lower: string;
}

const haystacks = new WeakMap<RequestRow, Haystack>();

/**
 * What a text query searches in a row: method, URL, final and per-attempt statuses, outcome,
 * client, operation and error names, one field per line.
 */
export function searchText(row: RequestRow): string {
  return haystack(row).raw;
}

function haystack(row: RequestRow): Haystack {
  let found = haystacks.get(row);
  if (found) return found;
  const fields = new Set<string>([row.method, row.url, row.outcome, row.client]);
  if (row.status !== undefined) fields.add(String(row.status));
  if (row.operation !== undefined) fields.add(row.operation);
  if (row.error) fields.add(row.error.name);
  for (const attempt of row.attempts) {
    if (attempt.status !== undefined) fields.add(String(attempt.status));
    if (attempt.error) fields.add(attempt.error.name);
  }
  for (const term of retryTerms(row)) fields.add(term);
  fields.delete('');
  const raw = [...fields].join('\n');
  found = { raw, lower: raw.toLowerCase() };
  haystacks.set(row, found);
  return found;
}

/**
 * Compiles the criteria into one row test: what a fault rule's pattern is read with. The request
 * list adds the terms about attempts' endpoints and hedges (attempt-terms.ts `compileListFilter`).
 */
export function compileFilter(criteria: FilterCriteria): CompiledFilter {
  const text = compileText(criteria.text);
  const { origin, client, outcome } = criteria;
  const textTest = text.test;
  const active =
    textTest !== undefined || origin !== undefined || client !== undefined || outcome !== undefined;
  const test = (row: RequestRow): boolean =>
    (origin === undefined || row.origin === origin) &&
    (client === undefined || row.client === client) &&
    (outcome === undefined || row.outcome === outcome) &&
    (textTest === undefined || textTest(row));
  return text.error === undefined ? { test, active } : { test, active, error: text.error };
}

type RowTest = (row: RequestRow) => boolean;

/**
 * The text box as one row test: `re:pattern` as before, else its terms (see {@link parseTerms}),
 * every one of which a row must pass. An invalid query tests nothing (every row passes).
 */
function compileText(text: string): { readonly test?: RowTest; readonly error?: string } {
  const trimmed = text.trim();
  if (trimmed.toLowerCase().startsWith(REGEX_PREFIX) || trimmed.length > MAX_QUERY_LENGTH) {
    const query = parseTextQuery(text);
    if (query.kind === 'regex') return { test: (row) => query.regex.test(haystack(row).raw) };
    return query.kind === 'invalid' ? { error: query.error } : {};
  }
  const terms = parseTerms(trimmed, (row) => haystack(row).lower);
  if ('error' in terms) return { error: terms.error };
  if (terms.length === 0) return {};
  return {
    test: (row) => {
      for (const term of terms) if (term.test(row) === term.negated) return false;
      return true;
    },
  };
}
/** The rows that pass; the same array when nothing narrows them. */
export function filterRows(
  rows: readonly RequestRow[],
  criteria: FilterCriteria,
): { readonly rows: readonly RequestRow[]; readonly error?: string } {
  const filter = compileFilter(criteria);
  const kept = filter.active ? rows.filter(filter.test) : rows;
  return filter.error === undefined ? { rows: kept } : { rows: kept, error: filter.error };
}

/** The values the origin, client and outcome selects offer, each sorted. */
export interface FilterChoices {
  readonly origins: readonly string[];
  readonly clients: readonly string[];
  readonly outcomes: readonly RowOutcome[];
}

export function filterChoices(timeline: Pick<Timeline, 'rows'>): FilterChoices {
  const origins = new Set<string>();
  const clients = new Set<string>();
  const outcomes = new Set<RowOutcome>();
  for (const row of timeline.rows) {
    origins.add(row.origin);
    clients.add(row.client);
    outcomes.add(row.outcome);
  }
  return { origins: [...origins].sort(), clients: [...clients].sort(), outcomes: [...outcomes].sort() };
}
