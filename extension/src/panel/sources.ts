/**
 * Where the panel's entries come from: the service worker's ring for a tab (live), or a fixed list
 * (the standalone viewer, an imported file). Both speak {@link SourceUpdate}s, so the panel does
 * not care which it runs on.
 *
 * This module does not import webextension-polyfill: the viewer runs as a plain web page, where
 * the polyfill throws on load. The panel's entry passes `browser.runtime` in.
 */

import type { RequestRow } from '../model/timeline';
import { type FaultRuleSet, NO_RULES, parseFaultRules } from '../shared/faults';
import type { PageState, PanelRequest, TabSettings, TimelineEntry, WorkerUpdate } from '../shared/protocol';
import { PANEL_PORT } from '../shared/protocol';

/** What a source tells the panel. A new subscriber first gets the current state (`reset`, `settings`, `status`). */
export type SourceUpdate =
  | { readonly kind: 'reset'; readonly entries: readonly TimelineEntry[] }
  | { readonly kind: 'append'; readonly entries: readonly TimelineEntry[] }
  | { readonly kind: 'settings'; readonly settings: TabSettings }
  | { readonly kind: 'status'; readonly connected: boolean }
  /** Live sources: whether the tab's page has the extension's relay and uses Retryline (once the worker said). */
  | { readonly kind: 'page'; readonly page: PageState }
  /** Live sources: how many older requests the worker's ring dropped since the tab's log was last emptied. */
  | { readonly kind: 'evicted'; readonly evicted: number }
  /**
   * The tab's fault rules as the worker keeps them (live sources; replayed to a new subscriber when
   * there are some). Not told: the worker's answer to a set this panel has since replaced, whose own
   * answer is on its way.
   */
  | ({ readonly kind: 'faults'; readonly set: FaultRuleSet } & FaultsBinding);

/**
 * Where the tab's fault rules apply, as the worker says: the origin of the tab's top document
 * they were set for, and whether its pages are given them now (false while the page is on another
 * origin: they apply again when it comes back, or when the rules are changed there).
 */
export interface FaultsBinding {
  /** Absent while the worker does not know it (the rules are held until it does). */
  readonly origin?: string;
  readonly applied: boolean;
}

/** Fault injection in the tab a live source shows. */
export interface SourceFaults {
  /**
   * Asks the worker to replace the tab's rules (checked already: an invalid set is ignored whole).
   * What the tab then has arrives as a `faults` update, the same in every panel of the tab.
   */
  set(set: FaultRuleSet): void;
  /**
   * The rules this panel wants the tab to have, which a change builds on: the last set it asked
   * for until the worker answers with it (or with another panel's change), then the worker's.
   */
  wanted(): FaultRuleSet;
}

export interface PanelSource {
  /** Whether a tab feeds it (Record, Preserve log and Clear then act on the worker). */
  readonly live: boolean;
  /** Names the data, for exports: the tab, or the file it came from. */
  readonly label: string;
  /** Fault injection, where a tab feeds the source (a recording has no page to fault). */
  readonly faults?: SourceFaults;
  /**
   * Has the tab's page send a row's request again, through the Retryline client that sent it (the
   * worker hands it to the frame that sent it). Where a tab feeds the source only: a recording has
   * no page to send from. Nothing comes back but the new request's events; nothing is sent when
   * the page has no replay for it (not a GET, HEAD or OPTIONS request, too old, sent while no panel
   * was open, a page since left, a production build) or the worker is not connected.
   */
  replay?(row: Pick<RequestRow, 'source' | 'requestId' | 'client' | 'method' | 'url'>): void;
  subscribe(listener: (update: SourceUpdate) => void): () => void;
  clear(): void;
  updateSettings(settings: Partial<TabSettings>): void;
  /** Stops it for good (closes the port, cancels a pending reconnect). */
  close(): void;
}

export const DEFAULT_SETTINGS: TabSettings = { preserveLog: false, record: true };

/** Entries that never change (until cleared): the viewer, an import, a test. */
export function staticSource(initial: readonly TimelineEntry[], label = 'recording'): PanelSource {
  let entries = initial;
  const listeners = new Set<(update: SourceUpdate) => void>();
  return {
    live: false,
    label,
    subscribe(listener) {
      listeners.add(listener);
      listener({ kind: 'reset', entries });
      listener({ kind: 'settings', settings: { preserveLog: false, record: false } });
      return () => listeners.delete(listener);
    },
    clear() {
      entries = [];
      for (const listener of listeners) listener({ kind: 'reset', entries });
    },
    updateSettings() {},
    close() {
      listeners.clear();
    },
  };
}

