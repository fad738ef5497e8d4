/**
 * Fault rules: what the panel's Faults tab makes, the worker keeps per tab and the page hook
 * applies. A rule names requests with the panel's filter syntax (and a method), and answers their
 * attempts with a sequence of steps; steps are `@retryline/core`'s fault steps, named after
 * `@retryline/msw`'s (`status`, `networkError`, `slow`), plus msw's `passthrough` (the real
 * server answers). Everything arriving here crossed a message boundary, so it is checked field by
 * field and rebuilt ({@link validateFaultRules}); the panel checks what the user typed with the
 * same function before sending it.
 *
 * Semantics, in one place:
 * - **Sequence**: attempt n of a request takes step n; every attempt past the end takes the last
 *   step. `503, 503, passthrough` makes a request take 3 attempts, the third answered by the
 *   server.
 * - **Rule order**: the first enabled rule whose method and URL match, and whose draw succeeds,
 *   applies to the request, for all its attempts.
 * - **Probability**: the share of matching requests a rule applies to, drawn once per request
 *   (a request takes a rule's whole sequence or none of it).
 */

import type {
  FaultQuery,
  FaultStep,
  NetworkErrorFault,
  SlowFault,
  StatusFault,
} from '@retryline/core/instrument';
import { compileFilter, REGEX_PREFIX } from '../model/filter';
import { readWord, splitWords } from '../model/filter-terms';
import { startedRow } from '../model/start-row';
import type { RequestRow } from '../model/timeline';

export type { FaultStep, NetworkErrorFault, SlowFault, StatusFault };

/** The attempt is sent to the server as usual (msw's `passthrough()`). */
export interface PassthroughFault {
  readonly step: 'passthrough';
}

/** One step of a rule's sequence. */
export type RuleStep = FaultStep | PassthroughFault;

/** One rule of the Faults tab. */
export interface FaultRule {
  /** The panel's id for the rule (list keys, edits). 1 to {@link MAX_ID_LENGTH} characters. */
  readonly id: string;
  /**
   * Which requests: a query in the panel's filter syntax (its filter box's), tested on the row the
   * panel shows for the request as it starts (method, URL with query values masked, client), so
   * typing it in the filter box shows the rows it would fault: `/api/orders`, `re:/api/\d+$`,
   * `/api/ -health`, `client:ky`. Empty: every request.
   */
  readonly url: string;
  /** Only requests with this method (upper case). @default any method */
  readonly method?: string;
  /** Attempt n takes step n, the last step every attempt past the end. 1 to {@link MAX_STEPS}. */
  readonly steps: readonly RuleStep[];
  /** The share of matching requests the rule applies to, in [0, 1], drawn once per request. @default 1 */
  readonly probability?: number;
  /** Kept in the list but not applied when `false`. @default true */
  readonly enabled?: boolean;
}

/** A tab's rules, in the order they are tried. */
export interface FaultRuleSet {
  readonly rules: readonly FaultRule[];
  /**
   * Seeds the page's draws for rules with a probability (core's `seededRandom`), so a session can
   * be replayed. @default a random draw per request
   */
  readonly seed?: number;
}

/** The most rules in one set. */
export const MAX_RULES = 50;
/** The most steps in one rule's sequence. */
export const MAX_STEPS = 20;
/** The longest rule id. */
export const MAX_ID_LENGTH = 100;
/** The most headers on one status step. */
export const MAX_STEP_HEADERS = 20;
/** The longest body of a status step, in characters. */
export const MAX_BODY_LENGTH = 16 * 1024;
/** The longest header value or reason phrase, in characters. */
export const MAX_VALUE_LENGTH = 1024;
/** The longest wait of a `slow` step: ten minutes. */
export const MAX_SLOW_MS = 600_000;

// Marked pure, so that a bundle which never uses it (the page hook) leaves it out.
/** No rule: what a page is told when the panel closes. */
export const NO_RULES: FaultRuleSet = /* @__PURE__ */ Object.freeze({
  rules: /* @__PURE__ */ Object.freeze([]),
});

type Checked<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: string };

const fail = (error: string): { ok: false; error: string } => ({ ok: false, error });

/**
 * An own data property, read without running a getter or walking the prototype chain (a message
 * from a page may be a structured clone of anything).
 */
function own(object: object, key: string): unknown {
  const descriptor = Object.getOwnPropertyDescriptor(object, key);
  return descriptor !== undefined && 'value' in descriptor ? descriptor.value : undefined;
}

