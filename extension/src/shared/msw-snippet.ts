/**
 * A rule set as msw handlers for a vitest file: what was tried in the browser becomes a test. The
 * source uses `@retryline/msw`'s public steps and scripts, the names the rules are made of, so a
 * request through Retryline takes the same attempts under the test as it took in the page.
 *
 * How the browser's rules read in msw. In the page a rule's pattern is the filter box's, tested on
 * the row of a request that has just started: its method, its URL (query values masked), the word
 * `pending` and its client, one field each. msw tests a handler's method, and a regular expression
 * on the URL without its query. Each term of a pattern is sorted by what it can match in that row,
 * found by testing it on the rows of requests without a URL, for every method and client
 * (`requestMatcher`, the page's own test):
 * - a term that holds for every request as it starts (`pending`, `is:pending`) needs no check, and
 *   one that holds for none makes a rule that never applies: no handler, a comment says why;
 * - `method:post` is the handler's method (`-method:delete`, a method pattern that leaves it out);
 * - a word that matches only the URL becomes part of the regular expression (`*` as `.*`, `-word`
 *   as a negative lookahead), and `re:` is kept as it is;
 * - anything that depends on the client, on the method while the handler takes any, on the query
 *   string msw leaves out, or that spans fields, cannot be said in msw: it is not checked, and
 *   both the file (at the handler) and {@link mswExport}'s `warnings` say so.
 *
 * And the rest of a rule:
 * - its method, the matching `http.*` handler (`http.all` for any method);
 * - its steps, a `sequence([...])`: attempt n of a request takes step n, the last one past the
 *   end. The page counts attempts per request; so do the handlers, by the request id Retryline's
 *   `requestIdHeader` sends (`scope: { header }`), with the client options that send it written
 *   into the file;
 * - `passthrough` (the server's own answer in the page) becomes `status(200)`: a test has no
 *   server behind msw, so give it the body the code under test reads;
 * - a probability below 1 cannot be reproduced attempt for attempt: the test applies the rule to
 *   every request, and a comment (and a warning) says so;
 * - rules switched off are left out.
 *
 * Nothing from the page reaches the text unescaped: strings go through `JSON.stringify`, and a
 * regular expression through its own `source`.
 */

import { parseTextQuery, REGEX_PREFIX } from '../model/filter';
import { splitWords } from '../model/filter-terms';
import { formatSteps } from './fault-shorthand';
import {
  type FaultRule,
  type FaultRuleSet,
  type RequestFacts,
  type RuleStep,
  requestMatcher,
} from './faults';

/** Options of {@link mswSnippet} and {@link mswExport}. */
export interface MswSnippetOptions {
  /**
   * Counts attempts per request, as the page did, by this request header: the one Retryline's
   * `requestIdHeader` option sends each request's id in, which the file sets in the client options
   * it writes (`retrylineOptions`). `false`: one count per handler, shared by every request.
   * @default 'x-request-id'
   */
  readonly scopeHeader?: string | false;
  /**
   * Adds msw's server for Node (`setupServer`) and vitest's hooks that start, reset and stop it.
   * @default true
   */
  readonly server?: boolean;
}

/** Something of a rule the msw file cannot reproduce exactly. */
export interface SnippetWarning {
  /** The rule's id. */
  readonly rule: string;
  /** What differs, in a sentence: `"fetch" depends on the request's client (fetch) in the page; …`. */
  readonly message: string;
}

/** The msw file of a rule set, and what of its rules it cannot reproduce exactly. */
export interface MswExport {
  readonly source: string;
  /** One per difference, in the order of the rules; none when the file answers as the page did. */
  readonly warnings: readonly SnippetWarning[];
}

/** The request id header the handlers count attempts by, unless told otherwise. */
export const DEFAULT_SCOPE_HEADER = 'x-request-id';

/** msw's `http` methods; any other method is a `new HttpHandler(method, …)`. */
const HTTP_METHODS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS']);
/** The methods a rule without one is tried with (RFC 9110 §9.3), to find what a term matches. */
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'CONNECT', 'OPTIONS', 'TRACE', 'PATCH'];
/** The clients of Retryline's adapters: a request's client field. */
const CLIENTS = ['fetch', 'axios', 'ky'];

