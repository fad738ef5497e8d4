/**
 * The service worker: keeps each tab's ring of recent requests, mirrors it to
 * `storage.session` so a suspended or killed worker loses nothing it recorded more than a write
 * ago, resets it on a new document (unless Preserve log), drops it when the tab closes, and feeds the
 * panels. It knows, per tab, whether the current page has a relay and uses Retryline (see
 * `PageState`), which the panel's empty state says. It also carries each tab's fault rules from
 * its panel to its pages, while the panel is open, to the page's own origin only: its top frame
 * and the frames of the same origin (see fault-rules.ts); tells every frame of a tab whether a
 * panel is subscribed to it (pages keep what Replay needs only then: see `PanelStateMessage`); and
 * carries a panel's replay of a request to the frame that sent it (see `replayRoute`). Every
 * listener is registered synchronously at the top level, as MV3 requires for a worker woken by an
 * event.
 *
 * What it stores of a tab that never recorded a Retryline event is the index alone (settings and
 * page state, no URL): enough for the panel's empty state to stay true across the worker's restarts,
 * and nothing of where the tab went (see `navigate`).
 */

import browser, { type Runtime } from 'webextension-polyfill';
import {
  type DocumentAnswer,
  type FaultsMessage,
  PANEL_PORT,
  type PanelStateMessage,
  type ReplayTarget,
  type WorkerUpdate,
} from '../shared/protocol';
import { sanitizeEvents } from '../shared/schema';
import { createFaultRules } from './fault-rules';
import {
  frameDocumentOf,
  isDetectedMessage,
  isDocumentMessage,
  isRelayMessage,
  newDocumentOf,
  panelState,
  parsePanelRequest,
  replayRoute,
  senderOrigin,
} from './messages';
import { chunkKeysOf, indexKey, restoreTabLog } from './persistence';
import { createSessionWriter } from './session-writer';
import {
  appendEvents,
  clearLog,
  createTabLog,
  frameDocument,
  markDetected,
  navigate,
  pageState,
  resetByteLimit,
  type TabLog,
  updateSettings,
} from './store';

const logs = new Map<number, TabLog>();
const loading = new Map<number, Promise<TabLog | undefined>>();
const panels = new Map<number, Set<Runtime.Port>>();
/** Tabs closed while this worker lives: a restore still in flight must not bring one back. Chrome never reuses a tab id. */
const closed = new Set<number>();

function warn(what: string, error: unknown): void {
  console.warn(`[Retryline] ${what}:`, error);
}

/** Sends `message` to every frame of the tab; a failure (no relay, a tab gone) is ignored. */
function sendToTab(tabId: number, message: PanelStateMessage | FaultsMessage): void {
  try {
    browser.tabs.sendMessage(tabId, message).catch(() => {});
  } catch {
    // The tab is gone.
  }
}

const faults = createFaultRules({
  sendToFrame(tabId, frameId, message) {
    try {
      // A frame that is gone, or one with no relay (a browser page), has no receiver, which is fine.
      browser.tabs.sendMessage(tabId, message, { frameId }).catch(() => {});
    } catch {
      // The tab is gone.
    }
  },
  // Every frame of the tab: only a removal is sent so (see FaultRulesWorld).
  sendToTab,
});

const writer = createSessionWriter({
  area: browser.storage.session,
  logOf: (tabId) => logs.get(tabId),
  onError: warn,
  onEvicted: (tabId) => broadcastEvicted(tabId, logs.get(tabId)),
});

async function load(tabId: number): Promise<TabLog | undefined> {
  try {
    const key = indexKey(tabId);
    const index = (await browser.storage.session.get(key))[key];
    const chunks = chunkKeysOf(tabId, index);
    if (!chunks) return undefined;
    const stored = chunks.length > 0 ? await browser.storage.session.get(chunks) : {};
    return restoreTabLog(tabId, index, stored);
  } catch (error) {
    warn(`could not restore tab ${tabId}`, error);
    return undefined;
  }
}

/**
 * Runs `use` on a tab's log: at once when it is in memory, else after restoring it (the worker
 * was woken), or on a new one when the tab has none (unless `create` is false: then not at all).
 * Calls for one tab run in the order they were made, since all of them wait on the same restore.
 */
function withTab(tabId: number, use: (log: TabLog) => void, create = true): void {
  const run = (log: TabLog) => {
    try {
      use(log);
    } catch (error) {
      warn(`tab ${tabId}`, error);
    }
  };
  if (closed.has(tabId)) return;
  const log = logs.get(tabId);
  if (log) {
    run(log);
    return;
  }
  let pending = loading.get(tabId);
  if (!pending) {
    pending = load(tabId);
    loading.set(tabId, pending);
  }
  void pending.then((stored) => {
    loading.delete(tabId);
    if (closed.has(tabId)) return;
    const current = logs.get(tabId);
    if (current) {
      run(current);
      return;
    }
    if (!stored && !create) return;
    const log = stored ?? createTabLog();
    logs.set(tabId, log);
    if (!stored) {
      // Store the new log's index, so that a navigation after a restart finds the tab.
      log.indexChanged = true;
      writer.persist(tabId);
    }
    run(log);
  });
}

