import { describe, expect, it } from 'vitest';
import { scenario } from '../model/fixtures';
import { foldTimeline } from '../model/timeline';
import type { FaultRule } from '../shared/faults';
import { describeRule, draftOf, EMPTY_DRAFT, matchCount, nextRuleId, readDraft } from './fault-draft';

const rows = foldTimeline(scenario()).rows;

describe('readDraft', () => {
  it('reads the form into a rule, leaving defaults out', () => {
    expect(
      readDraft({ method: 'GET', url: ' /api/* ', steps: '503, 503, 200', percent: '100' }, { id: 'a' }),
    ).toEqual({
      rule: {
        id: 'a',
        method: 'GET',
        url: '/api/*',
        steps: [{ step: 'status', status: 503 }, { step: 'status', status: 503 }, { step: 'passthrough' }],
      },
      errors: {},
    });
    expect(
      readDraft({ method: '', url: '', steps: 'slow 3s 503', percent: '12.5' }, { id: 'b', enabled: false }),
    ).toEqual({
      rule: {
        id: 'b',
        url: '',
        steps: [{ step: 'slow', ms: 3000, answer: { step: 'status', status: 503 } }],
        probability: 0.125,
        enabled: false,
      },
      errors: {},
    });
  });

  it('has no rule while the steps are empty, and no error for them either', () => {
    expect(readDraft(EMPTY_DRAFT, { id: 'a' })).toEqual({ errors: {} });
  });

  it('names each field’s problem', () => {
    expect(readDraft({ method: '', url: 're:[', steps: 'slow', percent: '-1' }, { id: 'a' })).toEqual({
      errors: {
        url: expect.stringMatching(/^Invalid regular expression/),
        steps: 'step 1 ("slow"): expected slow <ms> (at most 600000 ms), got "slow"',
        percent: 'Expected a percentage from 0 to 100.',
      },
    });
    expect(readDraft({ ...EMPTY_DRAFT, steps: '503', percent: '' }, { id: 'a' }).errors.percent).toBe(
      'Expected a percentage from 0 to 100.',
    );
  });

  it('refuses, as it is typed, a term a request answers only once it has been sent', () => {
    expect(readDraft({ ...EMPTY_DRAFT, url: 'orders status:503', steps: '503' }, { id: 'a' })).toEqual({
      errors: { url: 'status:503 is known only after an attempt; a rule is matched as the request starts' },
    });
    expect(readDraft({ ...EMPTY_DRAFT, url: '-is:retried', steps: '503' }, { id: 'a' }).errors.url).toBe(
      'is:retried is known only after an attempt; a rule is matched as the request starts',
    );
  });
});

describe('draftOf', () => {
  it('reads a rule back into the form, which reads it back to the same rule', () => {
    const rule: FaultRule = {
      id: 'r',
      method: 'POST',
      url: 'pay',
      steps: [{ step: 'status', status: 429, headers: { 'retry-after': '2' } }, { step: 'networkError' }],
      probability: 0.333,
    };
    const draft = draftOf(rule);
    expect(draft).toEqual({
      method: 'POST',
      url: 'pay',
      steps: '429 retry-after=2, networkError',
      percent: '33.3',
    });
    expect(readDraft(draft, rule).rule).toEqual(rule);
  });
});

describe('nextRuleId', () => {
  it('goes past the highest id, so a removed rule’s is not reused', () => {
    expect(nextRuleId([])).toBe('rule-1');
    expect(nextRuleId([{ id: 'rule-4' }, { id: 'imported' }, { id: 'rule-2' }] as FaultRule[])).toBe(
      'rule-5',
    );
  });
});

describe('matchCount', () => {
  it('counts the rows a method and a pattern name, or nothing for a pattern that is no filter', () => {
    expect(matchCount(rows, '', '')).toBe(3);
    expect(matchCount(rows, '', 'api.example')).toBe(2);
    expect(matchCount(rows, 'post', 'api.example')).toBe(1);
    expect(matchCount(rows, 'GET', '-orders')).toBe(1);
    expect(matchCount(rows, '', 're:(')).toBeUndefined();
  });

  it('tests each row as its request started, as the page matches a rule', () => {
    // The 404 and the 200 after retries are not known as the requests start.
    expect(matchCount(rows, '', '503')).toBe(0);
    expect(matchCount(rows, '', '404')).toBe(0);
    expect(matchCount(rows, '', 'not-retryable')).toBe(0);
    // Every request is pending as it starts.
    expect(matchCount(rows, '', 'pending')).toBe(3);
    expect(matchCount(rows, 'GET', 'is:pending')).toBe(2);
    expect(matchCount(rows, '', 'status:503')).toBeUndefined();
  });
});

describe('describeRule', () => {
  it('says a rule in one line', () => {
    expect(describeRule({ id: 'a', url: '', steps: [{ step: 'networkError' }], probability: 0.5 })).toBe(
      'Any method every URL → networkError (50 %)',
    );
  });
});
