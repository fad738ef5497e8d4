/**
 * ISOLATED-world content script, document_start: passes the hook's events from the
 * page to the service worker. It reads only what {@link acceptPageMessage} lets through, calls
 * nothing the page supplies, and says nothing back but "ready".
 */

import browser from 'webextension-polyfill';
import { targetOrigin } from '../page/page-hook';
import { acceptPageMessage, RELAY_READY } from './accept';

const page = { window, location: { origin: location.origin, protocol: location.protocol } };
const origin = targetOrigin(page.location);
let alive = true;

function stop(): void {
  alive = false;
  window.removeEventListener('message', onMessage, true);
}

function forward(message: Parameters<typeof browser.runtime.sendMessage>[0]): void {
  try {
    browser.runtime.sendMessage(message).catch(onSendError);
  } catch (error) {
    onSendError(error);
  }
}

function onSendError(error: unknown): void {
  // The extension was reloaded or removed under a live page: this script can never send again.
  // Any other failure (the worker restarting) loses one batch, which the next one survives.
  if (String((error as { message?: unknown } | null)?.message).includes('context invalidated')) stop();
}

function onMessage(event: MessageEvent): void {
  if (!alive) return;
  const accepted = acceptPageMessage(event, page);
  if (accepted === undefined) return;
  if (accepted.kind === 'hello') {
    window.postMessage(RELAY_READY, origin);
  } else if (accepted.message.events.length > 0) {
    forward(accepted.message);
  }
}

// Capture phase on the window: registered before any page script, it sees every message first.
window.addEventListener('message', onMessage, true);
window.postMessage(RELAY_READY, origin);
