import { describe, expect, it } from 'vitest';
import { MAX_BATCH, NAMESPACE, PROTOCOL_VERSION } from '../shared/protocol';
import { MAX_ID_LENGTH, MAX_STRING_LENGTH } from '../shared/schema';
import {
  frameDocumentOf,
  isDetectedMessage,
  isDocumentMessage,
  isRelayMessage,
  newDocumentOf,
  originOf,
  panelState,
  parsePanelRequest,
  replayRoute,
  senderOrigin,
} from './messages';

describe('parsePanelRequest', () => {
  it('accepts the panel’s requests', () => {
    expect(parsePanelRequest({ kind: 'subscribe', tabId: 4 })).toEqual({ kind: 'subscribe', tabId: 4 });
    expect(parsePanelRequest({ kind: 'clear', tabId: 4, extra: 1 })).toEqual({ kind: 'clear', tabId: 4 });
    expect(parsePanelRequest({ kind: 'settings', tabId: 4, settings: { record: false } })).toEqual({
      kind: 'settings',
      tabId: 4,
      settings: { record: false },
    });
  });

  it('accepts a tab’s fault rules, checked and rebuilt, and refuses a set that does not check whole', () => {
    const rules = [
      { id: 'a', url: '/api/', method: 'get', steps: [{ step: 'status', status: 503 }], extra: 1 },
    ];
    expect(parsePanelRequest({ kind: 'faults', tabId: 4, rules, seed: 3 })).toEqual({
      kind: 'faults',
      tabId: 4,
      rules: [{ id: 'a', url: '/api/', method: 'GET', steps: [{ step: 'status', status: 503 }] }],
      seed: 3,
    });
    expect(parsePanelRequest({ kind: 'faults', tabId: 4, rules: [] })).toEqual({
      kind: 'faults',
      tabId: 4,
      rules: [],
    });
    expect(
      parsePanelRequest({ kind: 'faults', tabId: 4, rules: [{ ...rules[0], steps: [] }] }),
    ).toBeUndefined();
    expect(parsePanelRequest({ kind: 'faults', tabId: 4 })).toBeUndefined();
    expect(parsePanelRequest({ kind: 'faults', tabId: 4, rules: [], seed: 'x' })).toBeUndefined();
  });

  it('keeps the origin a panel says its rules are bound to, and leaves out one that is no text', () => {
    expect(parsePanelRequest({ kind: 'faults', tabId: 4, rules: [], origin: 'https://app.example' })).toEqual(
      {
        kind: 'faults',
        tabId: 4,
        rules: [],
        origin: 'https://app.example',
      },
    );
    for (const origin of [1, '', 'x'.repeat(100_000)]) {
      expect(parsePanelRequest({ kind: 'faults', tabId: 4, rules: [], origin })).toEqual({
        kind: 'faults',
        tabId: 4,
        rules: [],
      });
    }
  });

  it('accepts a replay of a row’s request, named by its frame’s origin, its id, client, method and URL', () => {
    const replay = {
      kind: 'replay',
      tabId: 4,
      source: 'https://app.example',
      requestId: 'r1',
      client: 'fetch',
      method: 'GET',
      url: 'https://api.example/items',
    };
    expect(parsePanelRequest({ ...replay, extra: 1 })).toEqual(replay);
    for (const patch of [
      { source: undefined },
      { source: '' },
      { source: 'x'.repeat(MAX_STRING_LENGTH + 1) },
      { requestId: 7 },
      { requestId: '' },
      { requestId: 'r'.repeat(MAX_ID_LENGTH + 1) },
      { client: undefined },
      { method: '' },
      { url: 1 },
      { url: 'x'.repeat(MAX_STRING_LENGTH + 1) },
    ]) {
      expect(parsePanelRequest({ ...replay, ...patch })).toBeUndefined();
    }
  });

  it('refuses anything else', () => {
    for (const value of [
      null,
      { kind: 'subscribe' },
      { kind: 'subscribe', tabId: -1 },
      { kind: 'subscribe', tabId: '4' },
      { kind: 'subscribe', tabId: 1.5 },
      { kind: 'eval', tabId: 4 },
      { kind: 'settings', tabId: 4 },
      { kind: 'settings', tabId: 4, settings: { record: 'off' } },
    ]) {
      expect(parsePanelRequest(value)).toBeUndefined();
    }
  });
});

describe('isRelayMessage', () => {
  const message = { ns: NAMESPACE, v: PROTOCOL_VERSION, kind: 'events', events: [] };
  it('accepts a relay batch of at most MAX_BATCH events, and nothing else', () => {
    expect(isRelayMessage(message)).toBe(true);
    expect(isRelayMessage({ ...message, events: Array.from({ length: MAX_BATCH + 1 }) })).toBe(false);
    expect(isRelayMessage({ ...message, ns: 'other' })).toBe(false);
    expect(isRelayMessage({ ...message, v: 2 })).toBe(false);
    expect(isRelayMessage({ ...message, kind: 'hello' })).toBe(false);
    expect(isRelayMessage({ ...message, events: 'x' })).toBe(false);
  });
});

describe('originOf', () => {
  it('is the URL’s origin, or "null"', () => {
    expect(originOf('https://shop.example:8443/cart?x=1')).toBe('https://shop.example:8443');
    expect(originOf('about:blank')).toBe('null');
    expect(originOf(undefined)).toBe('null');
  });
});

