import { describe, expect, it } from 'vitest';
import { parseSteps } from './fault-shorthand';
import type { FaultRule, RuleStep } from './faults';
import { mswExport, mswSnippet, snippetWarnings } from './msw-snippet';

const steps = (text: string): readonly RuleStep[] => {
  const parsed = parseSteps(text);
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.value;
};

const rule = (overrides: Partial<FaultRule> = {}): FaultRule => ({
  id: 'r',
  url: '/api/',
  method: 'GET',
  steps: steps('503, 503, 200'),
  ...overrides,
});

/** A rule for any method. */
const anyMethod = (overrides: Partial<FaultRule>): FaultRule => {
  const { method: _method, ...rest } = rule(overrides);
  return rest;
};

describe('mswSnippet', () => {
  it('writes a vitest file: @retryline/msw’s sequence and steps, msw’s handler and server, reset after each test', () => {
    expect(mswSnippet({ rules: [rule()] })).toBe(
      [
        '// The fault rules tried in the Retryline DevTools panel, as msw handlers (@retryline/msw).',
        "// status(200) stands for the server's own answer in the page: give it the body your code reads.",
        "// msw matches a handler's URL without its query string; the page also looked in the query's names.",
        "import { sequence, status } from '@retryline/msw';",
        "import { http } from 'msw';",
        "import { setupServer } from 'msw/node';",
        "import { afterAll, afterEach, beforeAll } from 'vitest';",
        '',
        "// The page counts each request's attempts apart; so do these handlers, by the request id",
        '// Retryline sends in this header. Give the client under test these options, e.g.',
        '// retryFetch({ ...retrylineOptions, retries: 3 }): without them, every request a handler',
        '// answers takes the next step of one shared count.',
        'const retrylineOptions = { requestIdHeader: "x-request-id" } as const;',
        '',
        '// GET /api/ → 503, 503, passthrough',
        'const rule1 = sequence([status(503), status(503), status(200)], { scope: { header: "x-request-id" } });',
        '',
        'const handlers = [',
        '  http.get(/\\/api\\//i, rule1),',
        '];',
        '',
        'const server = setupServer(...handlers);',
        "beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));",
        'afterEach(() => {',
        '  server.resetHandlers();',
        '  for (const script of [rule1]) script.reset();',
        '});',
        'afterAll(() => server.close());',
        '',
      ].join('\n'),
    );
  });

  it('writes each step as @retryline/msw names it', () => {
    const text = mswSnippet(
      { rules: [rule({ steps: steps('429 retry-after=1, networkError, slow 2000, slow 50 504') })] },
      { server: false, scopeHeader: false },
    );
    expect(text).toContain(
      'sequence([status(429, { headers: { "retry-after": "1" } }), networkError(), slow(2000, status(200)), slow(50, status(504))]);',
    );
    expect(text).toContain("import { networkError, sequence, slow, status } from '@retryline/msw';");
    expect(text).not.toContain('setupServer');
  });

  it('counts attempts per request by the request id header its client options send, or per handler when told', () => {
    const scoped = mswSnippet({ rules: [rule()] }, { scopeHeader: 'x-trace-id', server: false });
    expect(scoped).toContain(
      'sequence([status(503), status(503), status(200)], { scope: { header: "x-trace-id" } })',
    );
    expect(scoped).toContain('const retrylineOptions = { requestIdHeader: "x-trace-id" } as const;');
    const shared = mswSnippet({ rules: [rule()] }, { scopeHeader: false, server: false });
    expect(shared).toContain('const rule1 = sequence([status(503), status(503), status(200)]);');
    expect(shared).not.toContain('retrylineOptions');
  });

  it('reads a * in a word as a wildcard, as the filter does', () => {
    const text = mswSnippet({
      rules: [
        rule({ url: '/api/*' }),
        anyMethod({ url: '*.example.com' }),
        anyMethod({ url: '/v1/**/items' }),
      ],
    });
    expect(text).toContain('http.get(/\\/api\\/.*/i, rule1)');
    expect(text).toContain('http.all(/.*\\.example\\.com/i, rule2)');
    expect(text).toContain('http.all(/\\/v1\\/.*\\/items/i, rule3)');
    expect(snippetWarnings({ rules: [rule({ url: '/api/*' })] })).toEqual([]);
  });

  it('reads the filter’s words as lookaheads and method: as the handler, exactly', () => {
    const { source, warnings } = mswExport({
      rules: [
        anyMethod({ url: '/api/ -health method:post' }),
        anyMethod({ id: 'not', url: '/api/ -method:delete -method:put' }),
        rule({ id: 'post', url: 'post' }),
      ],
    });
    expect(source).toContain('http.post(/^(?=.*\\/api\\/)(?!.*health)/i, rule1)');
    expect(source).toContain('new HttpHandler(/^(?!(?:DELETE|PUT)$)/i, /\\/api\\//i, rule2)');
    // A GET's method field is "GET": "post" can only be in its URL.
    expect(source).toContain('http.get(/post/i, rule3)');
    expect(warnings).toEqual([]);
  });

  it('needs no check for what every request has as it starts, and writes no handler for a rule that never applies', () => {
    const { source, warnings } = mswExport({
      rules: [
        anyMethod({ id: 'pending', url: '/api/ is:pending pending' }),
        rule({ id: 'get', url: '/api/ get' }),
        rule({ id: 'conflict', url: '/api/ method:post' }),
        anyMethod({ id: 'not-pending', url: '-pending' }),
        rule({ id: 'not-own', url: '-method:get' }),
      ],
    });
    expect(source).toContain('http.all(/\\/api\\//i, rule1)');
    expect(source).toContain('http.get(/\\/api\\//i, rule2)');
    expect(source).toContain(
      "// Never applies in the page (“method:post” asks for POST, and the rule's method is GET): no handler.",
    );
    expect(source).not.toMatch(/rule[345] = |, rule[345]\)/);
    expect(source).toContain('for (const script of [rule1, rule2]) script.reset();');
    expect(warnings).toEqual([
      {
        rule: 'conflict',
        message: "never applies in the page: “method:post” asks for POST, and the rule's method is GET",
      },
      {
        rule: 'not-pending',
        message:
          'never applies in the page: “-pending” leaves out every request, each of which has “pending” as it starts',
      },
      { rule: 'not-own', message: 'never applies in the page: it both asks for GET and leaves GET out' },
    ]);
  });

  it('says, at the handler and in its warnings, what msw cannot check: the client, the method, the query', () => {
    const { source, warnings } = mswExport({
      rules: [
        anyMethod({ id: 'client', url: '/api/ client:ky' }),
        anyMethod({ id: 'fetch', url: 'fetch /api/' }),
        anyMethod({ id: 'method', url: 'post' }),
        anyMethod({ id: 'query', url: '/api/ ?page=' }),
      ],
    });
    const client =
      "“client:ky” depends on the request's client (ky) in the page; msw cannot tell which client sent a request, so it is not checked here";
    const fetch =
      "“fetch” depends on the request's client (fetch) in the page; msw cannot tell which client sent a request, so it is not checked here";
    const method =
      "“post” depends on the request's method (POST) in the page; msw matches a method apart from the URL, so it is not checked here";
    const query =
      '“?page=” looks in the query string, which msw leaves out of the URL it matches (and the page masks its values), so it is not checked here';
    expect(source).toContain(
      ['// Not reproduced exactly by msw:', `// - ${client}.`, 'const rule1 = sequence('].join('\n'),
    );
    expect(source).toContain('http.all(/\\/api\\//i, rule1)');
    expect(source).toContain(`// - ${fetch}.`);
    expect(source).toContain('http.all(/\\/api\\//i, rule2)');
    expect(source).toContain(`// - ${method}.`);
    expect(source).toContain('http.all("*", rule3)');
    expect(source).toContain(`// - ${query}.`);
    expect(source).toContain('http.all(/\\/api\\//i, rule4)');
    expect(warnings).toEqual([
      { rule: 'client', message: client },
      { rule: 'fetch', message: fetch },
      { rule: 'method', message: method },
      { rule: 'query', message: query },
    ]);
  });

  it('says what of a re: pattern msw tests differently: other fields, the query, the start of a field', () => {
    const warnings = (url: string) =>
      snippetWarnings({ rules: [anyMethod({ url })] }).map((warning) => warning.message);
    expect(warnings('re:/items/\\d+')).toEqual([]);
    expect(warnings('re:^https?://api\\.example/')).toEqual([]);
    expect(warnings('re:/api/(?!health)(?=v1)(?<=/)(?:x|y)')).toEqual([]);
    expect(warnings('re:(get|ky)')).toEqual([
      "“re:(get|ky)” can match the request's method (GET) and client (ky) in the page; msw tests it on the URL alone",
    ]);
    expect(warnings('re:/items/\\d+$')).toEqual([
      '“re:/items/\\d+$” can depend on the query string (a $, ?, = or &), which msw leaves out of the URL it tests',
    ]);
    expect(warnings('re:^/api/')).toEqual([
      "“re:^/api/”: ^ in the page starts each field, and the URL as the request gave it (a browser's may be relative, /api/…); msw tests it on the whole URL",
    ]);
    expect(warnings('re:items\\spending')).toEqual([
      "“re:items\\spending” can match across the request's fields (method, URL, client), which msw does not see together",
    ]);
  });

  it('keeps a re: pattern as it is, any method as http.all, another method as an HttpHandler', () => {
    const text = mswSnippet({
      rules: [anyMethod({ url: 're:/items/\\d+$' }), rule({ id: 'purge', method: 'PURGE', url: '' })],
    });
    expect(text).toContain('http.all(/\\/items\\/\\d+$/im, rule1)');
    expect(text).toContain('new HttpHandler("PURGE", "*", rule2)');
    expect(text).toContain("import { http, HttpHandler } from 'msw';");
  });

  it('notes a probability it cannot reproduce, and leaves out rules switched off', () => {
    const { source, warnings } = mswExport({
      rules: [rule({ probability: 0.25 }), rule({ id: 'off', url: '/off/', enabled: false })],
    });
    expect(source).toContain('// In the page: 25 % of matching requests; here every one.');
    expect(source).not.toContain('/off/');
    expect(warnings).toEqual([
      {
        rule: 'r',
        message: 'in the page it applies to 25 % of matching requests; the handler answers every one',
      },
    ]);
  });

  it('lets nothing from a rule out of its string, regular expression or comment', () => {
    const text = mswSnippet({
      rules: [
        rule({
          url: '"x\ny" /a\u2028b',
          steps: [
            { step: 'status', status: 503, body: "'); process.exit(1); ('\n", headers: { 'x-a': '"b' } },
          ],
        }),
      ],
    });
    const lines = text.split('\n');
    // Every line is a comment, an import, or what the generator itself writes.
    for (const line of lines.filter((line) => line.includes('exit'))) {
      expect(line.trim()).toMatch(
        /^const rule1 = sequence\(\[status\(503, \{ headers: \{ "x-a": "\\"b" \}, body: "'\); process.exit\(1\); \('\\n" \}\)\], \{ scope: \{ header: "x-request-id" \} \}\);$/,
      );
    }
    expect(
      lines
        .filter((line) => line.startsWith('//') && line.includes('x'))
        .every((line) => !line.includes('\u2028')),
    ).toBe(true);
    // A word across a line break spans two of the row's fields: not checked. U+2028 separates
    // words, as in the filter box; inside a quoted word it is a URL's character, percent-encoded.
    expect(text).toContain('http.get(/^(?=.*\\/a)(?=.*b)/i, rule1)');
    const quoted = mswSnippet({ rules: [rule({ url: '"/a\u2028/*/"' })] }, { server: false });
    expect(quoted).toContain('http.get(/\\/a%E2%80%A8\\/.*\\//i, rule1)');
    expect(quoted).not.toContain('\u2028');
    // A lone surrogate (a page can send one) is what the URL parser makes of it, U+FFFD.
    expect(mswSnippet({ rules: [rule({ url: '/a\ud800' })] })).toContain('http.get(/\\/a%EF%BF%BD/i, rule1)');
  });

  it('writes a server with nothing to reset for an empty set', () => {
    const text = mswSnippet({ rules: [] });
    expect(text).toContain('const handlers = [];');
    expect(text).toContain('afterEach(() => server.resetHandlers());');
  });
});
