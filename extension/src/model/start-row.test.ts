import type { RequestStartEvent } from '@retryline/core/instrument';
import { describe, expect, it } from 'vitest';
import { API, ORIGIN } from './fixtures';
import { requestFields, splitUrl, startedRow } from './start-row';
import { foldTimeline } from './timeline';

const start = (fields: Omit<RequestStartEvent, 'v' | 'type' | 'requestId' | 't'>): RequestStartEvent => ({
  v: 1,
  type: 'request-start',
  requestId: 'r1',
  t: 1000,
  ...fields,
});

describe('startedRow', () => {
  it.each([
    ['an HTTP request', start({ client: 'fetch', method: 'GET', url: `${API}/orders?page=*` })],
    ['a relative URL', start({ client: 'ky', method: 'POST', url: '/api/orders' })],
    ['an operation without a URL', start({ client: 'retry', operation: 'load-config' })],
    [
      'an operation with a URL',
      start({ client: 'axios', operation: 'sync', method: 'PUT', url: `${API}/a` }),
    ],
    ['neither method nor URL', start({ client: 'retry' })],
  ])('is the row foldTimeline makes of %s that has only started', (_, event) => {
    const [folded] = foldTimeline([{ type: 'event', event, origin: ORIGIN }]).rows;
    expect(startedRow(event, ORIGIN, 0)).toStrictEqual(folded);
  });

  it('is pending, with nothing sent or waited, at its place in the timeline', () => {
    const row = startedRow(start({ client: 'fetch', method: 'GET', url: `${API}/orders` }), ORIGIN, 7);
    expect(row).toMatchObject({
      requestId: 'r1',
      index: 7,
      source: ORIGIN,
      complete: true,
      start: 1000,
      last: 1000,
      outcome: 'pending',
      attempts: [],
      waits: [],
      guardWaits: [],
      injected: 0,
    });
    expect(row).not.toHaveProperty('status');
    expect(row).not.toHaveProperty('end');
  });
});

describe('requestFields', () => {
  it('reads an unseen start as an unknown client with no method or URL', () => {
    expect(requestFields({})).toEqual({ client: 'unknown', method: '', url: '', origin: '', path: '' });
  });

  it('shows the operation as the path of a request without a URL', () => {
    expect(requestFields({ client: 'retry', operation: 'load-config' })).toMatchObject({
      operation: 'load-config',
      path: 'load-config',
    });
  });
});

describe('splitUrl', () => {
  it('splits an absolute URL into origin and path with query', () => {
    expect(splitUrl('https://api.example:8443/a/b?c=*')).toEqual({
      origin: 'https://api.example:8443',
      path: '/a/b?c=*',
    });
  });

  it('keeps what does not parse as the path', () => {
    expect(splitUrl('/relative?x=1')).toEqual({ origin: '', path: '/relative?x=1' });
    expect(splitUrl('')).toEqual({ origin: '', path: '' });
  });
});
