/**
 * MAIN-world content script, document_start: defines
 * `globalThis[Symbol.for('retryline.devtools')]` before any page script runs, so core finds it
 * with one property read, and posts what core pushes to the ISOLATED-world relay.
 */

import { createPageHook, HOOK_HELLO, isRelayReady, targetOrigin } from './page-hook';

const HOOK = Symbol.for('retryline.devtools');

function install(): void {
  // Injected twice (a re-injected frame) or defined by someone else: leave the first one.
  if (Object.hasOwn(globalThis, HOOK)) return;
  // Captured now, while they are still the browser's own: a page script cannot redirect them later.
  const self = window;
  const postMessage = window.postMessage.bind(window);
  const setTimer = window.setTimeout.bind(window);
  const addListener = window.addEventListener.bind(window);
  const removeListener = window.removeEventListener.bind(window);
  const origin = targetOrigin(location);

  const hook = createPageHook({
    post: (message) => postMessage(message, origin),
    setTimer: (callback, ms) => setTimer(callback, ms),
  });

  const onMessage = (event: MessageEvent) => {
    try {
      if (!isRelayReady(event.source, self, event.data)) return;
      removeListener('message', onMessage, true);
      hook.relayReady();
    } catch {
      // Never throw into the page.
    }
  };
  addListener('message', onMessage, true);

  Object.defineProperty(globalThis, HOOK, {
    value: Object.freeze({ push: (event: unknown) => hook.push(event) }),
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
