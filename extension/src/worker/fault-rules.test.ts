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

/** Set's message as a page of `origin` is given it: stamped with that origin. */
const toPage = (rules: FaultRuleSet, origin = APP) => faultsMessage(rules, origin);

/** A new document in frame `frameId` of the tab, of `origin`. */
const doc = (frameId: number, origin = APP) => ({ frameId, origin });

describe('the worker’s fault rules', () => {
  it('keeps rules per tab and sends each set to its own tab’s top frame, stamped with the top origin', () => {
    const { rules: faults, sent } = rules();
    faults.forDocument(1, doc(0));
    faults.forDocument(2, doc(0, 'https://two.example'));
    faults.set(1, set('one'));
    faults.set(2, set('two', 9));
    expect(sent).toEqual([
      [1, 0, toPage(set('one'))],
      [
        2,
        0,
        {
          ns: NAMESPACE,
          v: PROTOCOL_VERSION,
          kind: 'faults',
          rules: set('two').rules,
          seed: 9,
          origin: 'https://two.example',
        },
      ],
    ]);
    expect(faults.of(1)).toEqual({ ...set('one'), origin: APP, applied: true });
    expect(faults.of(2)).toEqual({ ...set('two', 9), origin: 'https://two.example', applied: true });
    expect(faults.of(3)).toBeUndefined();
  });

  it('stamps an opaque top origin as pages read theirs: "null"', () => {
    const { rules: faults, sent } = rules();
    faults.forDocument(1, doc(0, 'null (frame 0)'));
    faults.set(1, set('one'));
    expect(sent).toEqual([[1, 0, { ...faultsMessage(set('one')), origin: 'null' }]]);
    expect(faults.of(1)).toMatchObject({ origin: 'null (frame 0)', applied: true });
  });

  it('tells each new document of a tab its rules, and nothing while it has none', () => {
    const { rules: faults } = rules();
    expect(faults.forDocument(1, doc(0))).toBeUndefined();
    faults.set(1, set('one'));
    expect(faults.forDocument(1, doc(0))).toEqual(toPage(set('one')));
    expect(faults.forDocument(1, doc(4))).toEqual(toPage(set('one')));
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
      [1, 0, toPage(set('one'))],
      [1, 3, toPage(set('one'))],
    ]);
    expect(faults.forDocument(1, doc(5, 'https://ads.example'))).toBeUndefined();
    expect(faults.forDocument(1, doc(7, 'https://widget.example'))).toBeUndefined();
    expect(faults.forDocument(1, doc(8))).toEqual(toPage(set('one')));
    // Told on its new documents only: nothing else was sent.
    expect(sent).toHaveLength(2);
  });

  it('gives a frame nothing before the top document is known, and nothing to an opaque or a file’s origin', () => {
    const { rules: faults } = rules();
    faults.forDocument(1, doc(0));
    faults.set(1, set('one'));
    const other = createFaultRules({ sendToFrame: () => {}, sendToTab: () => {} });
    other.set(1, set('one'), APP);
    expect(other.forDocument(1, doc(3))).toBeUndefined();
    // A sandboxed top page: its frames are not of its origin, even sandboxed the same way.
    faults.set(1, { rules: [] });
    faults.forDocument(1, doc(0, 'null (frame 0)'));
    faults.set(1, set('one'));
    expect(faults.forDocument(1, doc(3, 'null (frame 3)'))).toBeUndefined();
    faults.set(1, { rules: [] });
    faults.forDocument(1, doc(0, 'file://'));
    faults.set(1, set('one'));
    expect(faults.forDocument(1, doc(3, 'file://'))).toBeUndefined();
    expect(faults.forDocument(1, doc(0, 'file://'))).toEqual(toPage(set('one'), 'file://'));
  });

  it('holds rules back from a top document of another origin than they were set for, until the top comes back', () => {
    const { rules: faults, sent } = rules();
    faults.forDocument(1, doc(0));
    faults.forDocument(1, doc(3));
    faults.set(1, set('one'));
    // A framed ad navigates the top frame to its own origin (or the developer follows a link).
    expect(faults.forDocument(1, doc(0, 'https://ads.example'))).toBeUndefined();
    expect(faults.of(1)).toEqual({ ...set('one'), origin: APP, applied: false });
    // Its frames of its own origin get nothing either, nor do the app's frames in it.
    expect(faults.forDocument(1, doc(5, 'https://ads.example'))).toBeUndefined();
    expect(faults.forDocument(1, doc(4))).toBeUndefined();
    // The app's own page again: its frames of the page before went with it.
    expect(faults.forDocument(1, doc(0))).toEqual(toPage(set('one')));
    expect(faults.of(1)?.applied).toBe(true);
    expect(faults.forDocument(1, doc(6))).toEqual(toPage(set('one')));
    sent.length = 0;
    faults.set(1, set('two'));
    expect(sent).toEqual([
      [1, 0, toPage(set('two'))],
      [1, 6, toPage(set('two'))],
    ]);
    // A frame that goes to another origin is no longer sent them.
    faults.forDocument(1, doc(6, 'https://ads.example'));
    sent.length = 0;
    faults.set(1, set('three'));
    expect(sent).toEqual([[1, 0, toPage(set('three'))]]);
  });

  it('binds rules set while the page is on another origin to that origin: setting them is applying them there', () => {
    const { rules: faults, sent } = rules();
    faults.forDocument(1, doc(0));
    faults.set(1, set('one'));
    faults.forDocument(1, doc(0, 'https://other.example'));
    sent.length = 0;
    faults.set(1, set('two'));
    expect(sent).toEqual([[1, 0, toPage(set('two'), 'https://other.example')]]);
    expect(faults.of(1)).toEqual({ ...set('two'), origin: 'https://other.example', applied: true });
    expect(faults.forDocument(1, doc(0))).toBeUndefined();
  });

  it('binds rules a worker gets before it heard of the top document to the origin the panel names, else to the first top document', () => {
    // A worker started since the panel set them: the panel sends them again, with the origin it was told.
    const { rules: faults, sent } = rules();
    faults.set(1, set('one'), APP);
    expect(sent).toEqual([[1, 0, toPage(set('one'))]]);
    expect(faults.of(1)).toEqual({ ...set('one'), origin: APP, applied: true });
    expect(faults.forDocument(1, doc(0, 'https://ads.example'))).toBeUndefined();
    expect(faults.of(1)?.applied).toBe(false);
    // The panel's word does not override what the worker knows of the top document.
    faults.set(1, set('two'), APP);
    expect(faults.of(1)?.origin).toBe('https://ads.example');
    // Nobody knows: held until the top frame's relay names its document.
    sent.length = 0;
    faults.set(2, set('three'));
    expect(sent).toEqual([]);
    expect(faults.of(2)).toEqual({ ...set('three'), applied: false });
    expect(faults.forDocument(2, doc(0))).toEqual(toPage(set('three')));
    expect(faults.of(2)).toEqual({ ...set('three'), origin: APP, applied: true });
  });

  it('has every frame of the tab drop its rules when its last panel goes, and tells later documents nothing', () => {
    const { rules: faults, sent } = rules();
    faults.forDocument(1, doc(0));
    faults.forDocument(1, doc(3));
    faults.set(1, set('one'));
    faults.set(2, set('two'), APP);
    sent.length = 0;
    faults.panelsGone(1);
    expect(sent).toEqual([[1, 'every frame', DROP]]);
    expect(faults.forDocument(1, doc(0))).toBeUndefined();
    expect(faults.forDocument(1, doc(3))).toBeUndefined();
    expect(faults.of(2)).toMatchObject(set('two'));
    // A tab this worker knows no rules of may hold some a worker stopped since gave it.
    faults.panelsGone(3);
    expect(sent).toEqual([
      [1, 'every frame', DROP],
      [3, 'every frame', DROP],
    ]);
  });

  it('takes an empty set as removing the rules from every frame, even where this worker knows of none', () => {
    const { rules: faults, sent } = rules();
    // A worker started since another one sent the page rules: it has nothing, yet the page may.
    faults.set(1, { rules: [] });
    expect(sent).toEqual([[1, 'every frame', DROP]]);
    faults.set(1, set('one'), APP);
    faults.set(1, { rules: [] });
    expect(sent.at(-1)).toEqual([1, 'every frame', DROP]);
    expect(faults.of(1)).toBeUndefined();
  });

  it('has every frame drop its rules when a panel subscribes to a tab it knows no rules of, and only then', () => {
    const { rules: faults, sent } = rules();
    faults.panelSubscribed(1);
    expect(sent).toEqual([[1, 'every frame', DROP]]);
    faults.set(1, set('one'), APP);
    sent.length = 0;
    faults.panelSubscribed(1);
    expect(sent).toEqual([]);
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
    expect(sent).toEqual([]);
    expect(faults.of(1)).toBeUndefined();
    faults.set(1, set('two'));
    expect(faults.forDocument(1, doc(3))).toBeUndefined();
  });
});
