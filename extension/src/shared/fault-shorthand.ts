/**
 * The one-line form of a rule's steps, as the Faults tab takes it: `503, 503, 200`. Steps are
 * separated by commas; each is one of
 *
 * - a status, with headers as `name=value` words: `503`, `429 retry-after=2`;
 * - `networkError` (or `network-error`, `error`): the client's own network failure;
 * - `slow <ms>` and, optionally, the answer after the wait: `slow 3000`, `slow 3s 503`;
 * - `passthrough` (or `pass`): the server answers.
 *
 * A bare 2xx (`200`, no header) reads as `passthrough`: what a developer means by the success at
 * the end of `503, 503, 200` is their server's real answer, not an empty made-up one that would
 * break the page in ways that have nothing to do with retries. A made-up success needs the
 * rule's data form (a status step with a body).
 */

import { fieldTextProblem, MAX_SLOW_MS, MAX_STEPS, type RuleStep, type StatusFault } from './faults';

const NETWORK_ERROR = new Set(['networkerror', 'network-error', 'error']);
const PASSTHROUGH = new Set(['passthrough', 'pass']);
// RFC 9110 §5.1: a field name is a token.
const HEADER = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+)=(\S+)$/;
const DURATION = /^(\d+(?:\.\d+)?)(ms|s)?$/i;

type Parsed<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: string };

function parseStatus(words: readonly string[]): StatusFault | RuleStep | string {
  const [code, ...rest] = words;
  const status = Number(code);
  if (!/^\d{3}$/.test(code ?? '') || status < 200 || status > 599) {
    return 'expected a status in [200, 599], networkError, slow <ms> or passthrough';
  }
  const headers: Record<string, string> = {};
  for (const word of rest) {
    const match = HEADER.exec(word);
    if (!match) return `expected headers as name=value, got ${JSON.stringify(word)}`;
    const name = (match[1] as string).toLowerCase();
    const value = match[2] as string;
    // Checked as the rule set is (faults.ts), so what reads here is never refused when it is sent.
    const problem = fieldTextProblem(value);
    if (problem !== undefined) return `header ${name}: ${problem}`;
    headers[name] = value;
  }
  if (rest.length === 0) return status < 300 ? { step: 'passthrough' } : { step: 'status', status };
  return { step: 'status', status, headers };
}

function parseOne(text: string): RuleStep | string {
  const words = text.split(/\s+/).filter((word) => word !== '');
  const [first, ...rest] = words;
  if (first === undefined) return 'a step is missing';
  const keyword = first.toLowerCase();
  if (NETWORK_ERROR.has(keyword) || PASSTHROUGH.has(keyword)) {
    if (rest.length > 0) return `${first} takes nothing after it`;
    return NETWORK_ERROR.has(keyword) ? { step: 'networkError' } : { step: 'passthrough' };
  }
  if (keyword !== 'slow') return parseStatus(words);
  const [wait, ...answerWords] = rest;
  const duration = DURATION.exec(wait ?? '');
  const ms = duration
    ? Math.round(Number(duration[1]) * (duration[2]?.toLowerCase() === 's' ? 1000 : 1))
    : NaN;
  if (!(ms >= 0 && ms <= MAX_SLOW_MS))
    return `expected slow <ms> (at most ${MAX_SLOW_MS} ms), got ${JSON.stringify(text)}`;
  if (answerWords.length === 0) return { step: 'slow', ms };
  const answer = parseOne(answerWords.join(' '));
  if (typeof answer === 'string') return answer;
  if (answer.step === 'slow') return 'a slow step waits once';
  if (answer.step === 'passthrough') return { step: 'slow', ms };
  return { step: 'slow', ms, answer };
}

/**
 * Reads `503, 503, 200`-style text into steps, or says what is wrong with it, naming the step
 * (`step 2 ("50x"): expected a status …`).
 *
 * @example
 * ```ts
 * parseSteps('429 retry-after=1, slow 2s, 200');
 * // { ok: true, value: [{ step: 'status', status: 429, headers: { 'retry-after': '1' } },
 * //   { step: 'slow', ms: 2000 }, { step: 'passthrough' }] }
 * ```
 */
export function parseSteps(text: string): Parsed<readonly RuleStep[]> {
  const parts = text.split(',').map((part) => part.trim());
  if (parts.length > MAX_STEPS) return { ok: false, error: `at most ${MAX_STEPS} steps` };
  const steps: RuleStep[] = [];
  for (let index = 0; index < parts.length; index += 1) {
    const part = parts[index] as string;
    const step = parseOne(part);
    if (typeof step === 'string')
      return { ok: false, error: `step ${index + 1} (${JSON.stringify(part)}): ${step}` };
    steps.push(step);
  }
  return { ok: true, value: steps };
}

function formatAnswer(step: RuleStep): string | undefined {
  switch (step.step) {
    case 'networkError':
    case 'passthrough':
      return step.step;
    case 'slow': {
      const answer = step.answer && formatAnswer(step.answer);
      if (step.answer && answer === undefined) return undefined;
      return answer ? `slow ${step.ms} ${answer}` : `slow ${step.ms}`;
    }
    case 'status': {
      const headers = Object.entries(step.headers ?? {});
      // What the one-line form cannot say: a body, a reason phrase, a value with a space or a comma,
      // a made-up success without headers (it would read back as passthrough).
      if (step.body !== undefined || step.statusText !== undefined) return undefined;
      if (headers.some(([, value]) => /[\s,]/.test(value) || value === '')) return undefined;
      if (headers.length === 0 && step.status < 300) return undefined;
      return [String(step.status), ...headers.map(([name, value]) => `${name}=${value}`)].join(' ');
    }
  }
}

/**
 * Steps in the one-line form ({@link parseSteps} reads it back to the same steps), or `undefined`
 * when one of them cannot be written that way (a body, a reason phrase, a header value with a space
 * or a comma, a made-up 2xx without headers).
 */
export function formatSteps(steps: readonly RuleStep[]): string | undefined {
  const parts: string[] = [];
  for (const step of steps) {
    const text = formatAnswer(step);
    if (text === undefined) return undefined;
    parts.push(text);
  }
  return parts.join(', ');
}
