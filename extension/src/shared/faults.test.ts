import { describe, expect, it } from 'vitest';
import { compileFilter } from '../model/filter';
import { scenario } from '../model/fixtures';
import { foldTimeline } from '../model/timeline';
import {
  MAX_RULES,
  MAX_STEPS,
  MAX_VALUE_LENGTH,
  parseFaultRules,
  requestMatcher,
  ruleMatcher,
  ruleMatches,
  stepFor,
  validateFaultRules,
} from './faults';

const rule = { id: 'api', url: '/api/', steps: [{ step: 'status', status: 503 }] };

describe('validateFaultRules', () => {
  it('rebuilds a set with its known fields only: methods upper-cased, header names lower-cased, defaults left out', () => {
    const checked = validateFaultRules({
      rules: [
        {
          id: 'api',
          url: '  /api/  ',
          method: 'get',
          probability: 1,
          enabled: true,
          extra: 'dropped',
          steps: [
            { step: 'status', status: 429, headers: { 'Retry-After': '2' }, body: '', note: 'dropped' },
            { step: 'slow', ms: 100, answer: { step: 'networkError' } },
            { step: 'slow', ms: 100, answer: { step: 'passthrough' } },
            { step: 'passthrough' },
          ],
        },
      ],
      seed: 7,
      other: true,
    });
    expect(checked).toEqual({
      ok: true,
      value: {
        rules: [
          {
            id: 'api',
            url: '/api/',
            method: 'GET',
            steps: [
              { step: 'status', status: 429, headers: { 'retry-after': '2' } },
              { step: 'slow', ms: 100, answer: { step: 'networkError' } },
              { step: 'slow', ms: 100 },
              { step: 'passthrough' },
            ],
          },
        ],
        seed: 7,
      },
    });
  });

  it('keeps a probability below 1 and a rule switched off', () => {
    expect(parseFaultRules({ rules: [{ ...rule, probability: 0.25, enabled: false }] })?.rules[0]).toEqual({
      ...rule,
      probability: 0.25,
      enabled: false,
    });
  });

  it.each([
    [{ rules: 'no' }, 'rules: expected at most 50 rules'],
    [
      { rules: Array.from({ length: MAX_RULES + 1 }, (_, n) => ({ ...rule, id: `r${n}` })) },
      'rules: expected at most',
    ],
    [{ rules: [{ ...rule, id: '' }] }, 'rules[0].id: expected 1 to'],
    [{ rules: [rule, rule] }, 'rules[1].id: "api" is taken'],
    [{ rules: [{ ...rule, url: 're:(' }] }, 'rules[0].url: Invalid regular expression'],
    [{ rules: [{ ...rule, url: 'is:nonsense' }] }, 'rules[0].url: Unknown is:nonsense'],
    [{ rules: [{ ...rule, method: 'GET /x' }] }, 'rules[0].method: expected a method name'],
    [{ rules: [{ ...rule, steps: [] }] }, 'rules[0].steps: expected 1 to 20 steps'],
    [
      { rules: [{ ...rule, steps: Array(MAX_STEPS + 1).fill({ step: 'passthrough' }) }] },
      'rules[0].steps: expected',
    ],
    [
      { rules: [{ ...rule, steps: [{ step: 'status', status: 700 }] }] },
      'rules[0].steps[0].status: expected an HTTP status',
    ],
    [
      { rules: [{ ...rule, steps: [{ step: 'status', status: 204, body: 'x' }] }] },
      'rules[0].steps[0].body: a 204 has no body',
    ],
    [
      { rules: [{ ...rule, steps: [{ step: 'status', status: 503, headers: { 'a b': 'x' } }] }] },
      'rules[0].steps[0].headers: "a b" is no header name',
    ],
    [
      // Stored lower-cased: `__PROTO__` would be assigned through the `__proto__` setter, and vanish.
      { rules: [{ ...rule, steps: [{ step: 'status', status: 503, headers: { __PROTO__: 'x' } }] }] },
      'rules[0].steps[0].headers: "__PROTO__" is no header name',
    ],
    [
      {
        rules: [
          { ...rule, steps: [{ step: 'status', status: 503, headers: JSON.parse('{"__proto__": "x"}') }] },
        ],
      },
      'rules[0].steps[0].headers: "__proto__" is no header name',
    ],
    [
      // One field (RFC 9110 §5.1): the first value would be silently lost.
      {
        rules: [
          {
            ...rule,
            steps: [{ step: 'status', status: 429, headers: { 'Retry-After': '1', 'retry-after': '99' } }],
          },
        ],
      },
      'rules[0].steps[0].headers: "retry-after" is there twice (names ignore case)',
    ],
    [
      { rules: [{ ...rule, steps: [{ step: 'status', status: 503, headers: { x: 'a\nb' } }] }] },
      'rules[0].steps[0].headers["x"]: expected one line, got a CR, LF or NUL',
    ],
    [
      { rules: [{ ...rule, steps: [{ step: 'status', status: 503, headers: { x: 'x'.repeat(1025) } }] }] },
      'rules[0].steps[0].headers["x"]: expected at most 1024 characters, got 1025',
    ],
    [
      { rules: [{ ...rule, steps: [{ step: 'status', status: 503, headers: { x: '5 €' } }] }] },
      'rules[0].steps[0].headers["x"]: expected ASCII or Latin-1 text (RFC 9110 §5.5), got "€"',
    ],
    [
      { rules: [{ ...rule, steps: [{ step: 'status', status: 503, headers: { x: 'a\u0007' } }] }] },
      'rules[0].steps[0].headers["x"]: expected ASCII or Latin-1 text (RFC 9110 §5.5), got "\\u0007"',
    ],
    [
      { rules: [{ ...rule, steps: [{ step: 'status', status: 503, headers: { x: 2 } }] }] },
      'rules[0].steps[0].headers["x"]: expected a string',
    ],
    [
      { rules: [{ ...rule, steps: [{ step: 'status', status: 503, statusText: 'x'.repeat(1025) }] }] },
      'rules[0].steps[0].statusText: expected at most 1024 characters, got 1025',
    ],
    [
      { rules: [{ ...rule, steps: [{ step: 'status', status: 503, statusText: 'Down \u{1F525}' }] }] },
      'rules[0].steps[0].statusText: expected ASCII or Latin-1 text (RFC 9110 §5.5), got "\u{1F525}"',
    ],
    [
      { rules: [{ ...rule, url: '/api/ status:503' }] },
      'rules[0].url: status:503 is known only after an attempt; a rule is matched as the request starts',
    ],
    [{ rules: [{ ...rule, url: '-is:retried' }] }, 'rules[0].url: is:retried is known only after an attempt'],
    [{ rules: [{ ...rule, url: 'IS:Failed' }] }, 'rules[0].url: is:failed is known only after an attempt'],
    [
      { rules: [{ ...rule, url: 'is:injected' }] },
      'rules[0].url: is:injected is known only after an attempt',
    ],
    [
      { rules: [{ ...rule, url: '/api/ -endpoint:eu.api' }] },
      'rules[0].url: endpoint:eu.api is known only after an attempt; a rule is matched as the request starts',
    ],
    [
      // The page reads no `is:hedged` (the list's own term): a word it does not know, as in the panel.
      { rules: [{ ...rule, url: 'is:hedged' }] },
      'rules[0].url: Unknown is:hedged; use one of retried, failed, refused, waited, injected, pending, success, truncated.',
    ],
    [
      { rules: [{ ...rule, url: '"outcome:exhausted"' }] },
      'rules[0].url: outcome:exhausted is known only after an attempt',
    ],
    [
      { rules: [{ ...rule, url: 'outcome:pending,deadline' }] },
      'rules[0].url: outcome:pending,deadline is known only after an attempt',
    ],
    [
      { rules: [{ ...rule, steps: [{ step: 'slow', ms: -1 }] }] },
      'rules[0].steps[0].ms: expected whole milliseconds',
    ],
    [
      { rules: [{ ...rule, steps: [{ step: 'slow', ms: 1, answer: { step: 'slow', ms: 1 } }] }] },
      "rules[0].steps[0].answer: a slow step's answer cannot wait again",
    ],
    [{ rules: [{ ...rule, steps: [{ step: 'teapot' }] }] }, 'rules[0].steps[0].step: expected'],
    [{ rules: [{ ...rule, probability: 2 }] }, 'rules[0].probability: expected a number in [0, 1]'],
    [{ rules: [rule], seed: 1.5 }, 'seed: expected an integer'],
  ])('refuses %j: %s', (value, error) => {
    const checked = validateFaultRules(value);
    expect(checked.ok).toBe(false);
    expect(checked.ok ? '' : checked.error).toContain(error);
  });

  it('takes a header value of Latin-1, spaces and tabs, and one of the longest', () => {
    const value = `caf\u00e9\t${'x'.repeat(MAX_VALUE_LENGTH - 5)}`;
    const checked = validateFaultRules({
      rules: [{ ...rule, steps: [{ step: 'status', status: 503, headers: { 'x-why': value } }] }],
    });
    expect(checked.ok && checked.value.rules[0]?.steps[0]).toEqual({
      step: 'status',
      status: 503,
      headers: { 'x-why': value },
    });
  });

  it('takes the terms a request has as it starts: is:pending, outcome:pending, and plain words', () => {
    for (const url of [
      'is:pending',
      '-is:pending',
      'outcome:pending',
      'exhausted',
      'status',
      're:status:503',
    ]) {
      expect(validateFaultRules({ rules: [{ ...rule, url }] }).ok, url).toBe(true);
    }
  });

  it('reads no getter and nothing inherited (a message may be a clone of anything)', () => {
    let read = false;
    const hostile = {
      id: 'x',
      url: '',
      get steps() {
        read = true;
        return [{ step: 'passthrough' }];
      },
    };
    expect(validateFaultRules({ rules: [hostile] }).ok).toBe(false);
    expect(read).toBe(false);
    expect(validateFaultRules({ rules: [Object.create({ ...rule })] }).ok).toBe(false);
  });
});