const literal = (value: string) => JSON.stringify(value);
/** A term of a pattern, named in a comment or a warning. */
const quoted = (term: string) => `“${term}”`;

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

// What the URL parser percent-encodes in a path (WHATWG URL: the path percent-encode set, and
// every non-ASCII character), so msw sees it encoded where the page may show it as it was given.
const ENCODED_IN_PATH = /[\0-\x20"<>`{}\x7f-\u{10ffff}]/u;

/** A character as the URL parser writes it in a path: a lone surrogate as U+FFFD's bytes, as it does. */
function encodeCharacter(character: string): string {
  try {
    return encodeURIComponent(character);
  } catch {
    return '%EF%BF%BD';
  }
}

/** A URL word as a regular expression (source): a `*` as `.*`, the rest as msw sees it. */
function urlPattern(body: string): string {
  return body
    .replace(/\*+/g, '*')
    .split('*')
    .map((part) =>
      escapeRegExp([...part].map((c) => (ENCODED_IN_PATH.test(c) ? encodeCharacter(c) : c)).join('')),
    )
    .join('.*');
}

/** How the handler for a rule matches requests, or why no request ever matches the rule. */
interface Translation {
  /** Why no request matches the rule in the page: it gets no handler. */
  readonly never?: string;
  /** The handler's method; `undefined` for any. */
  readonly method?: string | undefined;
  /** Methods the handler leaves out (`-method:delete`), when it has no method of its own. */
  readonly notMethods: readonly string[];
  /** The handler's URL: a regular expression, or `"*"` (source text). */
  readonly path: string;
  /** What the handler cannot check as the page did. */
  readonly inexact: readonly string[];
}

/** What a term says of a request besides its URL: how it does for each method and client. */
interface WithoutUrl {
  /** It holds for every request without a URL: it needs none. */
  readonly all: boolean;
  /** It holds for none: only the URL can make it hold. */
  readonly none: boolean;
  /** The methods it holds for whatever the client, and the clients whatever the method. */
  readonly methods: readonly string[];
  readonly clients: readonly string[];
}

/** How `pattern` does, in the page, on requests that have just started without a URL. */
function withoutUrl(pattern: string, methods: readonly string[]): WithoutUrl {
  const matches = requestMatcher(pattern);
  const holds = (method: string, client: string) => {
    const request: RequestFacts = { method, client, url: '', requestId: '' };
    return typeof matches !== 'string' && matches(request);
  };
  const table = methods.map((method) => CLIENTS.map((client) => holds(method, client)));
  const cells = table.flat();
  return {
    all: cells.every(Boolean),
    none: !cells.some(Boolean),
    methods: methods.filter((_method, row) => table[row]?.every(Boolean)),
    clients: CLIENTS.filter((_client, column) => table.every((row) => row[column])),
  };
}

/** What a term depends on besides the URL, in words: `client (ky)`, `method (GET, HEAD)`. */
function dependsOn(found: WithoutUrl): { readonly parts: readonly string[]; readonly client: boolean } {
  const parts: string[] = [];
  if (found.methods.length > 0) parts.push(`method (${found.methods.join(', ')})`);
  if (found.clients.length > 0) parts.push(`client (${found.clients.join(', ')})`);
  return { parts: parts.length > 0 ? parts : ['method and client'], client: found.clients.length > 0 };
}

/** Why a term that depends on the method or client is not checked in msw. */
function dependsMessage(word: string, found: WithoutUrl) {
  const { parts, client } = dependsOn(found);
  const why = client
    ? 'msw cannot tell which client sent a request'
    : 'msw matches a method apart from the URL';
  return `${quoted(word)} depends on the request's ${parts.join(' and ')} in the page; ${why}, so it is not checked here`;
}

const QUERY_MESSAGE = (word: string) =>
  `${quoted(word)} looks in the query string, which msw leaves out of the URL it matches (and the page masks its values), so it is not checked here`;

/** A `re:` pattern as a handler's URL: kept as it is, with what msw tests differently. */
function regexTranslation(text: string, method: string | undefined): Translation {
  const query = parseTextQuery(text);
  // Checked when the rule was taken: a pattern here always compiles.
  if (query.kind !== 'regex') return { method, notMethods: [], path: literal('*'), inexact: [] };
  const found = withoutUrl(text, method === undefined ? METHODS : [method]);
  if (found.all) return { method, notMethods: [], path: literal('*'), inexact: [] };
  const { source, flags } = query.regex;
  const inexact: string[] = [];
  if (!found.none) {
    inexact.push(
      `${quoted(text)} can match the request's ${dependsOn(found).parts.join(' and ')} in the page; msw tests it on the URL alone`,
    );
  }
  const syntax = regexSyntax(source);
  if (syntax.query) {
    inexact.push(
      `${quoted(text)} can depend on the query string (a $, ?, = or &), which msw leaves out of the URL it tests`,
    );
  }
  if (syntax.start) {
    inexact.push(
      `${quoted(text)}: ^ in the page starts each field, and the URL as the request gave it (a browser's may be relative, /api/…); msw tests it on the whole URL`,
    );
  }
  if (syntax.lines) {
    inexact.push(
      `${quoted(text)} can match across the request's fields (method, URL, client), which msw does not see together`,
    );
  }
  return { method, notMethods: [], path: `/${source}/${flags}`, inexact };
}

/**
 * What a regular expression's source holds outside its character classes (and in them, for the
 * query's `?`): anchors, the query's characters, and escapes that match a line break.
 */
function regexSyntax(source: string): { query: boolean; start: boolean; lines: boolean } {
  let query = false;
  let start = false;
  let lines = false;
  let inClass = false;
  for (let at = 0; at < source.length; at += 1) {
    const character = source[at] as string;
    if (character === '\\') {
      const next = source[at + 1] ?? '';
      if ('?=&'.includes(next)) query = true;
      if ('snr'.includes(next)) lines = true;
      at += 1;
      continue;
    }
    if (inClass) {
      if (character === ']') inClass = false;
      else if ('?=&'.includes(character)) query = true;
      continue;
    }
    // A group's own syntax (`(?=`, `(?<!`, `(?:`) is no query's `=`.
    const group = /^\(\?(?:<?[=!]|:)/.exec(source.slice(at, at + 4));
    if (group) at += group[0].length - 1;
    else if (character === '[') inClass = true;
    else if (character === '$' || character === '=' || character === '&') query = true;
    else if (character === '^' && !/^https?(?::|\b)/i.test(source.slice(at + 1))) start = true;
  }
  return { query, start, lines };
}

/** A rule's pattern and method as an msw handler's, and what msw cannot say of them. */
function translate(rule: FaultRule): Translation {
  const text = rule.url.trim();
  const usable = requestMatcher(text);
  if (typeof usable === 'string') {
    return { never: `the page cannot use its pattern: ${usable}`, notMethods: [], path: '', inexact: [] };
  }
  let method = rule.method?.toUpperCase();
  if (text.toLowerCase().startsWith(REGEX_PREFIX)) return regexTranslation(text, method);

  const terms = splitWords(text).flatMap((word) => {
    const negated = word.length > 1 && word.startsWith('-');
    const body = (negated ? word.slice(1) : word).replaceAll('"', '').toLowerCase();
    const colon = body.indexOf(':');
    const key = colon > 0 ? body.slice(0, colon) : '';
    return body === '' ? [] : [{ word, negated, body, key: KEYED_TERMS.has(key) ? key : '' }];
  });

  // `method:` first: the handler's method, or the methods it leaves out.
  const excluded: string[] = [];
  let asked = method === undefined ? '' : `the rule's method is ${method}`;
  for (const { word, negated, body, key } of terms) {
    if (key !== 'method') continue;
    const named = body.slice('method:'.length).toUpperCase();
    if (negated) excluded.push(named);
    else if (method !== undefined && method !== named) {
      return {
        never: `${quoted(word)} asks for ${named}, and ${asked}`,
        notMethods: [],
        path: '',
        inexact: [],
      };
    } else if (method === undefined) {
      method = named;
      asked = `${quoted(word)} asks for ${named}`;
    }
  }
  if (method !== undefined && excluded.includes(method)) {
    return {
      never: `it both asks for ${method} and leaves ${method} out`,
      notMethods: [],
      path: '',
      inexact: [],
    };
  }
  const notMethods = method === undefined ? [...new Set(excluded)] : [];
  const candidates = method === undefined ? METHODS.filter((name) => !notMethods.includes(name)) : [method];
  const methods = candidates.length > 0 ? candidates : METHODS;

  const ahead: string[] = [];
  const positive: string[] = [];
  const inexact: string[] = [];
  for (const { word, negated, body, key } of terms) {
    if (key === 'method') continue;
    // The row's fields are lines of one text: a word with a line break can only span two of them.
    if (body.includes('\n')) {
      inexact.push(
        `${quoted(word)} spans the request's fields (method, URL, client), which msw does not see together, so it is not checked here`,
      );
      continue;
    }
    // The term alone, quoted so that it reads as the word it was (not negated, not a regex).
    const found = withoutUrl(`"${body}"`, methods);
    if (found.all || (found.none && key !== '')) {
      // The same for every request as it starts: always true (no check), or never.
      if (found.all === negated) {
        const never = found.all
          ? `${quoted(word)} leaves out every request, each of which has ${quoted(body)} as it starts`
          : `no request has ${quoted(word)} as it starts`;
        return { never, notMethods: [], path: '', inexact: [] };
      }
      continue;
    }
    if (!found.none) {
      inexact.push(dependsMessage(word, found));
      continue;
    }
    // The URL's alone.
    if (/[?=&]/.test(body)) {
      inexact.push(QUERY_MESSAGE(word));
      continue;
    }
    const pattern = urlPattern(body);
    if (ENCODED_IN_PATH.test(body)) {
      inexact.push(
        `${quoted(word)} is looked for percent-encoded, as msw sees a URL; the page looked for it in the URL as the request gave it`,
      );
    }
    if (!negated) positive.push(pattern);
    ahead.push(`(?${negated ? '!' : '='}.*${pattern})`);
  }
  // One word reads as itself; several (or a negated one) as lookaheads, all of which must hold.
  const path =
    ahead.length === 0
      ? literal('*')
      : ahead.length === 1 && positive.length === 1
        ? `/${positive[0]}/i`
        : `/^${ahead.join('')}/i`;
  return { method, notMethods, path, inexact };
}

/** A rule's comment, its script (`const ruleN = sequence(…)`) and its handler, and its warnings. */
function ruleSource(
  rule: FaultRule,
  name: string,
  names: Set<string>,
  msw: Set<string>,
  scopeHeader: string | false,
): { script: string; handler?: string; byUrl?: boolean; warnings: string[] } {
  const match = translate(rule);
  const method = match.method;
  const count = rule.steps.length;
  const shown = formatSteps(rule.steps) ?? `${count} step${count === 1 ? '' : 's'}`;
  const lines = [
    comment(
      `// ${rule.method ?? 'Any method'} ${rule.url.trim() === '' ? '(every URL)' : rule.url} → ${shown}`,
    ),
  ];
  if (match.never !== undefined) {
    lines.push(comment(`// Never applies in the page (${match.never}): no handler.`));
    return { script: lines.join('\n'), warnings: [`never applies in the page: ${match.never}`] };
  }
  const warnings = [...match.inexact];
  if (rule.probability !== undefined) {
    const percent = Math.round(rule.probability * 1000) / 10;
    lines.push(`// In the page: ${percent} % of matching requests; here every one.`);
    warnings.push(
      `in the page it applies to ${percent} % of matching requests; the handler answers every one`,
    );
  }
  if (match.inexact.length > 0) {
    lines.push('// Not reproduced exactly by msw:');
    for (const message of match.inexact) lines.push(comment(`// - ${message}.`));
  }
  const steps = rule.steps.map((step) => stepCall(step, names)).join(', ');
  names.add('sequence');
  const scope = scopeHeader === false ? '' : `, { scope: { header: ${literal(scopeHeader)} } }`;
  lines.push(`const ${name} = sequence([${steps}]${scope});`);
  const script = lines.join('\n');
  const byUrl = match.path.startsWith('/');
  if (match.notMethods.length > 0) {
    msw.add('HttpHandler');
    const left = match.notMethods.map(escapeRegExp).join('|');
    const handler = `new HttpHandler(/^(?!(?:${left})$)/i, ${match.path}, ${name})`;
    return { script, handler, byUrl, warnings };
  }
  if (method === undefined || HTTP_METHODS.has(method)) {
    msw.add('http');
    const call = method === undefined ? 'all' : method.toLowerCase();
    return { script, handler: `http.${call}(${match.path}, ${name})`, byUrl, warnings };
  }
  msw.add('HttpHandler');
  const handler = `new HttpHandler(${literal(method)}, ${match.path}, ${name})`;
  return { script, handler, byUrl, warnings };
}

/**
 * TypeScript source for a vitest file, and what of the rules it cannot reproduce exactly: msw
 * handlers, made with `@retryline/msw`, that answer a request's attempts as the rules did in the
 * page, the client options that let them count attempts per request, and (unless `server: false`)
 * msw's Node server with vitest's hooks that start it, reset it and each script after every test,
 * and stop it. Each warning is also a comment at its rule's handler.
 *
 * @example
 * ```ts
 * const steps = parseSteps('503, 503, 200');
 * if (steps.ok) {
 *   const { source, warnings } = mswExport({ rules: [{ id: '1', url: '/api/* client:ky', steps: steps.value }] });
 *   // source: … const rule1 = sequence([status(503), status(503), status(200)], …);
 *   //         const handlers = [http.all(/\/api\/.*\/i, rule1)];
 *   // warnings: [{ rule: '1', message: '“client:ky” depends on the request\'s client (ky) in the page; …' }]
 * }
 * ```
 */
export function mswExport(set: FaultRuleSet, options: MswSnippetOptions = {}): MswExport {
  const names = new Set<string>();
  const msw = new Set<string>();
  const scopeHeader = options.scopeHeader ?? DEFAULT_SCOPE_HEADER;
  const rules = set.rules.filter((rule) => rule.enabled !== false);
  const sources = rules.map((rule, index) => ({
    rule,
    name: `rule${index + 1}`,
    ...ruleSource(rule, `rule${index + 1}`, names, msw, scopeHeader),
  }));
  const handled = sources.filter((source) => source.handler !== undefined);
  const server = options.server !== false;
  const sorted = (values: Set<string>) => [...values].sort((a, b) => a.localeCompare(b, 'en')).join(', ');
  const lines = [
    '// The fault rules tried in the Retryline DevTools panel, as msw handlers (@retryline/msw).',
  ];
  if (handled.some((source) => source.rule.steps.some(passesThrough))) {
    lines.push(
      "// status(200) stands for the server's own answer in the page: give it the body your code reads.",
    );
  }
  if (handled.some((source) => source.byUrl)) {
    lines.push(
      "// msw matches a handler's URL without its query string; the page also looked in the query's names.",
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
  if (scopeHeader !== false && handled.length > 0) {
    lines.push(
      '',
      "// The page counts each request's attempts apart; so do these handlers, by the request id",
      '// Retryline sends in this header. Give the client under test these options, e.g.',
      '// retryFetch({ ...retrylineOptions, retries: 3 }): without them, every request a handler',
      '// answers takes the next step of one shared count.',
      `const retrylineOptions = { requestIdHeader: ${literal(scopeHeader)} } as const;`,
    );
  }
  for (const source of sources) lines.push('', source.script);
  const handlers = handled.map((source) => source.handler);
  lines.push('', `const handlers = [${handlers.length > 0 ? `\n  ${handlers.join(',\n  ')},\n` : ''}];`);
  if (server) {
    const scripts = handled.map((source) => source.name);
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
  const warnings = sources.flatMap((source) =>
    source.warnings.map((message) => ({ rule: source.rule.id, message })),
  );
  return { source: `${lines.join('\n')}\n`, warnings };
}

/** {@link mswExport}'s source alone. */
export function mswSnippet(set: FaultRuleSet, options: MswSnippetOptions = {}): string {
  return mswExport(set, options).source;
}

/**
 * What of `set`'s enabled rules an msw file cannot reproduce exactly ({@link mswExport}'s
 * warnings), for the panel to show before it is exported.
 */
export function snippetWarnings(set: FaultRuleSet): readonly SnippetWarning[] {
  return mswExport(set, { server: false }).warnings;
}

const passesThrough = (step: RuleStep): boolean =>
  step.step === 'passthrough' || (step.step === 'slow' && step.answer === undefined);
