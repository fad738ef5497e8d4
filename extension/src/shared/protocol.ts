/**
 * The extension's wire contract (DESIGN §9–10), shared by every part: the page hook, the relay, the
 * service worker, the panel and the standalone viewer. Nothing here runs; it names the messages.
 *
 *   page (MAIN world)  --window.postMessage(PageMessage)-->  relay (ISOLATED world)
 *   relay  --runtime.sendMessage(RelayMessage)-->  service worker (per-tab ring, storage.session)
 *   panel  <--runtime.connect({ name: PANEL_PORT }): PanelRequest / WorkerUpdate-->  service worker
 */

import type { Recording, RecordingEntry } from '@retryline/core';

/** Marks Retryline's page messages among everything else a page posts. */
export const NAMESPACE = 'retryline-devtools';
/** Bumped on any incompatible change; messages of another version are dropped. */
export const PROTOCOL_VERSION = 1;
/** The largest event accepted, measured as its JSON in UTF-16 code units (a cheap upper bound of bytes / 2). */
export const MAX_EVENT_BYTES = 16 * 1024;
/** The most events one page message may carry. */
export const MAX_BATCH = 200;
/** The port name the panel connects with. */
export const PANEL_PORT = 'retryline-panel';
/** How many requests the worker keeps per tab (oldest dropped first). */
export const RING_REQUESTS = 2000;

/** What the MAIN-world hook posts to its own window. */
export interface PageMessage {
  readonly ns: typeof NAMESPACE;
  readonly v: typeof PROTOCOL_VERSION;
  readonly kind: 'events';
  readonly events: readonly unknown[];
}

/**
 * The hook → the relay, posted once when the hook is installed: "is a relay listening?". The
 * relay answers with a {@link RelayReadyMessage}. Both content scripts run at document_start in
 * different worlds, in no guaranteed order, so each side announces itself.
 */
export interface HookHelloMessage {
  readonly ns: typeof NAMESPACE;
  readonly v: typeof PROTOCOL_VERSION;
  readonly kind: 'hook-hello';
}

/**
 * The relay → the hook: "I am listening", posted when the relay starts and in answer to a
 * {@link HookHelloMessage}. Until it arrives the hook only queues (at most {@link MAX_QUEUE} events).
 * A page can forge it; the worst it can do is make the hook post before anyone listens.
 */
export interface RelayReadyMessage {
  readonly ns: typeof NAMESPACE;
  readonly v: typeof PROTOCOL_VERSION;
  readonly kind: 'relay-ready';
}

/** The most events the hook keeps while no relay is listening (oldest dropped first). */
export const MAX_QUEUE = 1000;

/** What the relay sends the worker: events already size-checked (the worker validates them). */
export interface RelayMessage {
  readonly ns: typeof NAMESPACE;
  readonly v: typeof PROTOCOL_VERSION;
  readonly kind: 'events';
  readonly events: readonly unknown[];
}

/** One line of a tab's timeline: an event, or a navigation of the tab's top frame. */
export type TimelineEntry = RecordingEntry;

/** The panel's settings for a tab, kept by the worker. */
export interface TabSettings {
  /** Keep rows across navigations (DevTools' "Preserve log"). @default false */
  readonly preserveLog: boolean;
  /** Record new events. @default true */
  readonly record: boolean;
}

/** Panel → worker. */
export type PanelRequest =
  | { readonly kind: 'subscribe'; readonly tabId: number }
  | { readonly kind: 'clear'; readonly tabId: number }
  | { readonly kind: 'settings'; readonly tabId: number; readonly settings: Partial<TabSettings> };

/** Worker → panel: a snapshot on subscribe, then appended entries, clears and settings changes. */
export type WorkerUpdate =
  | {
      readonly kind: 'snapshot';
      readonly tabId: number;
      readonly entries: readonly TimelineEntry[];
      readonly settings: TabSettings;
    }
  | { readonly kind: 'append'; readonly tabId: number; readonly entries: readonly TimelineEntry[] }
  | { readonly kind: 'cleared'; readonly tabId: number }
  | { readonly kind: 'settings'; readonly tabId: number; readonly settings: TabSettings };

/**
 * A recording: what the panel exports as JSON, what `retryline view` opens, what core's
 * `recordEvents()` produces in Node. HAR 1.2 is the other format the panel exports and imports.
 */
export type { Recording };
