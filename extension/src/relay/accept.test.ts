import { describe, expect, it } from 'vitest';
import { MAX_BATCH, MAX_EVENT_BYTES, NAMESPACE, PROTOCOL_VERSION } from '../shared/protocol';
import {
  acceptPageMessage,
  documentAnswer,
  faultsFromWorker,
  NO_FAULTS,
  type PageLike,
  panelFromWorker,
  panelMessage,
  passesFaults,
  replayFromWorker,
} from './accept';

const self = { name: 'the page window' };
const page: PageLike = { window: self, location: { origin: 'https://shop.example', protocol: 'https:' } };
const event = { v: 1, type: 'budget', requestId: 'r1', t: 1, key: 'k', remaining: 1, allowed: true };
const data = { ns: NAMESPACE, v: PROTOCOL_VERSION, kind: 'events', events: [event] };
const message = (patch: Partial<{ source: unknown; origin: string; data: unknown }> = {}) => ({
  source: self,
  origin: 'https://shop.example',
  data,
  ...patch,
});

describe('acceptPageMessage', () => {
  it('accepts the hook’s events from its own window and origin, as plain JSON', () => {
    const accepted = acceptPageMessage(message(), page);
    expect(accepted).toEqual({
      kind: 'events',
      message: { ns: NAMESPACE, v: PROTOCOL_VERSION, kind: 'events', events: [event] },
      dropped: 0,
    });
    expect(accepted?.kind === 'events' && accepted.message.events[0]).not.toBe(event);
  });

  it('ignores a message from another window (a frame or an opener)', () => {
    expect(acceptPageMessage(message({ source: { name: 'an iframe' } }), page)).toBeUndefined();
    expect(acceptPageMessage(message({ source: null }), page)).toBeUndefined();
  });

  it('ignores a message from another origin', () => {
    expect(acceptPageMessage(message({ origin: 'https://evil.example' }), page)).toBeUndefined();
    expect(acceptPageMessage(message({ origin: 'null' }), page)).toBeUndefined();
  });

  it('accepts the opaque origin of a file: page or a sandboxed frame', () => {
    const file: PageLike = { window: self, location: { origin: 'null', protocol: 'file:' } };
    expect(acceptPageMessage(message({ origin: 'null' }), file)?.kind).toBe('events');
    expect(acceptPageMessage(message({ origin: 'file://' }), file)?.kind).toBe('events');
    const sandboxed: PageLike = { window: self, location: { origin: 'null', protocol: 'https:' } };
    expect(acceptPageMessage(message({ origin: 'null' }), sandboxed)?.kind).toBe('events');
    expect(acceptPageMessage(message({ origin: 'https://evil.example' }), sandboxed)).toBeUndefined();
  });

  it('ignores another namespace', () => {
    expect(acceptPageMessage(message({ data: { ...data, ns: 'react-devtools' } }), page)).toBeUndefined();
  });

  it('ignores another protocol version', () => {
    expect(acceptPageMessage(message({ data: { ...data, v: 2 } }), page)).toBeUndefined();
    expect(acceptPageMessage(message({ data: { ...data, v: '1' } }), page)).toBeUndefined();
  });

  it('ignores unknown kinds, and the relay’s own ready message', () => {
    expect(acceptPageMessage(message({ data: { ...data, kind: 'eval' } }), page)).toBeUndefined();
    expect(acceptPageMessage(message({ data: { ...data, kind: 'relay-ready' } }), page)).toBeUndefined();
  });

  it('answers the hook’s hello', () => {
    const hello = { ns: NAMESPACE, v: PROTOCOL_VERSION, kind: 'hook-hello' };
    expect(acceptPageMessage(message({ data: hello }), page)).toEqual({ kind: 'hello' });
  });

  it('takes the hook’s word that the page uses Retryline, checked as every message is', () => {
    const detected = { ns: NAMESPACE, v: PROTOCOL_VERSION, kind: 'detected' };
    expect(acceptPageMessage(message({ data: detected }), page)).toEqual({ kind: 'detected' });
    expect(
      acceptPageMessage(message({ data: detected, source: { name: 'an iframe' } }), page),
    ).toBeUndefined();
    expect(
      acceptPageMessage(message({ data: detected, origin: 'https://evil.example' }), page),
    ).toBeUndefined();
    expect(acceptPageMessage(message({ data: { ...detected, ns: 'other' } }), page)).toBeUndefined();
    expect(acceptPageMessage(message({ data: { ...detected, v: 2 } }), page)).toBeUndefined();
  });

  it('ignores data that is not a message object', () => {
    for (const value of [null, 'retryline-devtools', 42, [data]]) {
      expect(acceptPageMessage(message({ data: value }), page)).toBeUndefined();
    }
  });

  it('ignores events that are not an array', () => {
    expect(
      acceptPageMessage(message({ data: { ...data, events: { 0: event, length: 1 } } }), page),
    ).toBeUndefined();
  });

  it(`ignores a batch of more than ${MAX_BATCH} events, and accepts exactly ${MAX_BATCH}`, () => {
    const over = { ...data, events: Array.from({ length: MAX_BATCH + 1 }, () => event) };
    expect(acceptPageMessage(message({ data: over }), page)).toBeUndefined();
    const full = { ...data, events: Array.from({ length: MAX_BATCH }, () => event) };
    const accepted = acceptPageMessage(message({ data: full }), page);
    expect(accepted?.kind === 'events' && accepted.message.events).toHaveLength(MAX_BATCH);
  });

  it('drops an event over 16 KB as JSON and keeps the others', () => {
    const big = { ...event, requestId: 'x'.repeat(MAX_EVENT_BYTES) };
    const accepted = acceptPageMessage(message({ data: { ...data, events: [event, big, event] } }), page);
    expect(accepted).toMatchObject({ kind: 'events', dropped: 1, message: { events: [event, event] } });
  });

  it('counts the 16 KB in UTF-8 bytes, not UTF-16 code units', () => {
    // 6,000 '€' are 6,000 code units but 18,000 bytes of UTF-8: over the limit.
    const euros = { ...event, url: `https://a.example/${'€'.repeat(6000)}` };
    // 2,000 '€' (6,000 bytes) and an ASCII filler near the limit stay under it.
    const fits = { ...event, url: `https://a.example/${'€'.repeat(2000)}` };
    const ascii = { ...event, url: `https://a.example/${'a'.repeat(MAX_EVENT_BYTES - 200)}` };
    const accepted = acceptPageMessage(
      message({ data: { ...data, events: [euros, fits, ascii, event] } }),
      page,
    );
    expect(accepted).toMatchObject({ kind: 'events', dropped: 1, message: { events: [fits, ascii, event] } });
  });

  it('drops events that are not JSON objects (cycles, BigInt, primitives)', () => {
    const cyclic: Record<string, unknown> = { ...event };
    cyclic.self = cyclic;
    const accepted = acceptPageMessage(
      message({ data: { ...data, events: [cyclic, { ...event, n: 1n }, 'text', null, [event], event] } }),
      page,
    );
    expect(accepted).toMatchObject({ kind: 'events', dropped: 5, message: { events: [event] } });
  });
});

