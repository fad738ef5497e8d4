/**
 * The request list's filter: the filter every pattern is read with (filter.ts, which the page hook
 * carries too, to match fault rules) and the terms about where and how a request's attempts were
 * sent, which only the list reads: `endpoint:<text>`, any attempt (or hedge) sent to an endpoint
 * whose base URL holds the text, and `is:hedged`, any attempt hedged. A fault rule is matched as
 * its request starts, before any attempt, and refuses terms about attempts (shared/faults.ts), so
 * the page, which runs on every page the user opens (test/size-budget.test.ts), has no code for
 * them: they are taken out of the query here and the rest is the shared filter's.
 */

import {
  type CompiledFilter,
  compileFilter,
  type FilterCriteria,
  MAX_QUERY_LENGTH,
  REGEX_PREFIX,
} from './filter';
import { type FilterTerm, readWord, splitWords, wildcardMatcher } from './filter-terms';
import type { AttemptRow, RequestRow } from './timeline';

/** Whether any of its attempts was hedged: a second copy of it sent while it was still running. */
export const isHedged = (row: RequestRow): boolean => row.hedges.length > 0;

/**
 * `endpoint:eu.api`: whether any attempt or hedge went to an endpoint whose base URL holds the text
 * (a `*` in it as in a word); a bare `endpoint:` asks for any endpoint at all.
 */
function endpointTest(value: string): FilterTerm['test'] {
  const matches = wildcardMatcher(value);
  const sentTo = (attempt: AttemptRow) =>
    attempt.endpoint !== undefined && matches(attempt.endpoint.toLowerCase());
  return (row) => row.attempts.some(sentTo) || row.hedges.some(sentTo);
}

/** A word's test when it is one of the list's own terms (the body as the filter reads it). */
function attemptTest(body: string): FilterTerm['test'] | undefined {
  if (body === 'is:hedged') return isHedged;
  if (body.startsWith('endpoint:')) return endpointTest(body.slice('endpoint:'.length));
  return undefined;
}

/**
 * Compiles the list's criteria into one row test: {@link compileFilter}'s, and the list's own
 * terms, each a row must pass too (a leading `-` turns one around, as any other). A regular
 * expression (`re:`) is the shared filter's whole.
 */
export function compileListFilter(criteria: FilterCriteria): CompiledFilter {
  const text = criteria.text.trim();
  if (text.toLowerCase().startsWith(REGEX_PREFIX) || text.length > MAX_QUERY_LENGTH) {
    return compileFilter(criteria);
  }
  const own: FilterTerm[] = [];
  const rest: string[] = [];
  for (const word of splitWords(text)) {
    const { body, negated } = readWord(word);
    const test = attemptTest(body);
    if (test === undefined) rest.push(word);
    else own.push({ test, negated });
  }
  if (own.length === 0) return compileFilter(criteria);
  const shared = compileFilter({ ...criteria, text: rest.join(' ') });
  // An invalid query tests nothing, whatever else it holds (every row passes).
  if (shared.error !== undefined) return shared;
  return {
    test: (row) => shared.test(row) && own.every((term) => term.test(row) !== term.negated),
    active: true,
  };
}
