import type { RetrylineEvent } from '@retryline/core';
import { describe, expect, it } from 'vitest';
import { ordinaryRequest } from '../model/fixtures';
import { frameKey } from '../shared/frame-key';
import {
  MAX_REQUEST_BYTES,
  MAX_REQUEST_EVENTS,
  MAX_TAB_BYTES,
  RING_REQUESTS,
  type TimelineEntry,
} from '../shared/protocol';
import {
  appendEvents,
  clearLog,
  createTabLog,
  entrySize,
  frameDocument,
  MAX_PAGE_FRAMES,
  makeRoom,
  markDetected,
  navigate,
  pageState,
  resetByteLimit,
  updateSettings,
} from './store';

const ORIGIN = 'https://shop.example';
const keyOf = (requestId: string) => frameKey(ORIGIN, requestId);

function start(requestId: string, t = 1): RetrylineEvent {
  return {
    v: 1,
    type: 'request-start',
    requestId,
    t,
    client: 'fetch',
    method: 'GET',
    url: `${ORIGIN}/${requestId}`,
  };
}
function end(requestId: string, t = 2): RetrylineEvent {
  return {
    v: 1,
    type: 'request-end',
    requestId,
    t,
    outcome: 'success',
    attempts: 1,
    totalDelay: 0,
    duration: 1,
  };
}
const ids = (log: ReturnType<typeof createTabLog>) =>
  log.entries.map((entry) =>
    entry.type === 'event' ? `${entry.event.requestId}:${entry.event.type}` : `nav:${entry.url}`,
  );

describe('what a tab log knows of its page', () => {
  it('knows of no page until a relay reports one', () => {
    expect(createTabLog().page).toEqual({ hooked: false, detected: false });
  });

  it('takes a new top document as hooked and not yet using Retryline, until it says so', () => {
    const log = createTabLog();
    expect(navigate(log, 'https://shop.example/', 1).pageChanged).toBe(true);
    expect(log.page).toEqual({ hooked: true, detected: false });
    expect(log.indexChanged).toBe(true);
    log.indexChanged = false;
    expect(markDetected(log)).toBe(true);
    expect(log.page).toEqual({ hooked: true, detected: true });
    expect(log.indexChanged).toBe(true);
    // Said again (another frame, another client): no news, nothing to write.
    log.indexChanged = false;
    expect(markDetected(log)).toBe(false);
    expect(log.indexChanged).toBe(false);
    // The next document starts over, Preserve log or not.
    updateSettings(log, { preserveLog: true });
    expect(navigate(log, 'https://shop.example/next', 2).pageChanged).toBe(true);
    expect(log.page).toEqual({ hooked: true, detected: false });
    expect(navigate(log, 'https://shop.example/again', 3).pageChanged).toBe(false);
  });

  it('keeps no navigation until the tab has recorded something, and each one after (a clear aside)', () => {
    const log = createTabLog({ preserveLog: true, record: true });
    expect(navigate(log, 'https://bank.example/account', 1).added).toEqual([]);
    expect(navigate(log, 'https://shop.example/', 2).added).toEqual([]);
    expect(log.entries).toEqual([]);
    expect(log.changedChunks.size).toBe(0);
    appendEvents(log, [start('a')], ORIGIN);
    navigate(log, 'https://shop.example/next', 3);
    clearLog(log);
    navigate(log, 'https://shop.example/again', 4);
    expect(ids(log)).toEqual(['nav:https://shop.example/again']);
  });

  it('knows the origins of the page’s frames from the top document on, as far as it follows them', () => {
    const log = createTabLog();
    expect(pageState(log)).toEqual({ hooked: false, detected: false });
    // A frame's document before the top one's says nothing of the page.
    frameDocument(log, 3, 'https://widget.example');
    expect(pageState(log)).not.toHaveProperty('frames');
    navigate(log, 'https://shop.example/', 1);
    frameDocument(log, 0, ORIGIN);
    frameDocument(log, 3, 'https://widget.example');
    frameDocument(log, 4, 'https://widget.example');
    expect(pageState(log)).toEqual({
      hooked: true,
      detected: false,
      frames: [ORIGIN, 'https://widget.example'],
    });
    frameDocument(log, 3, 'https://ads.example');
    frameDocument(log, 4, 'https://ads.example');
    expect(pageState(log).frames).toEqual(['https://ads.example', ORIGIN]);
    // Not stored: what the worker writes is the page state alone.
    expect(log.page).toEqual({ hooked: true, detected: false });
    for (let frameId = 5; frameId < MAX_PAGE_FRAMES + 3; frameId += 1) frameDocument(log, frameId, ORIGIN);
    expect(pageState(log)).not.toHaveProperty('frames');
    frameDocument(log, 0, ORIGIN);
    expect(pageState(log).frames).toEqual([ORIGIN]);
  });

  it('keeps the page state across a clear: the page is still the same', () => {
    const log = createTabLog();
    navigate(log, 'https://shop.example/', 1);
    markDetected(log);
    appendEvents(log, [start('a')], ORIGIN);
    clearLog(log);
    expect(log.page).toEqual({ hooked: true, detected: true });
  });
});