describe('requestMatcher', () => {
  const request = (url: string, method = 'GET', client = 'fetch') => ({
    url,
    method,
    client,
    requestId: 'r',
  });

  it('matches as the panel’s filter box does: words, -words, re:, client:, method:', () => {
    const test = (pattern: string, url: string, method?: string, client?: string) => {
      const matcher = requestMatcher(pattern);
      if (typeof matcher === 'string') throw new Error(matcher);
      return matcher(request(url, method, client));
    };
    expect(test('/api/', 'https://a.example/api/items')).toBe(true);
    expect(test('/API/', 'https://a.example/api/items')).toBe(true);
    expect(test('/api/', 'https://a.example/web/items')).toBe(false);
    expect(test('/api/ -health', 'https://a.example/api/health')).toBe(false);
    expect(test('re:/items$', 'https://a.example/api/items')).toBe(true);
    expect(test('client:ky', 'https://a.example/x', 'GET', 'ky')).toBe(true);
    expect(test('client:ky', 'https://a.example/x', 'GET', 'fetch')).toBe(false);
    expect(test('method:post', 'https://a.example/x', 'POST')).toBe(true);
    expect(test('', 'https://a.example/anything')).toBe(true);
  });

  it('says why a pattern cannot be used', () => {
    expect(requestMatcher('re:[')).toMatch(/Invalid regular expression/);
  });
});

