import { describe, expect, it } from 'vitest';
import type { FaultRuleSet } from '../shared/faults';
import { type FaultsMessage, NAMESPACE, PROTOCOL_VERSION } from '../shared/protocol';
import { createFaultRules, faultsMessage, MAX_FRAMES } from './fault-rules';

const set = (id: string, seed?: number): FaultRuleSet => ({
  rules: [{ id, url: '/api/', steps: [{ step: 'status', status: 503 }] }],
  ...(seed === undefined ? {} : { seed }),
});
const DROP = faultsMessage({ rules: [] });
const APP = 'https://app.example';

/** Where each message went: `[tabId, frameId, message]`, frameId `'every frame'` for the whole tab. */
type Sent = [number, number | 'every frame', FaultsMessage];

function rules() {
  const sent: Sent[] = [];
  const faults = createFaultRules({
    sendToFrame: (tabId, frameId, message) => sent.push([tabId, frameId, message]),
    sendToTab: (tabId, message) => sent.push([tabId, 'every frame', message]),
  });
  return { rules: faults, sent };
}

/** A new document in frame `frameId` of the tab, of `origin`. */
const doc = (frameId: number, origin = APP) => ({ frameId, origin });

describe('the worker’s fault rules', () => {
  it('keeps rules per tab and sends each set to its own tab’s top frame', () => {
    const { rules: faults, sent } = rules();
    faults.set(1, set('one'));
    faults.set(2, set('two', 9));
    expect(sent).toEqual([
      [1, 0, faultsMessage(set('one'))],
      [2, 0, { ns: NAMESPACE, v: PROTOCOL_VERSION, kind: 'faults', rules: set('two').rules, seed: 9 }],
    ]);
    expect(faults.of(1)).toEqual(set('one'));
    expect(faults.of(2)).toEqual(set('two', 9));
    expect(faults.of(3)).toBeUndefined();
  });

  it('tells each new document of a tab its rules, and nothing while it has none', () => {
    const { rules: faults } = rules();
    expect(faults.forDocument(1, doc(0))).toBeUndefined();
    faults.set(1, set('one'));
    expect(faults.forDocument(1, doc(0))).toEqual(faultsMessage(set('one')));
    expect(faults.forDocument(1, doc(4))).toEqual(faultsMessage(set('one')));
    expect(faults.forDocument(2, doc(0))).toBeUndefined();
  });

  it('sends rules to the top frame and the frames of its origin, and nothing to a frame of another origin', () => {
    const { rules: faults, sent } = rules();
    faults.forDocument(1, doc(0));
    faults.forDocument(1, doc(3));
    faults.forDocument(1, doc(5, 'https://ads.example'));
    faults.forDocument(1, doc(6, 'http://app.example'));
    faults.set(1, set('one'));
    expect(sent).toEqual([
      [1, 0, faultsMessage(set('one'))],
      [1, 3, faultsMessage(set('one'))],
    ]);
    expect(faults.forDocument(1, doc(5, 'https://ads.example'))).toBeUndefined();
    expect(faults.forDocument(1, doc(7, 'https://widget.example'))).toBeUndefined();
    expect(faults.forDocument(1, doc(8))).toEqual(faultsMessage(set('one')));
    // Told on its new documents only: nothing else was sent.
    expect(sent).toHaveLength(2);
  });

  it('gives a frame nothing before the top document is known, and nothing to an opaque or a file’s origin', () => {
    const { rules: faults } = rules();
    faults.set(1, set('one'));
    expect(faults.forDocument(1, doc(3))).toBeUndefined();
    // A sandboxed top page: its frames are not of its origin, even sandboxed the same way.
    faults.forDocument(1, doc(0, 'null (frame 0)'));
    expect(faults.forDocument(1, doc(3, 'null (frame 3)'))).toBeUndefined();
    faults.forDocument(1, doc(0, 'file://'));
    expect(faults.forDocument(1, doc(3, 'file://'))).toBeUndefined();
    // The top frame always is the page.
    expect(faults.forDocument(1, doc(0, 'null (frame 0)'))).toEqual(faultsMessage(set('one')));
  });

  it('lets a new top document’s origin decide, forgetting the frames of the page before', () => {
    const { rules: faults, sent } = rules();
    faults.forDocument(1, doc(0));
    faults.forDocument(1, doc(3));
    faults.set(1, set('one'));
    expect(faults.forDocument(1, doc(0, 'https://other.example'))).toEqual(faultsMessage(set('one')));
    expect(faults.forDocument(1, doc(4))).toBeUndefined();
    expect(faults.forDocument(1, doc(5, 'https://other.example'))).toEqual(faultsMessage(set('one')));
    sent.length = 0;
    faults.set(1, set('two'));
    expect(sent).toEqual([
      [1, 0, faultsMessage(set('two'))],
      [1, 5, faultsMessage(set('two'))],
    ]);
    // A frame that goes to another origin is no longer sent them.
    faults.forDocument(1, doc(5, 'https://ads.example'));
    sent.length = 0;
    faults.set(1, set('three'));
    expect(sent).toEqual([[1, 0, faultsMessage(set('three'))]]);
  });

  it('has every frame of the tab drop its rules when its last panel goes, and tells later documents nothing', () => {
    const { rules: faults, sent } = rules();
    faults.forDocument(1, doc(0));
    faults.forDocument(1, doc(3));
    faults.set(1, set('one'));
    faults.set(2, set('two'));
    sent.length = 0;
    faults.panelsGone(1);
    expect(sent).toEqual([[1, 'every frame', DROP]]);
    expect(faults.forDocument(1, doc(0))).toBeUndefined();
    expect(faults.forDocument(1, doc(3))).toBeUndefined();
    expect(faults.of(2)).toEqual(set('two'));
    // A tab that had none has nothing to drop.
    faults.panelsGone(3);
    expect(sent).toHaveLength(1);
  });

  it('takes an empty set as removing the rules from every frame, sent only to a tab that had some', () => {
    const { rules: faults, sent } = rules();
    faults.set(1, { rules: [] });
    expect(sent).toEqual([]);
    faults.set(1, set('one'));
    faults.set(1, { rules: [] });
    expect(sent.at(-1)).toEqual([1, 'every frame', DROP]);
    expect(faults.of(1)).toBeUndefined();
  });

  it(`keeps at most ${MAX_FRAMES} frames of a tab, and has the one it drops drop its rules`, () => {
    const { rules: faults, sent } = rules();
    faults.forDocument(1, doc(0));
    for (let frameId = 1; frameId <= MAX_FRAMES; frameId += 1) faults.forDocument(1, doc(frameId));
    // Frame 1 is heard of again: frame 2 is now the one heard of least recently.
    faults.forDocument(1, doc(1));
    faults.set(1, set('one'));
    expect(sent).toHaveLength(1 + MAX_FRAMES);
    sent.length = 0;
    faults.forDocument(1, doc(MAX_FRAMES + 1));
    expect(sent).toEqual([[1, 2, DROP]]);
    sent.length = 0;
    faults.set(1, set('two'));
    const frames = sent.map(([, frameId]) => frameId);
    expect(frames).toHaveLength(1 + MAX_FRAMES);
    expect(frames).not.toContain(2);
    expect(frames).toContain(MAX_FRAMES + 1);
  });

  it('forgets a closed tab and its frames without telling it anything', () => {
    const { rules: faults, sent } = rules();
    faults.forDocument(1, doc(0));
    faults.set(1, set('one'));
    sent.length = 0;
    faults.tabClosed(1);
    faults.panelsGone(1);
    expect(sent).toEqual([]);
    expect(faults.of(1)).toBeUndefined();
    faults.set(1, set('two'));
    expect(faults.forDocument(1, doc(3))).toBeUndefined();
  });
});