/** Has the tab's page send a request again: its frame's relay hands the replay to the page's hook. */
function replay(tabId: number, source: string, target: ReplayTarget): void {
  const { message, frameId } = replayRoute(source, target);
  try {
    // A frame that is gone, or a page with no relay, has no receiver: nothing is replayed.
    const sent =
      frameId === undefined
        ? browser.tabs.sendMessage(tabId, message)
        : browser.tabs.sendMessage(tabId, message, { frameId });
    sent.catch(() => {});
  } catch {
    // The tab is gone.
  }
}

/** Posts `update` to one panel's port; one that was closed meanwhile is left to its onDisconnect. */
function send(port: Runtime.Port, update: WorkerUpdate): void {
  try {
    port.postMessage(update);
  } catch {
    // Gone: its onDisconnect unsubscribes it.
  }
}

function broadcast(tabId: number, update: WorkerUpdate): void {
  const ports = panels.get(tabId);
  if (!ports) return;
  for (const port of ports) {
    try {
      port.postMessage(update);
    } catch {
      ports.delete(port);
    }
  }
}

function broadcastPage(tabId: number, log: TabLog): void {
  broadcast(tabId, { kind: 'page', tabId, page: pageState(log) });
}

/** What the panels are told of the tab's page, to compare before and after a change. */
const pageKey = (log: TabLog): string => JSON.stringify(pageState(log));

function broadcastEvicted(tabId: number, log: TabLog | undefined): void {
  if (log) broadcast(tabId, { kind: 'evicted', tabId, evicted: log.evicted });
}

/**
 * A new document in a tab's top frame, as its relay reports it: the boundary between pages. The
 * time is the worker's, when it hears of it; the notice is sent before any event of the document.
 * Every tab with a relay gets a log, even one whose pages never use Retryline: that it has a relay
 * at all is what the panel's empty state says first. Its navigations are kept only once it has
 * recorded something (see `navigate`): until then the worker stores its index alone.
 */
function onNewDocument(sender: Runtime.MessageSender): void {
  const page = newDocumentOf(sender);
  if (!page) return;
  const { tabId, url } = page;
  const origin = senderOrigin(sender);
  withTab(tabId, (log) => {
    const evicted = log.evicted;
    const told = pageKey(log);
    const { cleared, added, pageChanged } = navigate(log, url, Date.now());
    frameDocument(log, 0, origin);
    if (cleared || added.length > 0 || pageChanged) writer.persist(tabId);
    if (cleared) broadcast(tabId, { kind: 'cleared', tabId });
    else if (log.evicted !== evicted) broadcastEvicted(tabId, log);
    if (added.length > 0) broadcast(tabId, { kind: 'append', tabId, entries: added });
    if (pageKey(log) !== told) broadcastPage(tabId, log);
  });
}

/**
 * A new document in a frame inside a tab's page: the panel is told which origins the page's frames
 * have now, where the worker knows them (a tab it has no log of is left alone).
 */
function onFrameDocument(tabId: number, frameId: number, origin: string): void {
  withTab(
    tabId,
    (log) => {
      const told = pageKey(log);
      frameDocument(log, frameId, origin);
      if (pageKey(log) !== told) broadcastPage(tabId, log);
    },
    false,
  );
}

/** A frame of the tab's current page uses Retryline (see `markDetected`). */
function onDetected(tabId: number, log: TabLog): void {
  if (!markDetected(log)) return;
  writer.persist(tabId);
  broadcastPage(tabId, log);
}

// Events, and new documents, from the relay of a page (any frame) of a tab. A new document is
// answered with whether a panel is subscribed to the tab, and the tab's fault rules while a panel of
// the tab has some, if its frame is the top frame or one of the top document's origin.
browser.runtime.onMessage.addListener((message: unknown, sender: Runtime.MessageSender) => {
  const tabId = sender.tab?.id;
  if (sender.id !== browser.runtime.id || typeof tabId !== 'number' || tabId < 0) return;
  if (isDocumentMessage(message)) {
    onNewDocument(sender);
    const frame = frameDocumentOf(sender);
    // A tab already closed is not heard of again (its frames would never be forgotten).
    if (!frame || closed.has(tabId)) return;
    if (frame.frameId !== 0) onFrameDocument(tabId, frame.frameId, frame.origin);
    const before = faults.of(tabId)?.applied;
    const rules = faults.forDocument(tabId, frame);
    // A new top document may be of another origin than the rules', or of theirs again: the panels say so.
    const now = faults.of(tabId);
    if (now && now.applied !== before) broadcast(tabId, { kind: 'faults', tabId, ...now });
    const answer: DocumentAnswer = [panelState(panels.has(tabId)), ...(rules ? [rules] : [])];
    return Promise.resolve(answer);
  }
  if (isDetectedMessage(message)) {
    withTab(tabId, (log) => onDetected(tabId, log));
    return;
  }
  if (!isRelayMessage(message)) return;
  const events = sanitizeEvents(message.events);
  if (events.length === 0) return;
  // The browser's word for which frame sent them, never a field of the events.
  const origin = senderOrigin(sender);
  withTab(tabId, (log) => {
    // A page that sends events uses Retryline, recorded or not.
    onDetected(tabId, log);
    const evicted = log.evicted;
    const added = appendEvents(log, events, origin);
    if (added.length === 0) return;
    writer.persist(tabId);
    broadcast(tabId, { kind: 'append', tabId, entries: added });
    if (log.evicted !== evicted) broadcastEvicted(tabId, log);
  });
});

