// The page the extension's end-to-end test opens: Retryline's three adapters, bundled for the
// browser, sending requests to the loopback fault server. The extension's MAIN-world hook
// receives their events through core's devtools hook; nothing here talks to the extension.
import { attachRetry } from '@retryline/axios';
import type { HttpRetryOptions } from '@retryline/core';
import { retryFetch } from '@retryline/fetch';
import { retryline } from '@retryline/ky';
import axios from 'axios';
import ky from 'ky';

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

(window as unknown as { fixture: unknown }).fixture = { run, forge };
