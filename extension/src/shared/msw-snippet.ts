/**
 * A rule set as msw handlers for a vitest file: what was tried in the browser becomes a test. The
 * source uses `@retryline/msw`'s public steps and scripts, the names the rules are made of, so a
 * request through Retryline takes the same attempts under the test as it took in the page.
 *
 * How the browser's rules read in msw:
 * - a rule's pattern (the panel's filter syntax) becomes a regular expression, which msw tests
 *   against the request URL without its query: `re:` as it is, words as lookaheads (`-word` as a
 *   negative one), `method:` as the handler's method; terms about how a request went (`is:`,
 *   `status:`, `outcome:`) and `client:` have no msw counterpart and are left out, with a comment;
 * - its method, the matching `http.*` handler (`http.all` for any method);
 * - its steps, a `sequence([...])`: attempt n of the handler takes step n, the last one past the
 *   end. In the page the count is per request; here it is one per handler (per request, with
 *   `scope`, when the client sends a request id header);
 * - `passthrough` (the server's own answer in the page) becomes `status(200)`: a test has no
 *   server behind msw, so give it the body the code under test reads;
 * - a probability below 1 cannot be reproduced attempt for attempt: the test applies the rule to
 *   every request, and a comment says so;
 * - rules switched off are left out.
 *
 * Nothing from the page reaches the text unescaped: strings go through `JSON.stringify`, and a
 * regular expression through its own `source`.
 */

import { parseTextQuery, REGEX_PREFIX } from '../model/filter';
import { splitWords } from '../model/filter-terms';
import { formatSteps } from './fault-shorthand';
import type { FaultRule, FaultRuleSet, RuleStep } from './faults';

/** Options of {@link mswSnippet}. */
export interface MswSnippetOptions {
  /**
   * Counts attempts per request by this request header (Retryline's `requestIdHeader`), as the
   * page did, instead of one count per handler; the client under test must send it.
   * @default one count per handler
   */
  readonly scopeHeader?: string;
  /**
   * Adds msw's server for Node (`setupServer`) and vitest's hooks that start, reset and stop it.
   * @default true
   */
  readonly server?: boolean;
}

/** msw's `http` methods; any other method is a `new HttpHandler(method, …)`. */
const HTTP_METHODS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS']);

const literal = (value: string) => JSON.stringify(value);

function statusCall(step: Extract<RuleStep, { step: 'status' }>): string {
  const init: string[] = [];
  if (step.headers && Object.keys(step.headers).length > 0) {
    const headers = Object.entries(step.headers).map(
      ([name, value]) => `${literal(name)}: ${literal(value)}`,
    );
    init.push(`headers: { ${headers.join(', ')} }`);
  }
  if (step.body !== undefined) init.push(`body: ${literal(step.body)}`);
  if (step.statusText !== undefined) init.push(`statusText: ${literal(step.statusText)}`);
  return init.length === 0 ? `status(${step.status})` : `status(${step.status}, { ${init.join(', ')} })`;
}

function stepCall(step: RuleStep, names: Set<string>): string {
  switch (step.step) {
    case 'status':
      names.add('status');
      return statusCall(step);
    case 'networkError':
      names.add('networkError');
      return 'networkError()';
    case 'passthrough':
      names.add('status');
      return 'status(200)';
    case 'slow':
      names.add('slow');
      return `slow(${step.ms}, ${stepCall(step.answer ?? { step: 'passthrough' }, names)})`;
  }
}

// The filter's `key:value` terms (extension/src/model/filter-terms.ts); any other word with a colon
// (`http://…`) is a plain word there too.
const KEYED_TERMS = new Set(['is', 'status', 'outcome', 'method', 'client']);

// Line terminators too: a regular expression literal ends at one.
const LINE_TERMINATORS: Readonly<Record<string, string>> = {
  '\n': '\\n',
  '\r': '\\r',
  '\u2028': '\\u2028',
  '\u2029': '\\u2029',
};
const escapeRegExp = (text: string) =>
  text
    .replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')
    .replace(/[\n\r\u2028\u2029]/g, (end) => LINE_TERMINATORS[end] ?? '');

/** Text for a `//` comment: a line terminator in it would end the comment and start code. */
const comment = (text: string) => text.replace(/[\n\r\u2028\u2029]/g, ' ');

/** A rule's pattern as an msw path (source text), the method it names, and what msw cannot say. */
function matchOf(pattern: string): { path: string; method?: string; dropped: string[] } {
  const text = pattern.trim();
  if (text.toLowerCase().startsWith(REGEX_PREFIX)) {
    const query = parseTextQuery(text);
    // Checked when the rule was taken: a pattern here always compiles.
    return query.kind === 'regex'
      ? { path: `/${query.regex.source}/${query.regex.flags}`, dropped: [] }
      : { path: literal('*'), dropped: [] };
  }
  const words: string[] = [];
  const ahead: string[] = [];
  const dropped: string[] = [];
  let method: string | undefined;
  for (const word of splitWords(text)) {
    const negated = word.length > 1 && word.startsWith('-');
    const body = (negated ? word.slice(1) : word).replaceAll('"', '').toLowerCase();
    if (body === '') continue;
    const colon = body.indexOf(':');
    const key = colon > 0 ? body.slice(0, colon) : '';
    if (key === 'method' && !negated) method = body.slice(colon + 1).toUpperCase();
    else if (KEYED_TERMS.has(key)) dropped.push(word);
    else {
      if (!negated) words.push(escapeRegExp(body));
      ahead.push(`(?${negated ? '!' : '='}.*${escapeRegExp(body)})`);
    }
  }
  // One word reads as itself; several (or a word left out) as lookaheads, all of which must hold.
  const path =
    ahead.length === 0
      ? literal('*')
      : ahead.length === 1 && words.length === 1
        ? `/${words[0]}/i`
        : `/^${ahead.join('')}/i`;
  return method === undefined ? { path, dropped } : { path, method, dropped };
}