browser.tabs.onRemoved.addListener((tabId) => {
  closed.add(tabId);
  faults.tabClosed(tabId);
  logs.delete(tabId);
  loading.delete(tabId);
  void writer.forget(tabId);
  // Its room in storage.session is free: tabs that gave up rows for lack of it may grow again.
  for (const log of logs.values()) resetByteLimit(log);
});

/** A page of this extension: the devtools panel (any other sender, a content script included, is refused). */
function isOwnPage(sender: Runtime.MessageSender | undefined): boolean {
  return (
    sender?.id === browser.runtime.id &&
    typeof sender.url === 'string' &&
    sender.url.startsWith(browser.runtime.getURL(''))
  );
}

browser.runtime.onConnect.addListener((port) => {
  if (port.name !== PANEL_PORT || !isOwnPage(port.sender)) {
    port.disconnect();
    return;
  }
  let subscribed: number | undefined;
  const unsubscribe = () => {
    if (subscribed === undefined) return;
    panels.get(subscribed)?.delete(port);
    if (panels.get(subscribed)?.size === 0) {
      panels.delete(subscribed);
      // The tab's last panel went (closed, or looking at another tab): so do its fault rules, and
      // the replays its pages kept.
      faults.panelsGone(subscribed);
      sendToTab(subscribed, panelState(false));
    }
    subscribed = undefined;
  };
  port.onDisconnect.addListener(unsubscribe);
  port.onMessage.addListener((message: unknown) => {
    const request = parsePanelRequest(message);
    if (!request) return;
    const { tabId } = request;
    switch (request.kind) {
      case 'subscribe':
        unsubscribe();
        subscribed = tabId;
        // Before anything else: a page may hold rules a worker stopped since gave it.
        if (!closed.has(tabId)) faults.panelSubscribed(tabId);
        if (!panels.has(tabId)) {
          panels.set(tabId, new Set());
          // The tab's first panel (or the first since this worker started: telling again is harmless).
          if (!closed.has(tabId)) sendToTab(tabId, panelState(true));
        }
        panels.get(tabId)?.add(port);
        withTab(tabId, (log) => {
          if (subscribed !== tabId) return;
          // The ring is bounded (MAX_TAB_BYTES), far below a message's 64 MiB; should a snapshot
          // still not go, an empty one does, so the panel is connected instead of waiting forever.
          for (const entries of [log.entries, []]) {
            try {
              const { settings, evicted } = log;
              port.postMessage({
                kind: 'snapshot',
                tabId,
                entries,
                settings,
                page: pageState(log),
                evicted,
              } satisfies WorkerUpdate);
            } catch (error) {
              warn(`could not send tab ${tabId}'s snapshot`, error);
              continue;
            }
            // After the snapshot: the tab's fault rules, when a panel of the tab set some.
            const rules = faults.of(tabId);
            if (rules) send(port, { kind: 'faults', tabId, ...rules });
            return;
          }
          unsubscribe();
        });
        break;
      case 'faults': {
        // Only the tab this port shows: its rules last as long as a panel of the tab is open.
        if (subscribed !== tabId) break;
        const { kind: _kind, tabId: _tab, origin, ...set } = request;
        faults.set(tabId, set, origin);
        broadcast(tabId, { kind: 'faults', tabId, ...(faults.of(tabId) ?? { ...set, applied: false }) });
        break;
      }
      case 'replay': {
        // Only the tab this port shows, as for its fault rules.
        const { kind: _kind, tabId: _tab, source, ...target } = request;
        if (subscribed === tabId) replay(tabId, source, target);
        break;
      }
      case 'clear':
        withTab(tabId, (log) => {
          clearLog(log);
          writer.persist(tabId);
          broadcast(tabId, { kind: 'cleared', tabId });
        });
        break;
      case 'settings':
        withTab(tabId, (log) => {
          updateSettings(log, request.settings);
          writer.persist(tabId, true);
          broadcast(tabId, { kind: 'settings', tabId, settings: log.settings });
        });
        break;
    }
  });
});