const isRecord = (value: unknown): value is object =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const describe = (value: unknown) => (typeof value === 'string' ? JSON.stringify(value) : String(value));

// RFC 9110 §5.1 and §9.1: field names and methods are tokens.
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
// RFC 9110 §5.5 (field-value) and RFC 9112 §4 (reason-phrase): HTAB, SP, VCHAR and obs-text, one
// byte each. Fetch's Headers and Response refuse anything else (a character above U+00FF is no
// byte), so a step holding one could not be answered.
const NOT_FIELD_TEXT = /[^\t\x20-\x7e\x80-\xff]/u;

/**
 * Why `value` cannot be sent as a header value or a reason phrase (the one-line form's
 * `name=value` words are checked with it too), or `undefined` when it can.
 */
export function fieldTextProblem(value: string): string | undefined {
  if (value.length > MAX_VALUE_LENGTH)
    return `expected at most ${MAX_VALUE_LENGTH} characters, got ${value.length}`;
  const found = NOT_FIELD_TEXT.exec(value)?.[0];
  if (found === undefined) return undefined;
  return /[\r\n\0]/.test(found)
    ? 'expected one line, got a CR, LF or NUL'
    : `expected ASCII or Latin-1 text (RFC 9110 §5.5), got ${JSON.stringify(found)}`;
}
// Fetch's Response takes no body with these ("null body status").
const NULL_BODY_STATUSES = [204, 205, 304];

function checkHeaders(value: unknown, at: string): Checked<Record<string, string>> {
  if (!isRecord(value)) return fail(`${at}.headers: expected an object of header values`);
  const names = Object.keys(value);
  if (names.length > MAX_STEP_HEADERS) return fail(`${at}.headers: more than ${MAX_STEP_HEADERS} headers`);
  // Without a prototype: no name is a setter or an inherited key. `__proto__` (in any case, as names
  // are stored lower-cased) is refused all the same: a plain object made from the set would lose it.
  const headers: Record<string, string> = Object.create(null);
  for (const name of names) {
    const field = own(value, name);
    const key = name.toLowerCase();
    if (!TOKEN.test(name) || key === '__proto__')
      return fail(`${at}.headers: ${describe(name)} is no header name`);
    // RFC 9110 §5.1: names are case-insensitive, so these name one field, and one value would be lost.
    if (key in headers) return fail(`${at}.headers: ${describe(name)} is there twice (names ignore case)`);
    const problem = typeof field === 'string' ? fieldTextProblem(field) : 'expected a string';
    if (problem !== undefined) return fail(`${at}.headers[${JSON.stringify(name)}]: ${problem}`);
    headers[key] = field as string;
  }
  return { ok: true, value: headers };
}

function checkStatus(value: object, at: string): Checked<StatusFault> {
  const status = own(value, 'status');
  if (typeof status !== 'number' || !Number.isInteger(status) || status < 200 || status > 599) {
    return fail(`${at}.status: expected an HTTP status in [200, 599], got ${describe(status)}`);
  }
  const step: { -readonly [K in keyof StatusFault]: StatusFault[K] } = { step: 'status', status };
  const statusText = own(value, 'statusText');
  if (statusText !== undefined) {
    const problem =
      typeof statusText === 'string' ? fieldTextProblem(statusText) : 'expected a reason phrase';
    if (problem !== undefined) return fail(`${at}.statusText: ${problem}`);
    step.statusText = statusText as string;
  }
  const body = own(value, 'body');
  if (body !== undefined) {
    if (typeof body !== 'string' || body.length > MAX_BODY_LENGTH) {
      return fail(`${at}.body: expected a string of at most ${MAX_BODY_LENGTH} characters`);
    }
    if (body !== '' && NULL_BODY_STATUSES.includes(status))
      return fail(`${at}.body: a ${status} has no body`);
    if (body !== '') step.body = body;
  }
  const headers = own(value, 'headers');
  if (headers !== undefined) {
    const checked = checkHeaders(headers, at);
    if (!checked.ok) return checked;
    if (Object.keys(checked.value).length > 0) step.headers = checked.value;
  }
  return { ok: true, value: step };
}

