import { describe, expect, it } from 'vitest';
import { formatSteps, parseSteps } from './fault-shorthand';
import { type RuleStep, validateFaultRules } from './faults';

describe('parseSteps', () => {
  it('reads 503, 503, 200 as two 503s and the server’s own answer', () => {
    expect(parseSteps('503, 503, 200')).toEqual({
      ok: true,
      value: [{ step: 'status', status: 503 }, { step: 'status', status: 503 }, { step: 'passthrough' }],
    });
  });

  it('reads headers, network errors, waits and passthrough', () => {
    expect(
      parseSteps(
        '429 Retry-After=2 x-why=test, networkError, network-error, error, slow 1.5s, slow 200ms 504, slow 10 pass, pass, passthrough',
      ),
    ).toEqual({
      ok: true,
      value: [
        { step: 'status', status: 429, headers: { 'retry-after': '2', 'x-why': 'test' } },
        { step: 'networkError' },
        { step: 'networkError' },
        { step: 'networkError' },
        { step: 'slow', ms: 1500 },
        { step: 'slow', ms: 200, answer: { step: 'status', status: 504 } },
        { step: 'slow', ms: 10 },
        { step: 'passthrough' },
        { step: 'passthrough' },
      ],
    });
  });

  it('reads a 2xx with headers as a made-up answer, not as passthrough', () => {
    expect(parseSteps('200 x-from=fault')).toEqual({
      ok: true,
      value: [{ step: 'status', status: 200, headers: { 'x-from': 'fault' } }],
    });
  });

  it.each([
    ['', 'step 1 (""): a step is missing'],
    ['503,', 'step 2 (""): a step is missing'],
    ['50x', 'step 1 ("50x"): expected a status in [200, 599]'],
    ['199', 'expected a status in [200, 599]'],
    ['503 retry-after', 'expected headers as name=value, got "retry-after"'],
    ['slow', 'expected slow <ms>'],
    ['slow 10m', 'expected slow <ms>'],
    ['slow 10 slow 10', 'a slow step waits once'],
    ['error 503', 'error takes nothing after it'],
    [Array(21).fill('503').join(','), 'at most 20 steps'],
    [
      '503 x-why=5€',
      'step 1 ("503 x-why=5€"): header x-why: expected ASCII or Latin-1 text (RFC 9110 §5.5), got "€"',
    ],
  ])('refuses %j: %s', (text, error) => {
    const parsed = parseSteps(text);
    expect(parsed.ok).toBe(false);
    expect(parsed.ok ? '' : parsed.error).toContain(error);
  });

  it('refuses a header value longer than the rule set takes, saying so', () => {
    expect(parseSteps(`429 retry-after=1 x-why=${'x'.repeat(1025)}`)).toEqual({
      ok: false,
      error: expect.stringMatching(
        /^step 1 \(".*"\): header x-why: expected at most 1024 characters, got 1025$/,
      ),
    });
  });

  it('reads what the rule set takes: a header value of Latin-1, and one of the longest', () => {
    const value = `caf\u00e9${'x'.repeat(1020)}`;
    const parsed = parseSteps(`503 x-why=${value}`);
    expect(parsed).toEqual({
      ok: true,
      value: [{ step: 'status', status: 503, headers: { 'x-why': value } }],
    });
    expect(parsed.ok && validateFaultRules({ rules: [{ id: 'r', url: '', steps: parsed.value }] }).ok).toBe(
      true,
    );
  });
});

describe('formatSteps', () => {
  it('writes steps that parseSteps reads back the same', () => {
    const text = '429 retry-after=2, networkError, slow 1500, slow 200 504, passthrough';
    const parsed = parseSteps(text);
    if (!parsed.ok) throw new Error(parsed.error);
    expect(formatSteps(parsed.value)).toBe(text);
  });

  it.each<[string, RuleStep]>([
    ['a body', { step: 'status', status: 503, body: 'down' }],
    ['a reason phrase', { step: 'status', status: 503, statusText: 'Down' }],
    [
      'a header value with a comma',
      { step: 'status', status: 503, headers: { 'retry-after': 'Wed, 21 Oct 2015 07:28:00 GMT' } },
    ],
    ['a made-up 200 without headers', { step: 'status', status: 200 }],
    [
      'a slow step answered with a body',
      { step: 'slow', ms: 1, answer: { step: 'status', status: 503, body: 'x' } },
    ],
  ])('cannot write %s in one line', (_name, step) => {
    expect(formatSteps([step])).toBeUndefined();
  });
});
