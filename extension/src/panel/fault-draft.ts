/**
 * The Faults tab's rule form as data: what the user typed (a method, a URL pattern in the filter's
 * syntax, the steps in their one-line form, a probability in percent) read into a rule, or into
 * what is wrong with each field; and a rule read back into the form, to edit it.
 */

import type { RequestRow } from '../model/timeline';
import { formatSteps, parseSteps } from '../shared/fault-shorthand';
import { type FaultRule, requestMatcher, ruleMatcher } from '../shared/faults';

/** The methods the form offers; `''` is any method. */
export const RULE_METHODS = ['', 'GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'] as const;

/** The form's fields, as typed. */
export interface RuleDraft {
  /** One of {@link RULE_METHODS}; `''` for any method. */
  readonly method: string;
  readonly url: string;
  readonly steps: string;
  readonly percent: string;
}

export const EMPTY_DRAFT: RuleDraft = { method: '', url: '', steps: '', percent: '100' };

/** What is wrong with each field, in words to show beside it. */
export interface DraftErrors {
  readonly url?: string;
  readonly steps?: string;
  readonly percent?: string;
}

/** A draft read: its rule when every field reads (no steps yet is no error, and no rule). */
export interface DraftReading {
  readonly rule?: FaultRule;
  readonly errors: DraftErrors;
}

/**
 * Reads `draft` into a rule with `base`'s id (and its on/off state, when editing one). The steps go
 * through `parseSteps`, the pattern through `requestMatcher`, the page's own test (so a term a
 * request answers only once sent, `status:503`, is refused as it is typed); the whole set is
 * checked later, with `validateFaultRules`, when it is sent.
 */
export function readDraft(draft: RuleDraft, base: Pick<FaultRule, 'id' | 'enabled'>): DraftReading {
  const errors: { -readonly [K in keyof DraftErrors]: DraftErrors[K] } = {};
  const url = draft.url.trim();
  const matcher = requestMatcher(url);
  if (typeof matcher === 'string') errors.url = matcher;
  const steps = draft.steps.trim() === '' ? undefined : parseSteps(draft.steps);
  if (steps?.ok === false) errors.steps = steps.error;
  const percent = draft.percent.trim() === '' ? Number.NaN : Number(draft.percent);
  if (!(percent >= 0 && percent <= 100)) errors.percent = 'Expected a percentage from 0 to 100.';
  if (steps?.ok !== true || Object.keys(errors).length > 0) return { errors };
  // To a hundredth of a percent, as draftOf shows it: 33.3 is 0.333, not 0.33299999999999996, so
  // saving an edit that left the field alone leaves the rule alone.
  const probability = Math.round(percent * 100) / 10_000;
  const rule: FaultRule = {
    id: base.id,
    url,
    steps: steps.value,
    ...(draft.method === '' ? {} : { method: draft.method }),
    ...(probability < 1 ? { probability } : {}),
    ...(base.enabled === false ? { enabled: false } : {}),
  };
  return { rule, errors };
}

/** A rule as the form shows it, to edit. */
export function draftOf(rule: FaultRule): RuleDraft {
  return {
    method: rule.method ?? '',
    url: rule.url,
    steps: formatSteps(rule.steps) ?? '',
    percent: String(Math.round((rule.probability ?? 1) * 10_000) / 100),
  };
}

/** An id no rule of `rules` has: one past the highest `rule-N`, so a removed rule's is not reused. */
export function nextRuleId(rules: readonly FaultRule[]): string {
  let highest = 0;
  for (const { id } of rules) {
    const match = /^rule-(\d+)$/.exec(id);
    if (match) highest = Math.max(highest, Number(match[1]));
  }
  return `rule-${highest + 1}`;
}

/**
 * How many of `rows` a rule's method (`''`: any) and pattern would fault, or `undefined` while the
 * pattern is no rule's. Each row is tested as the page tests a request, as it was when it started
 * (`ruleMatcher`): a row that later ran out of retries is not matched by `exhausted`, as its request
 * would not have been.
 */
export function matchCount(rows: readonly RequestRow[], method: string, url: string): number | undefined {
  const matches = ruleMatcher({ url, ...(method === '' ? {} : { method }) });
  return typeof matches === 'string' ? undefined : rows.filter(matches).length;
}

/** A rule's steps in the one-line form, or their count where that form cannot say them. */
export function stepsText(rule: FaultRule): string {
  const count = rule.steps.length;
  return formatSteps(rule.steps) ?? `${count} step${count === 1 ? '' : 's'}`;
}

/** A rule's probability in percent, as `mswSnippet` writes it: `12.5 %`. */
export function percentText(rule: FaultRule): string {
  return `${Math.round((rule.probability ?? 1) * 1000) / 10} %`;
}

/** A rule in one line, for buttons' names: `GET /api/* → 503, 503, 200`. */
export function describeRule(rule: FaultRule): string {
  const chance = rule.probability === undefined ? '' : ` (${percentText(rule)})`;
  return `${rule.method ?? 'Any method'} ${rule.url === '' ? 'every URL' : rule.url} → ${stepsText(rule)}${chance}`;
}