describe('faultsFromWorker', () => {
  const rules = [{ id: 'a', url: '/api/', steps: [{ step: 'passthrough' }] }];
  const faults = { ns: NAMESPACE, v: PROTOCOL_VERSION, kind: 'faults', rules };
  const stamped = { ...faults, origin: page.location.origin };

  it('passes the worker’s fault rules for this document’s origin on with their known fields only', () => {
    expect(faultsFromWorker({ ...stamped, seed: 4, extra: true }, page.location)).toEqual({
      ...faults,
      seed: 4,
    });
    expect(faultsFromWorker(stamped, page.location)).toEqual(faults);
  });

  it('passes no rule set stamped for another origin, or not stamped, on: a frame list lags navigations', () => {
    expect(faultsFromWorker({ ...faults, origin: 'https://app.example' }, page.location)).toBeUndefined();
    expect(faultsFromWorker({ ...faults, origin: 'null' }, page.location)).toBeUndefined();
    expect(faultsFromWorker(faults, page.location)).toBeUndefined();
    // An opaque document's origin is "null", as the worker stamps a set for one.
    const opaque = { origin: 'null', protocol: 'https:' };
    expect(faultsFromWorker({ ...faults, origin: 'null' }, opaque)).toEqual(faults);
  });

  it('passes a removal on whatever it is stamped with: it is for every document', () => {
    expect(faultsFromWorker({ ...faults, rules: [] }, page.location)).toEqual({ ...faults, rules: [] });
    expect(faultsFromWorker({ ...faults, rules: [], origin: 'https://app.example' }, page.location)).toEqual({
      ...faults,
      rules: [],
    });
  });

  it('passes nothing else on', () => {
    for (const value of [
      null,
      'faults',
      { ...stamped, ns: 'x' },
      { ...stamped, v: 2 },
      { ...stamped, kind: 'events' },
      { ...stamped, rules: {} },
    ]) {
      expect(faultsFromWorker(value, page.location)).toBeUndefined();
    }
  });

  it('tells a page to drop its rules with an empty set', () => {
    expect(NO_FAULTS).toEqual({ ...faults, rules: [] });
  });
});