/** A rule's comment, its script (`const ruleN = sequence(…)`) and its handler. */
function ruleSource(
  rule: FaultRule,
  name: string,
  names: Set<string>,
  msw: Set<string>,
  options: MswSnippetOptions,
): { script: string; handler: string } {
  const steps = rule.steps.map((step) => stepCall(step, names)).join(', ');
  names.add('sequence');
  const scope = options.scopeHeader ? `, { scope: { header: ${literal(options.scopeHeader)} } }` : '';
  const match = matchOf(rule.url);
  const method = rule.method ?? match.method;
  const count = rule.steps.length;
  const shown = formatSteps(rule.steps) ?? `${count} step${count === 1 ? '' : 's'}`;
  const lines = [
    comment(`// ${method ?? 'Any method'} ${rule.url.trim() === '' ? '(every URL)' : rule.url} → ${shown}`),
  ];
  if (match.dropped.length > 0) {
    lines.push(comment(`// Not expressible in msw, so not checked here: ${match.dropped.join(' ')}`));
  }
  if (rule.probability !== undefined) {
    const percent = Math.round(rule.probability * 1000) / 10;
    lines.push(`// In the page: ${percent} % of matching requests; here every one.`);
  }
  lines.push(`const ${name} = sequence([${steps}]${scope});`);
  if (method === undefined || HTTP_METHODS.has(method)) {
    msw.add('http');
    const call = method === undefined ? 'all' : method.toLowerCase();
    return { script: lines.join('\n'), handler: `http.${call}(${match.path}, ${name})` };
  }
  msw.add('HttpHandler');
  return { script: lines.join('\n'), handler: `new HttpHandler(${literal(method)}, ${match.path}, ${name})` };
}

/**
 * TypeScript source for a vitest file: msw handlers, made with `@retryline/msw`, that answer a
 * request's attempts as the rules did in the page, and (unless `server: false`) msw's Node server
 * with vitest's hooks that start it, reset it and each script after every test, and stop it.
 *
 * @example
 * ```ts
 * const steps = parseSteps('503, 503, 200');
 * if (steps.ok) mswSnippet({ rules: [{ id: '1', url: '/api/*', method: 'GET', steps: steps.value }] });
 * // …
 * // const rule1 = sequence([status(503), status(503), status(200)]);
 * // const handlers = [http.get(/\/api\/.*\/i, rule1)];
 * ```
 */
export function mswSnippet(set: FaultRuleSet, options: MswSnippetOptions = {}): string {
  const names = new Set<string>();
  const msw = new Set<string>();
  const rules = set.rules.filter((rule) => rule.enabled !== false);
  const sources = rules.map((rule, index) => ruleSource(rule, `rule${index + 1}`, names, msw, options));
  const scripts = rules.map((_rule, index) => `rule${index + 1}`);
  const server = options.server !== false;
  const sorted = (values: Set<string>) => [...values].sort((a, b) => a.localeCompare(b, 'en')).join(', ');
  const lines = [
    '// The fault rules tried in the Retryline DevTools panel, as msw handlers (@retryline/msw).',
  ];
  if (rules.some((rule) => rule.steps.some(passesThrough))) {
    lines.push(
      "// status(200) stands for the server's own answer in the page: give it the body your code reads.",
    );
  }
  if (names.size > 0) lines.push(`import { ${sorted(names)} } from '@retryline/msw';`);
  if (msw.size > 0) lines.push(`import { ${sorted(msw)} } from 'msw';`);
  if (server) {
    lines.push(
      "import { setupServer } from 'msw/node';",
      "import { afterAll, afterEach, beforeAll } from 'vitest';",
    );
  }
  for (const source of sources) lines.push('', source.script);
  const handlers = sources.map((source) => source.handler);
  lines.push('', `const handlers = [${handlers.length > 0 ? `\n  ${handlers.join(',\n  ')},\n` : ''}];`);
  if (server) {
    lines.push(
      '',
      'const server = setupServer(...handlers);',
      "beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));",
      ...(scripts.length === 0
        ? ['afterEach(() => server.resetHandlers());']
        : [
            'afterEach(() => {',
            '  server.resetHandlers();',
            `  for (const script of [${scripts.join(', ')}]) script.reset();`,
            '});',
          ]),
      'afterAll(() => server.close());',
    );
  }
  return `${lines.join('\n')}\n`;
}

const passesThrough = (step: RuleStep): boolean =>
  step.step === 'passthrough' || (step.step === 'slow' && step.answer === undefined);
