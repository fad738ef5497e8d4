/**
 * MAIN-world content script, document_start: defines
 * `globalThis[Symbol.for('retryline.devtools')]` before any page script runs, so core finds it
 * with one property read, posts what core pushes to the ISOLATED-world relay (and, once, that core
 * created a client: the page uses Retryline), answers core's question before each attempt
 * (`fault`) from the fault rules the relay brings while a panel is open, and keeps the replays core
 * offers (`replayable`) for the panel's Replay, which the relay brings too, while it says a panel
 * is subscribed to the tab.
 */

import { optedOutBy } from './page-faults';
import {
  createPageHook,
  HOOK_HELLO,
  isFaultsMessage,
  isPanelMessage,
  isRelayReady,
  isReplayMessage,
  targetOrigin,
} from './page-hook';

const HOOK = Symbol.for('retryline.devtools');

function install(): void {
  // Injected twice (a re-injected frame) or defined by someone else: leave the first one.
  if (Object.hasOwn(globalThis, HOOK)) return;
  // Captured now, while they are still the browser's own: a page script cannot redirect them later.
  const self = window;
  const postMessage = window.postMessage.bind(window);
  const setTimer = window.setTimeout.bind(window);
  const addListener = window.addEventListener.bind(window);
  const random = Math.random;
  const Controller = AbortController;
  const origin = targetOrigin(location);

  const hook = createPageHook({
    post: (message) => postMessage(message, origin),
    setTimer: (callback, ms) => setTimer(callback, ms),
    random: () => random(),
    controller: () => new Controller(),
    optedOut: optedOutBy(window),
  });

  // Kept for the page's life: after "ready", the relay brings the tab's fault rules, whether a
  // panel is subscribed to the tab, and the panel's replays the same way.
  const onMessage = (event: MessageEvent) => {
    try {
      if (event.source !== self) return;
      const data: unknown = event.data;
      if (isFaultsMessage(self, self, data)) hook.setFaults(data);
      else if (isReplayMessage(self, self, data)) hook.replay(data);
      else if (isPanelMessage(self, self, data)) hook.setPanel(data.open);
      else if (isRelayReady(self, self, data)) hook.relayReady();
    } catch {
      // Never throw into the page.
    }
  };
  addListener('message', onMessage, true);

  Object.defineProperty(globalThis, HOOK, {
    value: Object.freeze({
      push: (event: unknown) => hook.push(event),
      fault: (query: unknown) => hook.fault(query),
      hello: () => hook.hello(),
      replayable: (requestId: unknown, replay: unknown, request: unknown) =>
        hook.replayable(requestId, replay, request),
    }),
    configurable: true,
    enumerable: false,
    writable: false,
  });

  // The two document_start scripts run in no fixed order: if the relay came first, its ready
  // message may have been dispatched before this listener existed, so ask again.
  postMessage(HOOK_HELLO, origin);
}

try {
  install();
} catch {
  // A page where the hook cannot be installed simply records nothing.
}