/** The part of a `runtime.Port` the panel uses. */
export interface PanelPort {
  postMessage(message: PanelRequest): void;
  disconnect(): void;
  readonly onMessage: { addListener(callback: (message: unknown) => void): void };
  readonly onDisconnect: { addListener(callback: () => void): void };
}

/** The part of `browser.runtime` the panel uses. */
export interface PortConnector {
  connect(connectInfo: { name: string }): PanelPort;
}

export interface ConnectOptions {
  /** Waits before reconnect number `n` (from 1). @default 100 ms doubling to 5 s */
  readonly reconnectDelay?: (n: number) => number;
  /** Runs `callback` after `ms`; returns a cancel function. @default setTimeout */
  readonly schedule?: (callback: () => void, ms: number) => () => void;
}

const defaultDelay = (n: number) => Math.min(5000, 100 * 2 ** (n - 1));
const defaultSchedule = (callback: () => void, ms: number) => {
  const timer = setTimeout(callback, ms);
  return () => clearTimeout(timer);
};

/**
 * The live timeline of tab `tabId`, from the service worker. MV3 workers are stopped when idle,
 * which disconnects the port: the source then reconnects with backoff and subscribes again, and
 * the worker's snapshot (from `storage.session`) replaces what the panel had.
 *
 * @example
 * ```ts
 * import browser from 'webextension-polyfill';
 * const source = connectWorker(browser.devtools.inspectedWindow.tabId, browser.runtime);
 * ```
 */