/** One step, checked and rebuilt; `inner`: the answer of a `slow` step. */
function checkStep(value: unknown, at: string, inner = false): Checked<RuleStep> {
  if (!isRecord(value)) return fail(`${at}: expected a step object`);
  const kind = own(value, 'step');
  switch (kind) {
    case 'status':
      return checkStatus(value, at);
    case 'networkError':
    case 'passthrough':
      return { ok: true, value: { step: kind } };
    case 'slow': {
      if (inner) return fail(`${at}: a slow step's answer cannot wait again`);
      const ms = own(value, 'ms');
      if (typeof ms !== 'number' || !Number.isInteger(ms) || ms < 0 || ms > MAX_SLOW_MS) {
        return fail(`${at}.ms: expected whole milliseconds in [0, ${MAX_SLOW_MS}], got ${describe(ms)}`);
      }
      const answer = own(value, 'answer');
      if (answer === undefined) return { ok: true, value: { step: 'slow', ms } };
      const checked = checkStep(answer, `${at}.answer`, true);
      if (!checked.ok) return checked;
      // Waiting, then passing the attempt on, is a slow step without an answer.
      if (checked.value.step === 'passthrough') return { ok: true, value: { step: 'slow', ms } };
      return {
        ok: true,
        value: { step: 'slow', ms, answer: checked.value as StatusFault | NetworkErrorFault },
      };
    }
    default:
      return fail(
        `${at}.step: expected 'status', 'networkError', 'slow' or 'passthrough', got ${describe(kind)}`,
      );
  }
}

function checkRule(value: unknown, at: string): Checked<FaultRule> {
  if (!isRecord(value)) return fail(`${at}: expected a rule object`);
  const id = own(value, 'id');
  if (typeof id !== 'string' || id.length === 0 || id.length > MAX_ID_LENGTH) {
    return fail(`${at}.id: expected 1 to ${MAX_ID_LENGTH} characters`);
  }
  const url = own(value, 'url');
  if (typeof url !== 'string') return fail(`${at}.url: expected the filter text, got ${describe(url)}`);
  const matcher = requestMatcher(url);
  if (typeof matcher === 'string') return fail(`${at}.url: ${matcher}`);
  const rule: { -readonly [K in keyof FaultRule]: FaultRule[K] } = { id, url: url.trim(), steps: [] };
  const method = own(value, 'method');
  if (method !== undefined) {
    if (typeof method !== 'string' || !TOKEN.test(method))
      return fail(`${at}.method: expected a method name`);
    rule.method = method.toUpperCase();
  }
  const steps = own(value, 'steps');
  if (!Array.isArray(steps) || steps.length === 0 || steps.length > MAX_STEPS) {
    return fail(`${at}.steps: expected 1 to ${MAX_STEPS} steps`);
  }
  const checked: RuleStep[] = [];
  for (let index = 0; index < steps.length; index += 1) {
    const step = checkStep(steps[index], `${at}.steps[${index}]`);
    if (!step.ok) return step;
    checked.push(step.value);
  }
  rule.steps = checked;
  const probability = own(value, 'probability');
  if (probability !== undefined) {
    if (typeof probability !== 'number' || !(probability >= 0 && probability <= 1)) {
      return fail(`${at}.probability: expected a number in [0, 1], got ${describe(probability)}`);
    }
    if (probability < 1) rule.probability = probability;
  }
  const enabled = own(value, 'enabled');
  if (enabled !== undefined && typeof enabled !== 'boolean') return fail(`${at}.enabled: expected a boolean`);
  if (enabled === false) rule.enabled = false;
  return { ok: true, value: rule };
}

/**
 * Checks a rule set from anywhere (the user, a message): the set rebuilt with only known fields
 * (method upper-cased, header names lower-cased, defaults left out), or the first problem, named by
 * its path (`rules[0].steps[1].status: expected …`).
 */
export function validateFaultRules(value: unknown): Checked<FaultRuleSet> {
  if (!isRecord(value)) return fail('expected { rules: [...] }');
  const rules = own(value, 'rules');
  if (!Array.isArray(rules) || rules.length > MAX_RULES)
    return fail(`rules: expected at most ${MAX_RULES} rules`);
  const checked: FaultRule[] = [];
  const ids = new Set<string>();
  for (let index = 0; index < rules.length; index += 1) {
    const rule = checkRule(rules[index], `rules[${index}]`);
    if (!rule.ok) return rule;
    if (ids.has(rule.value.id)) return fail(`rules[${index}].id: ${JSON.stringify(rule.value.id)} is taken`);
    ids.add(rule.value.id);
    checked.push(rule.value);
  }
  const seed = own(value, 'seed');
  if (seed !== undefined && (typeof seed !== 'number' || !Number.isSafeInteger(seed))) {
    return fail(`seed: expected an integer, got ${describe(seed)}`);
  }
  return { ok: true, value: seed === undefined ? { rules: checked } : { rules: checked, seed } };
}