describe('a tab log', () => {
  it('appends events with the origin of the page that sent them', () => {
    const log = createTabLog();
    const added = appendEvents(log, [start('a'), end('a')], ORIGIN);
    expect(added).toEqual([
      { type: 'event', event: start('a'), origin: ORIGIN },
      { type: 'event', event: end('a'), origin: ORIGIN },
    ]);
    expect(log.entries).toEqual(added);
  });

  it('evicts whole requests, oldest first, beyond its limit', () => {
    const log = createTabLog(undefined, 2);
    appendEvents(log, [start('a'), start('b')], ORIGIN);
    appendEvents(log, [end('a'), end('b')], ORIGIN);
    appendEvents(log, [start('c')], ORIGIN);
    expect(ids(log)).toEqual(['b:request-start', 'b:request-end', 'c:request-start']);
    expect([...log.requests.keys()]).toEqual(['b', 'c'].map(keyOf));
  });

  it('counts the requests it evicts, however it evicts them', () => {
    const log = createTabLog(undefined, 2);
    appendEvents(log, [start('a'), start('b'), end('a')], ORIGIN);
    expect(log.evicted).toBe(0);
    appendEvents(log, [start('c'), start('d')], ORIGIN);
    expect(log.evicted).toBe(2);
    // Events of an evicted request start a new one, which evicts the oldest kept.
    appendEvents(log, [end('a')], ORIGIN);
    expect(log.evicted).toBe(3);
    // Navigations dropped for room are not requests.
    const navigations = createTabLog({ preserveLog: true, record: true }, 2);
    appendEvents(navigations, [start('a')], ORIGIN);
    clearLog(navigations);
    for (let n = 0; n < 5; n += 1) navigate(navigations, `https://shop.example/${n}`, n);
    expect(navigations.evicted).toBe(0);
    // Room made for storage.session drops requests too.
    const full = createTabLog();
    for (let n = 0; n < 40; n += 1) appendEvents(full, [start(`r${n}`)], ORIGIN);
    expect(makeRoom(full)).toBe(true);
    expect(full.evicted).toBe(40 - full.requests.size);
  });

  it('sets its evicted count back to 0 when its rows are cleared, on request or by a new page', () => {
    const log = createTabLog(undefined, 1);
    appendEvents(log, [start('a'), start('b')], ORIGIN);
    expect(log.evicted).toBe(1);
    log.indexChanged = false;
    clearLog(log);
    expect(log.evicted).toBe(0);
    // Stored in the index: the write after a clear carries it.
    expect(log.indexChanged).toBe(true);
    appendEvents(log, [start('c'), start('d')], ORIGIN);
    navigate(log, 'https://shop.example/next', 5);
    expect(log.evicted).toBe(0);
    // With Preserve log the rows stay, and so does the count of those that went.
    const kept = createTabLog({ preserveLog: true, record: true }, 1);
    appendEvents(kept, [start('a'), start('b')], ORIGIN);
    navigate(kept, 'https://shop.example/next', 5);
    expect(kept.evicted).toBe(1);
  });

  it(`keeps ${RING_REQUESTS} requests by default`, () => {
    const log = createTabLog();
    for (let n = 0; n <= RING_REQUESTS; n += 1) appendEvents(log, [start(`r${n}`), end(`r${n}`)], ORIGIN);
    expect(log.requests.size).toBe(RING_REQUESTS);
    expect(log.entries).toHaveLength(RING_REQUESTS * 2);
    expect(log.entries[0]?.type === 'event' && log.entries[0].event.requestId).toBe('r1');
  });

  it('keeps the navigation that precedes its oldest request, and no older one', () => {
    const log = createTabLog({ preserveLog: true, record: true }, 1);
    navigate(log, 'https://shop.example/1', 1);
    appendEvents(log, [start('a')], ORIGIN);
    navigate(log, 'https://shop.example/2', 2);
    appendEvents(log, [start('b')], ORIGIN);
    expect(ids(log)).toEqual(['nav:https://shop.example/2', 'b:request-start']);
  });

  it('clears its rows on navigation unless Preserve log is on', () => {
    const log = createTabLog();
    appendEvents(log, [start('a')], ORIGIN);
    expect(navigate(log, 'https://shop.example/next', 5)).toEqual({
      cleared: true,
      added: [{ type: 'navigation', url: 'https://shop.example/next', t: 5 }],
      pageChanged: true,
    });
    expect(ids(log)).toEqual(['nav:https://shop.example/next']);
    appendEvents(log, [start('b')], ORIGIN);
    expect([...log.requests.keys()]).toEqual([keyOf('b')]);
  });

  it('keeps its rows across navigations with Preserve log on', () => {
    const log = createTabLog({ preserveLog: true, record: true });
    appendEvents(log, [start('a')], ORIGIN);
    expect(navigate(log, 'https://shop.example/next', 5).cleared).toBe(false);
    expect(ids(log)).toEqual(['a:request-start', 'nav:https://shop.example/next']);
  });

  it('strips credentials from navigation URLs', () => {
    const log = createTabLog();
    appendEvents(log, [start('a')], ORIGIN);
    navigate(log, 'https://user:pw@shop.example/', 1);
    expect(ids(log)).toEqual(['nav:https://shop.example/']);
  });

  it('masks query values of navigation URLs, as core masks request URLs', () => {
    const log = createTabLog({ preserveLog: true, record: true });
    appendEvents(log, [start('a')], ORIGIN);
    navigate(log, 'https://shop.example/callback?code=s3cret&state=xyz&flag#access_token=t0ken', 1);
    navigate(log, 'https://u:p@shop.example/reset?token=abc', 2);
    expect(ids(log).slice(1)).toEqual([
      'nav:https://shop.example/callback?code=***&state=***&***',
      'nav:https://shop.example/reset?token=***',
    ]);
    expect(JSON.stringify(log.entries)).not.toMatch(/s3cret|xyz|t0ken|abc/);
  });

  it('clears on request', () => {
    const log = createTabLog();
    appendEvents(log, [start('a'), end('a')], ORIGIN);
    clearLog(log);
    expect(log.entries).toEqual([]);
    expect(log.requests.size).toBe(0);
  });

  it('gives a tab its full size back once cleared, after a full quota made it smaller', () => {
    const log = createTabLog();
    for (let i = 0; i < 50; i++) appendEvents(log, [start(`r${i}`)], ORIGIN);
    makeRoom(log);
    expect(log.byteLimit).toBeLessThan(log.maxBytes);
    clearLog(log);
    expect(log.byteLimit).toBe(log.maxBytes);
  });

  it('records nothing, navigations included, while recording is off', () => {
    const log = createTabLog();
    appendEvents(log, [start('a')], ORIGIN);
    expect(updateSettings(log, { record: false })).toBe(true);
    expect(appendEvents(log, [start('b')], ORIGIN)).toEqual([]);
    expect(navigate(log, 'https://shop.example/next', 5)).toEqual({
      cleared: true,
      added: [],
      pageChanged: true,
    });
    expect(log.entries).toEqual([]);
    updateSettings(log, { record: true });
    appendEvents(log, [start('c')], ORIGIN);
    expect(ids(log)).toEqual(['c:request-start']);
  });

  it('changes only the settings it is given', () => {
    const log = createTabLog();
    expect(updateSettings(log, { preserveLog: true })).toBe(true);
    expect(log.settings).toEqual({ preserveLog: true, record: true });
    expect(updateSettings(log, { preserveLog: true })).toBe(false);
  });
});

