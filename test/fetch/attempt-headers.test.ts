import { InvalidOptionsError, memoryStore, type RetrylineEvent } from '@retryline/core';
import { addAttemptHeaders } from '@retryline/core/instrument';
import { type FetchRetryOptions, retryFetch } from '@retryline/fetch';
import { afterEach, describe, expect, it } from 'vitest';
import { useFaultServer } from '../support/use-fault-server';

// addAttemptHeaders: instrumentation (trace context) adds headers to every attempt of every request,
// checked on what a real loopback server received.
const server = useFaultServer();
const fast: FetchRetryOptions = {
  retries: 2,
  backoff: { strategy: 'constant', base: 5 },
  jitter: 'none',
  store: memoryStore(),
};
const stops: Array<() => void> = [];
afterEach(() => {
  for (const stop of stops.splice(0)) stop();
});

describe('addAttemptHeaders', () => {
  it('adds its headers to each attempt, once per attempt, before attempt-start shows them', async () => {
    const calls: Array<{ requestId: string; attempt: number; client: string; method: string; url: string }> =
      [];
    stops.push(
      addAttemptHeaders((attempt) => {
        calls.push(attempt);
        return { 'x-trace': `${attempt.requestId}/${attempt.attempt}` };
      }),
    );
    server.script('/a', [{ status: 503 }, { status: 503 }, { status: 200 }]);
    const events: RetrylineEvent[] = [];
    // The hook's header is no secret: exposed, so events show its values.
    await retryFetch(fetch, { ...fast, exposeHeaders: ['x-trace'], onEvent: (event) => events.push(event) })(
      `${server.url}/a?token=s3`,
    );

    const requestId = events[0]?.requestId;
    expect(server.requests('/a').map((r) => r.headers['x-trace'])).toEqual([
      `${requestId}/1`,
      `${requestId}/2`,
      `${requestId}/3`,
    ]);
    expect(calls.map((c) => [c.attempt, c.client, c.method, c.url])).toEqual([
      [1, 'fetch', 'GET', `${server.url}/a?token=***`],
      [2, 'fetch', 'GET', `${server.url}/a?token=***`],
      [3, 'fetch', 'GET', `${server.url}/a?token=***`],
    ]);
    const starts = events.filter((e) => e.type === 'attempt-start');
    expect(starts.map((e) => e.headers?.['x-trace'])).toEqual([
      `${requestId}/1`,
      `${requestId}/2`,
      `${requestId}/3`,
    ]);
  });

  it('keeps a header the caller set; a hook that throws adds nothing and breaks nothing; stop removes it', async () => {
    stops.push(addAttemptHeaders(() => ({ traceparent: 'from-hook', 'x-extra': 'yes' })));
    stops.push(
      addAttemptHeaders(() => {
        throw new Error('faulty instrumentation');
      }),
    );
    server.script('/b', [{ status: 200 }]);
    const send = retryFetch(fetch, fast);
    const response = await send(`${server.url}/b`, { headers: { Traceparent: 'from-caller' } });
    expect(response.status).toBe(200);
    const [first] = server.requests('/b');
    expect(first?.headers.traceparent).toBe('from-caller');
    expect(first?.headers['x-extra']).toBe('yes');

    for (const stop of stops.splice(0)) stop();
    await send(`${server.url}/b`);
    expect(server.requests('/b')[1]?.headers['x-extra']).toBeUndefined();
  });

  it('rejects a hook that is not a function', () => {
    expect(() => addAttemptHeaders('traceparent' as never)).toThrow(InvalidOptionsError);
  });
});
