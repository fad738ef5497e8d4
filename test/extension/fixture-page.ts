// The page the extension's end-to-end test opens: Retryline's three adapters, bundled for the
// browser, sending requests to the loopback fault server. The extension's MAIN-world hook
// receives their events through core's devtools hook; nothing here talks to the extension.
import { attachRetry } from '@retryline/axios';
import type { HttpRetryOptions } from '@retryline/core';
import { retryFetch } from '@retryline/fetch';
import { retryline } from '@retryline/ky';
import axios from 'axios';
import ky from 'ky';
import { ordinaryRequest } from '../../extension/src/model/fixtures';

const fast: HttpRetryOptions = { backoff: { strategy: 'constant', base: 30 }, jitter: 'none' };

async function settle(promise: Promise<unknown>): Promise<string> {
  try {
    const value = await promise;
    return value instanceof Response ? String(value.status) : 'ok';
  } catch (error) {
    return (error as Error).name;
  }
}

async function run(base: string) {
  const api = retryFetch(fast);
  const client = axios.create({ baseURL: base });
  attachRetry(client, fast);
  const kyApi = ky.create({ prefixUrl: base, ...retryline(fast) });
  return {
    fetch: await settle(api(`${base}/fetch-flaky`, { headers: { Authorization: 'Bearer page-secret' } })),
    axios: await settle(client.get('/axios-flaky')),
    ky: await settle(kyApi.get('ky-flaky')),
  };
}

/**
 * A request whose id the caller chose (`requestId`), so that another frame may know it: two
 * attempts, both answered 503 by the script, so it ends exhausted.
 */
async function failWithId(base: string, requestId: string): Promise<string> {
  const api = retryFetch({ ...fast, retry: 1, requestId });
  return settle(api(`${base}/shared-id`));
}

/**
 * What a frame of another origin that knows the page's request id can do: push, through this
 * frame's devtools hook as core would, a successful end under that id.
 */
function claim(requestId: string): void {
  const hook = (globalThis as unknown as Record<symbol, { push(event: unknown): void } | undefined>)[
    Symbol.for('retryline.devtools')
  ];
  if (!hook) throw new Error('the extension defined no devtools hook in this frame');
  const t = Date.now();
  const common = { v: 1, requestId, t, status: 200 };
  hook.push({
    ...common,
    type: 'attempt-end',
    attempt: 2,
    outcome: 'success',
    duration: 5,
    phase: 'response',
  });
  hook.push({
    ...common,
    type: 'request-end',
    outcome: 'success',
    attempts: 2,
    totalDelay: 30,
    duration: 40,
  });
}

/** Posts what a hostile page might, straight at the relay. */
function forge(kind: string): void {
  const event = {
    v: 1,
    type: 'request-start',
    requestId: `forged-${kind}`,
    t: Date.now(),
    client: 'fetch',
    method: 'GET',
    url: 'https://evil.example/',
  };
  const messages: Record<string, unknown> = {
    'wrong-namespace': { ns: 'someone-else', v: 1, kind: 'events', events: [event] },
    'wrong-version': { ns: 'retryline-devtools', v: 2, kind: 'events', events: [event] },
    'unknown-kind': { ns: 'retryline-devtools', v: 1, kind: 'eval', events: [event], code: 'alert(1)' },
    'invalid-schema': { ns: 'retryline-devtools', v: 1, kind: 'events', events: [{ ...event, t: 'soon' }] },
    oversize: {
      ns: 'retryline-devtools',
      v: 1,
      kind: 'events',
      events: [{ ...event, url: `https://evil.example/${'x'.repeat(20_000)}` }],
    },
    valid: { ns: 'retryline-devtools', v: 1, kind: 'events', events: [event] },
  };
  window.postMessage(messages[kind], location.origin);
}

/** Posts events straight at the relay, as core's hook would, in batches of the most one message may carry. */
function post(events: readonly unknown[]): void {
  for (let at = 0; at < events.length; at += 200) {
    const batch = events.slice(at, at + 200);
    window.postMessage({ ns: 'retryline-devtools', v: 1, kind: 'events', events: batch }, location.origin);
  }
}

/** `count` ordinary requests (a GET with its headers, answered 200), numbered from `from`. */
function ordinary(from: number, count: number): void {
  const events = [];
  for (let n = from; n < from + count; n++) events.push(...ordinaryRequest(n));
  post(events);
}

/** What a runaway or hostile page can send: `count` attempt-starts of one request id. */
function flood(requestId: string, count: number): void {
  const events: unknown[] = [
    { v: 1, type: 'request-start', requestId, t: Date.now(), client: 'fetch', url: 'https://flood.example/' },
  ];
  for (let n = 1; n <= count; n++)
    events.push({ v: 1, type: 'attempt-start', requestId, t: Date.now(), attempt: n });
  post(events);
}

(window as unknown as { fixture: unknown }).fixture = { run, failWithId, claim, forge, ordinary, flood };
