import type { RetrylineEvent } from '@retryline/core';
import { describe, expect, it } from 'vitest';
import { RING_REQUESTS } from '../shared/protocol';
import { appendEvents, clearLog, createTabLog, navigate, updateSettings } from './store';

const ORIGIN = 'https://shop.example';

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
    expect([...log.requests]).toEqual(['b', 'c']);
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
    });
    expect(ids(log)).toEqual(['nav:https://shop.example/next']);
    appendEvents(log, [start('b')], ORIGIN);
    expect(log.requests).toEqual(new Set(['b']));
  });

  it('keeps its rows across navigations with Preserve log on', () => {
    const log = createTabLog({ preserveLog: true, record: true });
    appendEvents(log, [start('a')], ORIGIN);
    expect(navigate(log, 'https://shop.example/next', 5).cleared).toBe(false);
    expect(ids(log)).toEqual(['a:request-start', 'nav:https://shop.example/next']);
  });

  it('strips credentials from navigation URLs', () => {
    const log = createTabLog();
    navigate(log, 'https://user:pw@shop.example/', 1);
    expect(ids(log)).toEqual(['nav:https://shop.example/']);
  });

  it('clears on request', () => {
    const log = createTabLog();
    appendEvents(log, [start('a'), end('a')], ORIGIN);
    clearLog(log);
    expect(log.entries).toEqual([]);
    expect(log.requests.size).toBe(0);
  });

  it('records nothing, navigations included, while recording is off', () => {
    const log = createTabLog();
    appendEvents(log, [start('a')], ORIGIN);
    expect(updateSettings(log, { record: false })).toBe(true);
    expect(appendEvents(log, [start('b')], ORIGIN)).toEqual([]);
    expect(navigate(log, 'https://shop.example/next', 5)).toEqual({ cleared: true, added: [] });
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