describe('sequence numbers', () => {
  it('number entries in order and mark the chunks that changed', () => {
    const log = createTabLog(undefined, 1);
    appendEvents(log, [start('a'), end('a')], ORIGIN);
    expect(log.seqs).toEqual([0, 1]);
    expect([...log.changedChunks]).toEqual([0]);
    log.changedChunks.clear();
    appendEvents(log, [start('b')], ORIGIN);
    // Evicting request a changed its chunk too.
    expect(log.seqs).toEqual([2]);
    expect([...log.changedChunks]).toEqual([0]);
  });
});

function attemptStart(requestId: string, attempt: number): RetrylineEvent {
  return { v: 1, type: 'attempt-start', requestId, t: 1 + attempt, attempt };
}

describe('requests of two frames under one request id', () => {
  const FRAME = 'https://widget.example';

  it('are two requests: a frame flooding the page’s id fills only its own', () => {
    const log = createTabLog();
    appendEvents(log, [start('shared')], ORIGIN);
    const flood = Array.from({ length: MAX_REQUEST_EVENTS + 10 }, (_, i) => attemptStart('shared', i + 1));
    appendEvents(log, flood, FRAME);
    expect([...log.requests.keys()]).toEqual([keyOf('shared'), frameKey(FRAME, 'shared')]);
    // The page's request is not full: its end is kept as sent, with no mark of dropped events.
    expect(appendEvents(log, [end('shared')], ORIGIN)).toEqual([
      { type: 'event', event: end('shared'), origin: ORIGIN },
    ]);
    expect(log.requests.get(keyOf('shared'))).toMatchObject({ events: 2, full: false, dropped: 0 });
    expect(log.requests.get(frameKey(FRAME, 'shared'))).toMatchObject({ full: true, dropped: 10 });
  });

  it('are evicted one at a time, each with only its own events', () => {
    const log = createTabLog(undefined, 2);
    appendEvents(log, [start('shared')], ORIGIN);
    appendEvents(log, [start('shared')], FRAME);
    appendEvents(log, [start('next')], ORIGIN);
    expect(log.entries.map((e) => (e.type === 'event' ? `${e.origin} ${e.event.requestId}` : ''))).toEqual([
      `${FRAME} shared`,
      `${ORIGIN} next`,
    ]);
  });
});