describe('senderOrigin', () => {
  it('is the origin the browser gives the sending frame, else its URL’s', () => {
    // Chrome: `sender.origin`. A frame of another site is that site, whatever it sends.
    expect(
      senderOrigin({ url: 'https://widget.example/ad', origin: 'https://widget.example', frameId: 3 }),
    ).toBe('https://widget.example');
    // An about:blank frame has the origin it inherited, which only `sender.origin` says.
    expect(senderOrigin({ url: 'about:blank', origin: 'https://shop.example', frameId: 2 })).toBe(
      'https://shop.example',
    );
    // A browser that gives no `sender.origin`: the URL's.
    expect(senderOrigin({ url: 'https://shop.example/cart', frameId: 0 })).toBe('https://shop.example');
  });

  it('trusts the browser’s opaque origin over the URL of a sandboxed frame', () => {
    expect(senderOrigin({ url: 'https://shop.example/embed', origin: 'null', frameId: 4 })).toBe(
      'null (frame 4)',
    );
  });

  it('names an opaque origin with its frame: two sandboxed frames are two origins', () => {
    const a = senderOrigin({ url: 'about:srcdoc', origin: 'null', frameId: 4 });
    const b = senderOrigin({ url: 'data:text/html,x', frameId: 5 });
    expect([a, b]).toEqual(['null (frame 4)', 'null (frame 5)']);
    expect(senderOrigin({})).toBe('null');
  });
});

describe('a relay’s "this page uses Retryline"', () => {
  it('is known by namespace, version and kind', () => {
    const detected = { ns: NAMESPACE, v: PROTOCOL_VERSION, kind: 'detected' };
    expect(isDetectedMessage(detected)).toBe(true);
    expect(isDocumentMessage(detected)).toBe(false);
    expect(isRelayMessage(detected)).toBe(false);
    for (const value of [null, 'detected', { ...detected, ns: 'other' }, { ...detected, v: 2 }]) {
      expect(isDetectedMessage(value)).toBe(false);
    }
    expect(isDetectedMessage({ ns: NAMESPACE, v: PROTOCOL_VERSION, kind: 'document' })).toBe(false);
  });
});

describe('a relay’s new-document notice', () => {
  const notice = { ns: NAMESPACE, v: PROTOCOL_VERSION, kind: 'document' };

  it('is known by namespace, version and kind, and is not a batch of events', () => {
    expect(isDocumentMessage(notice)).toBe(true);
    expect(isRelayMessage(notice)).toBe(false);
    for (const value of [
      null,
      'document',
      { ...notice, ns: 'other' },
      { ...notice, v: 2 },
      { ...notice, kind: 'events' },
    ]) {
      expect(isDocumentMessage(value)).toBe(false);
    }
  });

  it('stands for the tab and the URL its sender names, only from a tab’s top frame', () => {
    const url = 'https://shop.example/cart?id=1';
    expect(newDocumentOf({ tab: { id: 7 }, frameId: 0, url })).toEqual({ tabId: 7, url });
    // A frame inside the page, a document outside any tab, no URL: no new page.
    expect(newDocumentOf({ tab: { id: 7 }, frameId: 3, url })).toBeUndefined();
    expect(newDocumentOf({ tab: { id: -1 }, frameId: 0, url })).toBeUndefined();
    expect(newDocumentOf({ frameId: 0, url })).toBeUndefined();
    expect(newDocumentOf({ tab: { id: 7 }, url })).toBeUndefined();
    expect(newDocumentOf({ tab: { id: 7 }, frameId: 0 })).toBeUndefined();
  });
});

describe('frameDocumentOf', () => {
  it('stands for the frame its sender names and the origin the browser gives its document', () => {
    expect(frameDocumentOf({ frameId: 0, url: 'https://shop.example/cart' })).toEqual({
      frameId: 0,
      origin: 'https://shop.example',
    });
    expect(
      frameDocumentOf({ frameId: 3, url: 'https://shop.example/embed', origin: 'https://widget.example' }),
    ).toEqual({ frameId: 3, origin: 'https://widget.example' });
    // An opaque origin is its frame's own.
    expect(frameDocumentOf({ frameId: 4, url: 'https://shop.example/x', origin: 'null' })).toEqual({
      frameId: 4,
      origin: 'null (frame 4)',
    });
  });

  it('stands for nothing when the browser named no frame', () => {
    expect(frameDocumentOf({ url: 'https://shop.example/' })).toBeUndefined();
    expect(frameDocumentOf({ frameId: -1, url: 'https://shop.example/' })).toBeUndefined();
    expect(frameDocumentOf({ frameId: 1.5, url: 'https://shop.example/' })).toBeUndefined();
  });
});

describe('replayRoute', () => {
  const target = { requestId: 'r1', client: 'fetch', method: 'GET', url: 'https://api.example/items' };
  const message = { ns: NAMESPACE, v: PROTOCOL_VERSION, kind: 'replay', ...target };

  it('sends a replay to every frame of the tab, with the origin each relay must have', () => {
    expect(replayRoute('https://app.example', target)).toEqual({
      message: { ...message, origin: 'https://app.example' },
    });
  });

  it('sends the replay of an opaque origin’s request to its frame alone, for a relay whose origin is opaque', () => {
    const source = senderOrigin({ origin: 'null', frameId: 12 });
    // The frame may show a document of another origin since: its relay then passes nothing on.
    expect(replayRoute(source, target)).toEqual({ message: { ...message, origin: 'null' }, frameId: 12 });
    // An opaque origin no frame is known for: every relay whose own origin is opaque.
    expect(replayRoute('null', target)).toEqual({ message: { ...message, origin: 'null' } });
  });
});

describe('panelState', () => {
  it('says whether a panel is subscribed to the tab, and nothing else', () => {
    expect(panelState(true)).toEqual({ ns: NAMESPACE, v: PROTOCOL_VERSION, kind: 'panel', open: true });
    expect(panelState(false)).toEqual({ ns: NAMESPACE, v: PROTOCOL_VERSION, kind: 'panel', open: false });
  });
});
