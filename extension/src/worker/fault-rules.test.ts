import { describe, expect, it } from 'vitest';
import type { FaultRuleSet } from '../shared/faults';
import { type FaultsMessage, NAMESPACE, PROTOCOL_VERSION } from '../shared/protocol';
import { createFaultRules, faultsMessage } from './fault-rules';

const set = (id: string, seed?: number): FaultRuleSet => ({
  rules: [{ id, url: '/api/', steps: [{ step: 'status', status: 503 }] }],
  ...(seed === undefined ? {} : { seed }),
});

function rules() {
  const sent: Array<[number, FaultsMessage]> = [];
  return { rules: createFaultRules({ sendToTab: (tabId, message) => sent.push([tabId, message]) }), sent };
}

describe('the worker’s fault rules', () => {
  it('keeps rules per tab and sends each set to its own tab', () => {
    const { rules: faults, sent } = rules();
    faults.set(1, set('one'));
    faults.set(2, set('two', 9));
    expect(sent).toEqual([
      [1, faultsMessage(set('one'))],
      [2, { ns: NAMESPACE, v: PROTOCOL_VERSION, kind: 'faults', rules: set('two').rules, seed: 9 }],
    ]);
    expect(faults.of(1)).toEqual(set('one'));
    expect(faults.of(2)).toEqual(set('two', 9));
    expect(faults.of(3)).toBeUndefined();
  });

  it('tells each new document of a tab its rules, and nothing while it has none', () => {
    const { rules: faults } = rules();
    expect(faults.forDocument(1)).toBeUndefined();
    faults.set(1, set('one'));
    expect(faults.forDocument(1)).toEqual(faultsMessage(set('one')));
    expect(faults.forDocument(2)).toBeUndefined();
  });

  it('has the tab drop its rules when its last panel goes, and tells later documents nothing', () => {
    const { rules: faults, sent } = rules();
    faults.set(1, set('one'));
    faults.set(2, set('two'));
    sent.length = 0;
    faults.panelsGone(1);
    expect(sent).toEqual([[1, faultsMessage({ rules: [] })]]);
    expect(faults.forDocument(1)).toBeUndefined();
    expect(faults.of(2)).toEqual(set('two'));
    // A tab that had none has nothing to drop.
    faults.panelsGone(3);
    expect(sent).toHaveLength(1);
  });

  it('takes an empty set as removing the rules, sent only to a tab that had some', () => {
    const { rules: faults, sent } = rules();
    faults.set(1, { rules: [] });
    expect(sent).toEqual([]);
    faults.set(1, set('one'));
    faults.set(1, { rules: [] });
    expect(sent.at(-1)).toEqual([1, faultsMessage({ rules: [] })]);
    expect(faults.of(1)).toBeUndefined();
  });

  it('forgets a closed tab without telling it anything', () => {
    const { rules: faults, sent } = rules();
    faults.set(1, set('one'));
    sent.length = 0;
    faults.tabClosed(1);
    faults.panelsGone(1);
    expect(sent).toEqual([]);
    expect(faults.of(1)).toBeUndefined();
  });
});
