import { retryFetch } from '@retryline/fetch';
import { describe, expect, it } from 'vitest';
import { createPageHook, type PageHook } from '../../extension/src/page/page-hook';
import { type FaultsMessage, NAMESPACE, PROTOCOL_VERSION } from '../../extension/src/shared/protocol';
import { useFaultServer } from '../support/use-fault-server';
import { installHook, removeHookAfterEach } from './fake-hook';

// Closing DevTools removes the rules (README), and an attempt already inside an injected `slow`
// step (up to MAX_SLOW_MS, ten minutes) must not go on waiting: the page hook gives each rule set
// one controller, whose signal its slow steps carry, and aborts it when the set is replaced or
// removed and when the panel goes; core then ends the wait and sends the attempt as usual. The real
// page hook is core's devtools hook here, with a real retryFetch and a loopback server.
const server = useFaultServer();
removeHookAfterEach();

const faults = (rules: unknown[]): FaultsMessage =>
  ({ ns: NAMESPACE, v: PROTOCOL_VERSION, kind: 'faults', rules }) as unknown as FaultsMessage;

/** The page hook, installed as core's devtools hook, with a `slow 60s` rule for `/items`. */
function slowPage(): PageHook {
  const hook = createPageHook({
    post: () => {},
    setTimer: (callback, ms) => setTimeout(callback, ms),
    random: Math.random,
    controller: () => new AbortController(),
    optedOut: () => false,
  });
  installHook({
    push: (event: unknown) => hook.push(event),
    fault: (query: unknown) => hook.fault(query),
    hello: () => hook.hello(),
    replayable: (id: unknown, replay: unknown, request: unknown) => hook.replayable(id, replay, request),
  });
  hook.setFaults(faults([{ id: 'slow', url: '/items', steps: [{ step: 'slow', ms: 60_000 }] }]));
  return hook;
}

/** Sends `/items` through Retryline, then, once its attempt waits in the slow step, runs `then`. */
async function waitingThen(then: () => void): Promise<unknown> {
  server.script('/items', [{ status: 200, body: 'real' }]);
  const client = retryFetch(fetch, { retries: 0 });
  const sent = client(`${server.url}/items`).then((response) => response.text());
  await new Promise((resolve) => setTimeout(resolve, 50));
  then();
  return Promise.race([
    sent,
    new Promise((resolve) => setTimeout(() => resolve('still waiting 2 s later'), 2000)),
  ]);
}

describe('an injected slow step when the panel closes', () => {
  it('ends the wait with the rules and the panel: the attempt goes to the server at once', async () => {
    const hook = slowPage();
    // The panel closes: the worker tells the relay, which hands the hook an empty set and says no panel.
    const outcome = await waitingThen(() => {
      hook.setFaults(faults([]));
      hook.setPanel(false);
    });
    expect(outcome).toBe('real');
  });

  it('ends the wait when the panel goes, even before the rules are taken back', async () => {
    const hook = slowPage();
    await expect(waitingThen(() => hook.setPanel(false))).resolves.toBe('real');
  });

  it('ends the wait when the rules are replaced', async () => {
    const hook = slowPage();
    const outcome = await waitingThen(() =>
      hook.setFaults(faults([{ id: 'other', url: '/other', steps: [{ step: 'status', status: 503 }] }])),
    );
    expect(outcome).toBe('real');
  });
});