describe('passesFaults', () => {
  const set = faultsFromWorker(
    {
      ns: NAMESPACE,
      v: PROTOCOL_VERSION,
      kind: 'faults',
      rules: [{ id: 'a' }],
      origin: page.location.origin,
    },
    page.location,
  );

  it('hands a rule set to the page, whether it holds rules or not', () => {
    if (!set) throw new Error('a rule set is passed on');
    expect(passesFaults(set, false)).toBe(true);
    expect(passesFaults(set, true)).toBe(true);
  });

  it('hands a removal only to a page that holds rules: one that never got any hears nothing of it', () => {
    expect(passesFaults(NO_FAULTS, true)).toBe(true);
    expect(passesFaults(NO_FAULTS, false)).toBe(false);
  });
});

describe('replayFromWorker', () => {
  const replay = {
    ns: NAMESPACE,
    v: PROTOCOL_VERSION,
    kind: 'replay',
    requestId: 'r1',
    client: 'fetch',
    method: 'GET',
    url: 'https://api.example/items',
  };
  const opaque = { origin: 'null', protocol: 'https:' };

  it('passes on a replay for this frame’s origin with what names its request only', () => {
    expect(replayFromWorker({ ...replay, origin: 'https://shop.example', extra: 1 }, page.location)).toEqual(
      replay,
    );
  });

  it('passes on a replay sent to an opaque frame by its id only while the frame’s document is opaque', () => {
    expect(replayFromWorker({ ...replay, origin: 'null' }, opaque)).toEqual(replay);
    // The frame has gone to a document of another origin since: the id it kept says nothing.
    expect(replayFromWorker({ ...replay, origin: 'null' }, page.location)).toBeUndefined();
    // A replay with no origin says nothing of the frame it was meant for.
    expect(replayFromWorker(replay, opaque)).toBeUndefined();
    expect(replayFromWorker(replay, page.location)).toBeUndefined();
  });

  it('passes on no replay meant for a frame of another origin, and nothing else', () => {
    const mine = { ...replay, origin: 'https://shop.example' };
    for (const value of [
      { ...replay, origin: 'https://ads.example' },
      null,
      'replay',
      { ...mine, ns: 'x' },
      { ...mine, v: 2 },
      { ...mine, kind: 'faults' },
      { ...mine, requestId: 7 },
      { ...mine, client: undefined },
      { ...mine, method: 1 },
      { ...mine, url: null },
    ]) {
      expect(replayFromWorker(value, page.location)).toBeUndefined();
    }
  });
});

describe('panelFromWorker', () => {
  const state = { ns: NAMESPACE, v: PROTOCOL_VERSION, kind: 'panel', open: true };

  it('passes on whether a panel is subscribed to the tab, and nothing else with it', () => {
    expect(panelFromWorker({ ...state, extra: 1 })).toEqual(state);
    expect(panelFromWorker({ ...state, open: false })).toEqual(panelMessage(false));
    for (const value of [
      null,
      'panel',
      { ...state, v: 2 },
      { ...state, kind: 'faults' },
      { ...state, open: 1 },
    ]) {
      expect(panelFromWorker(value)).toBeUndefined();
    }
  });
});

describe('documentAnswer', () => {
  it('reads the worker’s answer to a new document as the messages it holds, and anything else as none', () => {
    const answer = [panelMessage(true), NO_FAULTS];
    expect(documentAnswer(answer)).toEqual(answer);
    expect(documentAnswer(undefined)).toEqual([]);
    expect(documentAnswer(NO_FAULTS)).toEqual([]);
  });
});