const totalBytes = (entries: readonly TimelineEntry[]) =>
  entries.reduce((sum, entry) => sum + entrySize(entry), 0);

describe('what one page can make the worker keep', () => {
  it(`keeps at most ${MAX_REQUEST_EVENTS} events of one request, marks where it stopped, and still ends it`, () => {
    const log = createTabLog();
    appendEvents(log, [start('other'), end('other')], ORIGIN);
    appendEvents(log, [start('flood')], ORIGIN);
    // 100,000 attempt-starts of one request id, in batches as the relay sends them.
    for (let batch = 0; batch < 500; batch += 1) {
      const events = Array.from({ length: 200 }, (_, i) => attemptStart('flood', batch * 200 + i + 1));
      appendEvents(log, events, ORIGIN);
    }
    const flood = () => log.entries.filter((e) => e.type === 'event' && e.event.requestId === 'flood');
    expect(flood()).toHaveLength(MAX_REQUEST_EVENTS);
    // The event that reached the limit says so: the row can tell that later ones are not kept.
    expect(flood()[MAX_REQUEST_EVENTS - 1]).toMatchObject({ truncated: { dropped: 0 } });
    expect(flood().filter((e) => e.type === 'event' && e.truncated)).toHaveLength(1);

    // Its request-end is kept past the limit, with how many events were dropped; a second is not.
    const added = appendEvents(log, [end('flood'), end('flood')], ORIGIN);
    const dropped = 100_000 + 1 - MAX_REQUEST_EVENTS;
    expect(added).toEqual([{ type: 'event', event: end('flood'), origin: ORIGIN, truncated: { dropped } }]);
    expect(flood()).toHaveLength(MAX_REQUEST_EVENTS + 1);
    // The other request is untouched, and the totals are the entries'.
    expect(ids(log).slice(0, 2)).toEqual(['other:request-start', 'other:request-end']);
    expect(log.bytes).toBe(totalBytes(log.entries));
    expect(log.bytes).toBeLessThan(MAX_REQUEST_BYTES + 2 * 16 * 1024);
  });

  it(`keeps at most ${MAX_REQUEST_BYTES / 1024} KB of one request`, () => {
    const log = createTabLog();
    const big = (attempt: number): RetrylineEvent => ({
      v: 1,
      type: 'attempt-start',
      requestId: 'big',
      t: attempt,
      attempt,
      headers: { 'x-padding': 'p'.repeat(2000) },
    });
    const sent = Array.from({ length: 400 }, (_, i) => big(i + 1));
    const added = appendEvents(log, sent, ORIGIN);
    expect(added.length).toBeLessThan(sent.length);
    expect(log.bytes).toBeGreaterThanOrEqual(MAX_REQUEST_BYTES);
    expect(log.bytes).toBeLessThan(MAX_REQUEST_BYTES + entrySize(added[0] as TimelineEntry) + 100);
    expect(added.at(-1)).toMatchObject({ truncated: { dropped: 0 } });
  });

  it('keeps at most its byte limit per tab, dropping the oldest requests, never the newest', () => {
    const limit = 64 * 1024;
    const log = createTabLog(undefined, RING_REQUESTS, limit);
    for (let n = 0; n < 200; n += 1) appendEvents(log, ordinaryRequest(n), ORIGIN);
    expect(log.bytes).toBeLessThanOrEqual(limit);
    expect(log.bytes).toBe(totalBytes(log.entries));
    const kept = [...log.requests.keys()];
    // The newest requests, whole: every kept request still has its four events.
    expect(kept.at(-1)).toBe(keyOf(ordinaryRequest(199)[0]?.requestId ?? ''));
    expect(kept.length).toBeGreaterThan(30);
    expect(log.entries).toHaveLength(kept.length * 4);
    // One request larger than the whole limit is still kept: the newest request always is.
    const tiny = createTabLog(undefined, RING_REQUESTS, 100);
    appendEvents(tiny, ordinaryRequest(1), ORIGIN);
    expect(tiny.requests.size).toBe(1);
  });

  it(`holds a full ring of ${RING_REQUESTS} ordinary requests within its ${MAX_TAB_BYTES / 1024 / 1024} MiB`, () => {
    const log = createTabLog();
    for (let n = 0; n < RING_REQUESTS; n += 1) appendEvents(log, ordinaryRequest(n), ORIGIN);
    expect(log.requests.size).toBe(RING_REQUESTS);
    expect(log.bytes).toBeLessThan(MAX_TAB_BYTES);
  });

  it('drops navigations for bytes too, oldest first', () => {
    const log = createTabLog({ preserveLog: true, record: true }, RING_REQUESTS, 8 * 1024);
    appendEvents(log, [start('a')], ORIGIN);
    clearLog(log);
    for (let n = 0; n < 50; n += 1) navigate(log, `https://shop.example/${'p'.repeat(1000)}/${n}`, n);
    expect(log.bytes).toBeLessThanOrEqual(8 * 1024);
    expect(log.navigations).toBe(log.entries.length);
    expect(ids(log).at(-1)).toMatch(/\/49$/);
  });

  it('makes room by dropping its own oldest requests, and grows back when told there is room', () => {
    const log = createTabLog();
    for (let n = 0; n < 100; n += 1) appendEvents(log, ordinaryRequest(n), ORIGIN);
    const before = log.bytes;
    expect(makeRoom(log)).toBe(true);
    expect(log.bytes).toBeLessThanOrEqual(before * 0.75);
    expect([...log.requests.keys()].at(-1)).toBe(keyOf(ordinaryRequest(99)[0]?.requestId ?? ''));
    resetByteLimit(log);
    for (let n = 100; n < 200; n += 1) appendEvents(log, ordinaryRequest(n), ORIGIN);
    expect(log.requests.size).toBeGreaterThan(100);
  });
});