export function connectWorker(
  tabId: number,
  runtime: PortConnector,
  options: ConnectOptions = {},
): PanelSource {
  const reconnectDelay = options.reconnectDelay ?? defaultDelay;
  const schedule = options.schedule ?? defaultSchedule;
  const listeners = new Set<(update: SourceUpdate) => void>();
  let entries: TimelineEntry[] = [];
  let settings: TabSettings = DEFAULT_SETTINGS;
  let connected = false;
  let port: PanelPort | undefined;
  let failures = 0;
  let cancelReconnect: (() => void) | undefined;
  let closed = false;
  // Unknown until the worker's snapshot.
  let page: PageState | undefined;
  let evicted = 0;
  // The tab's fault rules as the worker last told them; the sets this panel asked for that the
  // worker has not answered with yet, oldest first (the last is what the panel wants, sent again
  // after every subscribe: a worker that stopped forgot them); and whether a change found no port open.
  let shownFaults: FaultRuleSet = NO_RULES;
  let binding: FaultsBinding = { applied: false };
  let askedFaults: { readonly set: FaultRuleSet; readonly key: string }[] = [];
  let faultsUnsent = false;
  const wantedFaults = () => askedFaults.at(-1)?.set ?? shownFaults;

  const emit = (update: SourceUpdate) => {
    for (const listener of listeners) listener(update);
  };
  const setEvicted = (value: number) => {
    if (evicted === value) return;
    evicted = value;
    emit({ kind: 'evicted', evicted });
  };
  const setConnected = (value: boolean) => {
    if (connected === value) return;
    connected = value;
    emit({ kind: 'status', connected });
  };
  // The list is the source's own, appended to in place: a reset hands listeners a copy.
  const reset = (next: TimelineEntry[]) => {
    entries = next;
    emit({ kind: 'reset', entries: entries.slice() });
  };

  const onMessage = (message: unknown) => {
    const update = readUpdate(message, tabId);
    if (!update) return;
    failures = 0;
    setConnected(true);
    switch (update.kind) {
      case 'snapshot':
        settings = update.settings;
        emit({ kind: 'settings', settings });
        reset(settings.preserveLog ? [...update.entries] : fromLastNavigation(update.entries));
        page = update.page;
        emit({ kind: 'page', page });
        setEvicted(update.evicted);
        return;
      case 'append': {
        if (!settings.preserveLog && update.entries.some((e) => e.type === 'navigation')) {
          // Without Preserve log a navigation starts the list afresh, as in the Network panel.
          reset(fromLastNavigation([...entries, ...update.entries]));
          return;
        }
        // In place: copying the whole list on every append made a live panel quadratic (10,000
        // appends of one request each took about 2 s).
        for (const entry of update.entries) entries.push(entry);
        emit({ kind: 'append', entries: update.entries });
        return;
      }
      case 'cleared':
        reset([]);
        setEvicted(0);
        return;
      case 'page':
        page = update.page;
        emit({ kind: 'page', page });
        return;
      case 'evicted':
        setEvicted(update.evicted);
        return;
      case 'settings':
        settings = update.settings;
        emit({ kind: 'settings', settings });
        return;
      case 'faults': {
        const { kind: _kind, tabId: _tabId, origin, applied, ...set } = update;
        const key = faultsKey(set);
        const bound = origin === undefined ? { applied } : { origin, applied };
        if (key === faultsKey(shownFaults) && !askedFaults.some((asked) => asked.key === key)) {
          // The same rules, whose page went to another origin or came back: only that changed.
          binding = bound;
          emit({ kind: 'faults', set: shownFaults, ...binding });
          return;
        }
        // The worker answers each set in the order it takes them (one port), every panel of the
        // tab alike. An answer with a set this panel asked for settles it and those asked before;
        // unless it is the last asked for, the worker is about to take a newer one, so it changes
        // nothing here. A set this panel did not ask for is another panel's change: it is the tab's.
        const at = askedFaults.findIndex((asked) => asked.key === key);
        const superseded = at !== -1 && at < askedFaults.length - 1;
        askedFaults = at === -1 ? [] : askedFaults.slice(at + 1);
        if (superseded) return;
        shownFaults = set;
        binding = bound;
        emit({ kind: 'faults', set, ...binding });
        return;
      }
    }
  };

  const post = (request: PanelRequest) => {
    try {
      port?.postMessage(request);
    } catch {
      // A port of a stopped worker throws; its onDisconnect reconnects.
    }
  };

  const sendFaults = () => {
    const open = port;
    faultsUnsent = true;
    if (!open) return;
    const { rules, seed } = wantedFaults();
    // The origin the worker bound the rules to: a worker started since binds them to it, unless it
    // has heard of the tab's top document.
    const { origin } = binding;
    try {
      open.postMessage({
        kind: 'faults',
        tabId,
        rules,
        ...(seed === undefined ? {} : { seed }),
        ...(origin === undefined ? {} : { origin }),
      });
      faultsUnsent = false;
    } catch {
      // A port of a stopped worker throws: the rules go again after the next subscribe.
    }
  };

  const connect = () => {
    cancelReconnect = undefined;
    if (closed) return;
    let next: PanelPort;
    try {
      next = runtime.connect({ name: PANEL_PORT });
    } catch {
      // The extension was reloaded or is being updated: keep trying, more slowly.
      retry();
      return;
    }
    port = next;
    next.onMessage.addListener((message) => {
      if (port === next) onMessage(message);
    });
    next.onDisconnect.addListener(() => {
      if (port !== next) return;
      port = undefined;
      setConnected(false);
      retry();
    });
    post({ kind: 'subscribe', tabId });
    // Ports only go with the worker (or the extension): whatever this panel had set, it sets again.
    // Only that set can be answered now; the ones before it went to a worker that is gone.
    askedFaults = askedFaults.slice(-1);
    if (wantedFaults().rules.length > 0 || faultsUnsent) sendFaults();
  };

  const retry = () => {
    if (closed || cancelReconnect) return;
    failures++;
    cancelReconnect = schedule(connect, reconnectDelay(failures));
  };

  connect();

  return {
    live: true,
    label: `tab ${tabId}`,
    subscribe(listener) {
      listeners.add(listener);
      listener({ kind: 'reset', entries: entries.slice() });
      listener({ kind: 'settings', settings });
      listener({ kind: 'status', connected });
      if (page) listener({ kind: 'page', page });
      if (evicted > 0) listener({ kind: 'evicted', evicted });
      if (shownFaults.rules.length > 0) listener({ kind: 'faults', set: shownFaults, ...binding });
      return () => listeners.delete(listener);
    },
    faults: {
      set(set) {
        askedFaults.push({ set, key: faultsKey(set) });
        sendFaults();
      },
      wanted: wantedFaults,
    },
    replay({ source, requestId, client, method, url }) {
      post({ kind: 'replay', tabId, source, requestId, client, method, url });
    },
    clear() {
      reset([]);
      setEvicted(0);
      post({ kind: 'clear', tabId });
    },
    updateSettings(change) {
      settings = { ...settings, ...change };
      emit({ kind: 'settings', settings });
      post({ kind: 'settings', tabId, settings: change });
    },
    close() {
      closed = true;
      cancelReconnect?.();
      cancelReconnect = undefined;
      const open = port;
      port = undefined;
      try {
        open?.disconnect();
      } catch {
        // Already gone.
      }
      listeners.clear();
    },
  };
}

