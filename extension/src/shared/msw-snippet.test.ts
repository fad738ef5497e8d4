import { describe, expect, it } from 'vitest';
import { parseSteps } from './fault-shorthand';
import type { FaultRule, RuleStep } from './faults';
import { mswSnippet } from './msw-snippet';

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
        "import { sequence, status } from '@retryline/msw';",
        "import { http } from 'msw';",
        "import { setupServer } from 'msw/node';",
        "import { afterAll, afterEach, beforeAll } from 'vitest';",
        '',
        '// GET /api/ → 503, 503, passthrough',
        'const rule1 = sequence([status(503), status(503), status(200)]);',
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
      { server: false },
    );
    expect(text).toContain(
      'sequence([status(429, { headers: { "retry-after": "1" } }), networkError(), slow(2000, status(200)), slow(50, status(504))])',
    );
    expect(text).toContain("import { networkError, sequence, slow, status } from '@retryline/msw';");
    expect(text).not.toContain('setupServer');
  });

  it('counts attempts per request by a header when asked, as the page counted them', () => {
    expect(mswSnippet({ rules: [rule()] }, { scopeHeader: 'x-request-id' })).toContain(
      'sequence([status(503), status(503), status(200)], { scope: { header: "x-request-id" } })',
    );
  });

  it('reads the filter’s words as lookaheads, method: as the handler, and says what msw cannot check', () => {
    const text = mswSnippet({
      rules: [anyMethod({ url: '/api/ -health method:post is:retried' })],
    });
    expect(text).toContain('http.post(/^(?=.*\\/api\\/)(?!.*health)/i, rule1)');
    expect(text).toContain('// Not expressible in msw, so not checked here: is:retried');
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
    const text = mswSnippet({
      rules: [rule({ probability: 0.25 }), rule({ id: 'off', url: '/off/', enabled: false })],
    });
    expect(text).toContain('// In the page: 25 % of matching requests; here every one.');
    expect(text).not.toContain('/off/');
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
        /^const rule1 = sequence\(\[status\(503, \{ headers: \{ "x-a": "\\"b" \}, body: "'\); process.exit\(1\); \('\\n" \}\)\]\);$/,
      );
    }
    expect(
      lines
        .filter((line) => line.startsWith('//') && line.includes('x'))
        .every((line) => !line.includes('\u2028')),
    ).toBe(true);
    // The quoted word keeps its line break, escaped; U+2028 separates words, as in the filter box.
    expect(text).toContain('http.get(/^(?=.*x\\ny)(?=.*\\/a)(?=.*b)/i, rule1)');
  });

  it('writes a server with nothing to reset for an empty set', () => {
    const text = mswSnippet({ rules: [] });
    expect(text).toContain('const handlers = [];');
    expect(text).toContain('afterEach(() => server.resetHandlers());');
  });
});