describe('ruleMatcher', () => {
  // r1: a GET of /orders that waited out a Retry-After and succeeded; r2: a POST the breaker
  // refused; r3: a GET that ended in a 404. All three have ended.
  const rows = foldTimeline(scenario()).rows;
  const matched = (rule: { url: string; method?: string }) => {
    const matches = ruleMatcher(rule);
    if (typeof matches === 'string') throw new Error(matches);
    return rows.filter(matches).map((row) => row.requestId);
  };

  it('tests each row as it was when its request started, as the page tests a request', () => {
    // The filter box sees how the requests went; a rule sees them start.
    expect(rows.filter(compileFilter({ text: 'retry-after' }).test).map((row) => row.requestId)).toEqual([
      'r1',
    ]);
    expect(matched({ url: 'retry-after' })).toEqual([]);
    expect(rows.filter(compileFilter({ text: 'pending' }).test)).toEqual([]);
    expect(matched({ url: 'pending' })).toEqual(['r1', 'r2', 'r3']);
    expect(matched({ url: '-breaker' })).toEqual(['r1', 'r2', 'r3']);
  });

  it('takes the rule’s method as the page does, and its pattern’s terms', () => {
    expect(matched({ url: '' })).toEqual(['r1', 'r2', 'r3']);
    expect(matched({ url: '', method: 'GET' })).toEqual(['r1', 'r3']);
    expect(matched({ url: '/orders', method: 'get' })).toEqual(['r1']);
    expect(matched({ url: 'method:post' })).toEqual(['r2']);
    expect(ruleMatches({ url: '/orders', method: 'POST' }, rows[0] as (typeof rows)[number])).toBe(false);
  });

  it('says why a pattern cannot be a rule’s, and ruleMatches matches nothing with it', () => {
    expect(ruleMatcher({ url: 'is:retried' })).toBe(
      'is:retried is known only after an attempt; a rule is matched as the request starts',
    );
    expect(ruleMatches({ url: 'status:5xx' }, rows[0] as (typeof rows)[number])).toBe(false);
  });
});

describe('stepFor', () => {
  it('gives attempt n step n, and the last step to every attempt past the end', () => {
    const steps = [{ step: 'networkError' }, { step: 'passthrough' }] as const;
    const sequence = { id: 'r', url: '', steps };
    expect([1, 2, 3, 9].map((attempt) => stepFor(sequence, attempt))).toEqual([
      steps[0],
      steps[1],
      steps[1],
      steps[1],
    ]);
  });
});