/**
 * A fault rule set as the worker answers with it, to compare sets by: read by `parseFaultRules`,
 * as both the worker and {@link readUpdate} read it, which rebuilds it with its fields in one order.
 */
const faultsKey = (set: FaultRuleSet) => JSON.stringify(parseFaultRules(set) ?? set);

/** The entries from the last navigation on (all of them when there was none). */
export function fromLastNavigation(entries: readonly TimelineEntry[]): TimelineEntry[] {
  for (let i = entries.length - 1; i >= 0; i--) {
    if (entries[i]?.type === 'navigation') return entries.slice(i);
  }
  return [...entries];
}

/** A worker message for this tab, shape-checked (the worker is ours, but a bug should not crash the panel). */
function readUpdate(message: unknown, tabId: number): WorkerUpdate | undefined {
  if (typeof message !== 'object' || message === null) return undefined;
  const update = message as Partial<Record<string, unknown>>;
  if (update.tabId !== tabId) return undefined;
  switch (update.kind) {
    case 'snapshot':
      return Array.isArray(update.entries) &&
        isSettings(update.settings) &&
        isPageState(update.page) &&
        isCount(update.evicted)
        ? (message as WorkerUpdate)
        : undefined;
    case 'append':
      return Array.isArray(update.entries) ? (message as WorkerUpdate) : undefined;
    case 'cleared':
      return message as WorkerUpdate;
    case 'settings':
      return isSettings(update.settings) ? (message as WorkerUpdate) : undefined;
    case 'page':
      return isPageState(update.page) ? (message as WorkerUpdate) : undefined;
    case 'evicted':
      return isCount(update.evicted) ? (message as WorkerUpdate) : undefined;
    case 'faults': {
      const set = parseFaultRules({
        rules: update.rules,
        ...(update.seed === undefined ? {} : { seed: update.seed }),
      });
      const applied = update.applied === true;
      return (
        set &&
        (typeof update.origin === 'string'
          ? { kind: 'faults', tabId, ...set, origin: update.origin, applied }
          : { kind: 'faults', tabId, ...set, applied })
      );
    }
    default:
      return undefined;
  }
}

function isPageState(value: unknown): value is PageState {
  if (typeof value !== 'object' || value === null) return false;
  const page = value as Partial<Record<string, unknown>>;
  const { frames } = page;
  return (
    typeof page.hooked === 'boolean' &&
    typeof page.detected === 'boolean' &&
    (frames === undefined || (Array.isArray(frames) && frames.every((frame) => typeof frame === 'string')))
  );
}

const isCount = (value: unknown): value is number =>
  typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;

function isSettings(value: unknown): value is TabSettings {
  if (typeof value !== 'object' || value === null) return false;
  const settings = value as Partial<Record<string, unknown>>;
  return typeof settings.preserveLog === 'boolean' && typeof settings.record === 'boolean';
}

/**
 * Loads a recording for `?src=`: only from the page's own origin (a viewer must not be turned into
 * a reader of other sites' data by a link), and read as text, never run.
 */
export async function fetchRecording(
  src: string,
  base: string,
  fetchImpl: typeof fetch = fetch,
): Promise<{ text: string; name: string } | { error: string }> {
  let url: URL;
  try {
    url = new URL(src, base);
  } catch {
    return { error: `Cannot load "${src}": not a URL.` };
  }
  if (url.origin !== new URL(base).origin) {
    return { error: `Cannot load ${url.href}: only recordings from ${new URL(base).origin} can be opened.` };
  }
  try {
    const response = await fetchImpl(url.href, { credentials: 'same-origin' });
    if (!response.ok) return { error: `Cannot load ${url.href}: HTTP ${response.status}.` };
    const name = url.pathname.split('/').pop() || url.href;
    return { text: await response.text(), name };
  } catch (error) {
    return { error: `Cannot load ${url.href}: ${(error as Error).message}` };
  }
}