/** {@link validateFaultRules}'s set, or `undefined`. */
export function parseFaultRules(value: unknown): FaultRuleSet | undefined {
  const checked = validateFaultRules(value);
  return checked.ok ? checked.value : undefined;
}

/** What a rule's pattern is tested on: the request as core asks about it. */
export type RequestFacts = Pick<FaultQuery, 'client' | 'method' | 'url' | 'requestId'>;

/**
 * The row the panel shows for a request when it starts (the timeline's own {@link startedRow} of
 * its `request-start`): what a rule's pattern is tested on, so it matches what the filter box
 * matches. Built without the timeline fold, which the page hook does not carry.
 */
function startRow({ client, method, url, requestId }: RequestFacts): RequestRow {
  return startedRow({ v: 1, type: 'request-start', requestId, t: 0, client, method, url }, '', 0);
}

// The filter's `key:value` terms whose answer a request has only once it has been sent (or has
// ended): every `status:` and `endpoint:` (each attempt picks its endpoint), and `is:` and
// `outcome:` but for `pending` (filter-terms.ts). A rule is tested on the row of a request that has
// just started, where they are always false (and their negation always true): a rule holding one
// would never apply, or apply to everything.
const LATER_TERM = /^(?:status:|endpoint:|(?:is|outcome):(?!pending,*$))/;

/** The first term of `pattern` that a just-started request cannot answer yet, and why. */
function laterTerm(pattern: string): string | undefined {
  if (pattern.trim().toLowerCase().startsWith(REGEX_PREFIX)) return undefined;
  // Words as the filter reads them: `-` negates, quotes are dropped.
  for (const word of splitWords(pattern)) {
    const { body } = readWord(word);
    if (LATER_TERM.test(body)) {
      return `${body} is known only after an attempt; a rule is matched as the request starts`;
    }
  }
  return undefined;
}

/**
 * A rule's pattern as a test of a request, or why it cannot be one: the panel's own filter
 * (`compileFilter`) on the request's {@link startRow}. Terms about how a request went
 * (`is:retried`, `status:503`, `outcome:exhausted`) are refused: the row they would be tested on
 * has not been sent yet. (Plain words such as `exhausted` cannot be told from a URL's, and are
 * looked for in that row like any other.)
 */
export function requestMatcher(pattern: string): ((request: RequestFacts) => boolean) | string {
  const filter = compileFilter({ text: pattern });
  if (filter.error !== undefined) return filter.error;
  const later = laterTerm(pattern);
  if (later !== undefined) return later;
  if (!filter.active) return () => true;
  return (request) => filter.test(startRow(request));
}

/**
 * A rule's method and pattern as the page tests a request with them: the method, when the rule
 * names one, equal to the request's, and the pattern's {@link requestMatcher}. The panel counts the
 * rows a rule would fault with it, each row tested as it was when its request started (a
 * `RequestRow` is a {@link RequestFacts}), so a row that later failed or was retried counts as the
 * page would have matched it.
 *
 * @example
 * ```ts
 * const matches = ruleMatcher({ method: 'GET', url: '/api/*' });
 * const count = typeof matches === 'string' ? undefined : rows.filter(matches).length;
 * ```
 */
export function ruleMatcher(
  rule: Pick<FaultRule, 'url' | 'method'>,
): ((request: RequestFacts) => boolean) | string {
  const matches = requestMatcher(rule.url);
  if (typeof matches === 'string') return matches;
  const method = rule.method?.toUpperCase();
  if (method === undefined || method === '') return matches;
  return (request) => request.method === method && matches(request);
}

/** Whether the page would apply `rule` to `request` (before its probability): {@link ruleMatcher}. */
export function ruleMatches(rule: Pick<FaultRule, 'url' | 'method'>, request: RequestFacts): boolean {
  const matches = ruleMatcher(rule);
  return typeof matches !== 'string' && matches(request);
}

/** The step attempt `attempt` (from 1) of a request takes: step n, the last past the end. */
export function stepFor(rule: FaultRule, attempt: number): RuleStep {
  const { steps } = rule;
  return steps[Math.min(Math.max(attempt, 1), steps.length) - 1] as RuleStep;
}
