import { describe, expect, it } from 'vitest';
import { MAX_BATCH, NAMESPACE, PROTOCOL_VERSION } from '../shared/protocol';
import { isRelayMessage, originOf, parsePanelRequest } from './messages';

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
