/**
 * ISOLATED-world content script, document_start: passes the hook's events from the
 * page to the service worker, and tells it of each new document and whether that document uses
 * Retryline. It reads only what {@link acceptPageMessage} lets through, calls nothing the page
 * supplies, and says nothing back
 * but "ready", whether a panel is subscribed to the tab (the worker's answer to the new document,
 * then each change; taken as closed when the worker cannot be reached), the tab's fault rules,
 * which the worker sends while a panel of the tab has some (as its answer to the new document, and
 * on each change) to the frames of the page's own origin only, each set stamped with the origin it
 * is for, which must be this document's (see `faultsFromWorker`), and the panel's replays of this
 * frame's requests. Everything it posts goes to its own window, addressed to its own origin
 * (`targetOrigin`: `*` only for an opaque one, which no string names).
 */

import browser from 'webextension-polyfill';
import { DETECTED, targetOrigin } from '../page/page-hook';
import { NAMESPACE, PROTOCOL_VERSION, type RelayDocumentMessage } from '../shared/protocol';
import {
  acceptPageMessage,
  documentAnswer,
  faultsFromWorker,
  NO_FAULTS,
  panelFromWorker,
  panelMessage,
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
/** Whether a panel is subscribed to the tab, as the worker last said; unknown until it answers. */
let panel: boolean | undefined;

function stop(): void {
  alive = false;
  window.removeEventListener('message', onMessage, true);
  browser.runtime.onMessage.removeListener(onWorkerMessage);
  // Nothing can take them off later: the page drops its fault rules and its replays now.
  dropFaults();
  tellPanel(false);
}

/** Tells the page's hook whether a panel is subscribed to the tab (see `PanelStateMessage`). */
function tellPanel(open: boolean): void {
  panel = open;
  window.postMessage(panelMessage(open), origin);
}

/** The tab's fault rules, from the worker, handed to the page's hook. */
function passFaults(message: unknown): void {
  const faults = alive ? faultsFromWorker(message, page.location) : undefined;
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

/**
 * The worker's message for the page's hook: whether a panel is subscribed, the tab's fault rules,
 * or a replay of this frame's.
 */
function fromWorker(message: unknown): void {
  if (!alive) return;
  const replay = replayFromWorker(message, page.location);
  const state = panelFromWorker(message);
  if (replay) window.postMessage(replay, origin);
  else if (state) tellPanel(state.open);
  else passFaults(message);
}

function onWorkerMessage(message: unknown, sender: { id?: string | undefined }): undefined {
  if (sender.id === browser.runtime.id) fromWorker(message);
  return undefined;
}

/** The worker's answer to this document's notice (see `DocumentAnswer`): what the page is to hold. */
function onDocumentAnswer(answer: unknown): void {
  const messages = documentAnswer(answer);
  // An answer that says nothing of the panels (the worker failed) leaves the page keeping nothing.
  if (!messages.some((message) => panelFromWorker(message))) fromWorker(panelMessage(false));
  for (const message of messages) fromWorker(message);
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
    // The hook came after the worker answered: it is told what it missed.
    if (panel !== undefined) window.postMessage(panelMessage(panel), origin);
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
 * pages; it answers whether a panel is subscribed to the tab and, in the top frame and a frame of
 * its origin, with the tab's fault rules while a panel of the tab has some. Unanswered, the page
 * keeps no replays.
 */
function reportDocument(): void {
  if (!alive) return;
  const failed = (error: unknown) => {
    onDocumentAnswer(undefined);
    onSendError(error);
  };
  try {
    browser.runtime.sendMessage(NEW_DOCUMENT).then(onDocumentAnswer, failed);
  } catch (error) {
    failed(error);
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
