/**
 * ISOLATED-world content script, document_start: passes the hook's events from the
 * page to the service worker, and tells it of each new document and whether that document uses
 * Retryline. It reads only what {@link acceptPageMessage} lets through, calls nothing the page
 * supplies, and says nothing back
 * but "ready", the tab's fault rules, which the worker sends while a panel of the tab has some
 * (as its answer to the new document, and on each change) to the frames of the page's own origin
 * only, and the panel's replays of this frame's requests. Everything it posts goes to its own
 * window, addressed to its own origin (`targetOrigin`: `*` only for an opaque one, which no string
 * names).
 */

import browser from 'webextension-polyfill';
import { DETECTED, targetOrigin } from '../page/page-hook';
import { NAMESPACE, PROTOCOL_VERSION, type RelayDocumentMessage } from '../shared/protocol';
import {
  acceptPageMessage,
  faultsFromWorker,
  NO_FAULTS,
  passesFaults,
  RELAY_READY,
  replayFromWorker,
} from './accept';

const NEW_DOCUMENT: RelayDocumentMessage = Object.freeze({
  ns: NAMESPACE,
  v: PROTOCOL_VERSION,
  kind: 'document',
});

const page = { window, location: { origin: location.origin, protocol: location.protocol } };
const origin = targetOrigin(page.location);
let alive = true;
/** The hook said this document uses Retryline: passed on once, and again when the document comes back. */
let detected = false;
/** The page holds fault rules this relay handed it (see `passesFaults`). */
let holding = false;

function stop(): void {
  alive = false;
  window.removeEventListener('message', onMessage, true);
  browser.runtime.onMessage.removeListener(onWorkerMessage);
  // Nothing can take them off later: the page drops its fault rules now.
  dropFaults();
}

/** The tab's fault rules, from the worker, handed to the page's hook. */
function passFaults(message: unknown): void {
  const faults = alive ? faultsFromWorker(message) : undefined;
  if (!faults || !passesFaults(faults, holding)) return;
  holding = faults.rules.length > 0;
  window.postMessage(faults, origin);
}

/** Has the page drop the fault rules this relay handed it, if any. */
function dropFaults(): void {
  if (!holding) return;
  holding = false;
  window.postMessage(NO_FAULTS, origin);
}

/** The worker's message for the page's hook: the tab's fault rules, or a replay of this frame's. */
function onWorkerMessage(message: unknown, sender: { id?: string | undefined }): undefined {
  if (sender.id !== browser.runtime.id || !alive) return undefined;
  const replay = replayFromWorker(message, page.location);
  if (replay) window.postMessage(replay, origin);
  else passFaults(message);
  return undefined;
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
  } else if (accepted.kind === 'detected') {
    // Once per document, however often a page posts it.
    if (detected) return;
    detected = true;
    forward(DETECTED);
  } else if (accepted.message.events.length > 0) {
    forward(accepted.message);
  }
}

/**
 * This frame shows a new document: in the tab's top frame the worker marks the boundary between
 * pages; in the top frame and a frame of its origin it answers with the tab's fault rules while a
 * panel of the tab has some.
 */
function reportDocument(): void {
  if (!alive) return;
  try {
    browser.runtime.sendMessage(NEW_DOCUMENT).then(passFaults, onSendError);
  } catch (error) {
    onSendError(error);
  }
}

// Capture phase on the window: registered before any page script, it sees every message first.
window.addEventListener('message', onMessage, true);
// A document restored from the back/forward cache is shown again without its content scripts
// running anew; the browser fires a trusted `pageshow` with `persisted` set
// (https://html.spec.whatwg.org/multipage/nav-history-apis.html#dom-pagetransitionevent-persisted).
window.addEventListener(
  'pageshow',
  (event) => {
    if (!event.isTrusted || !event.persisted) return;
    // Rules it had when it was left may have been removed since: it asks again.
    dropFaults();
    reportDocument();
    // The worker took the restored document for a new one, not known to use Retryline: the hook
    // says hello once per document, so the relay says it again.
    if (detected && alive) forward(DETECTED);
  },
  true,
);
browser.runtime.onMessage.addListener(onWorkerMessage);
// Sent before the first batch of this document's events, so the worker clears the old page first.
reportDocument();
window.postMessage(RELAY_READY, origin);
