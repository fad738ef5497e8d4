/**
 * The extension's wire contract, shared by every part: the page hook, the relay, the
 * service worker, the panel and the standalone viewer. Nothing here runs; it names the messages.
 *
 *   page (MAIN world)  --window.postMessage(PageMessage | DetectedMessage)-->  relay (ISOLATED world)
 *   relay  --runtime.sendMessage(RelayMessage | RelayDocumentMessage | DetectedMessage)-->  service worker (per-tab ring, storage.session)
 *   panel  <--runtime.connect({ name: PANEL_PORT }): PanelRequest / WorkerUpdate-->  service worker
 *
 * Fault rules go the other way, only while a panel for the tab is open, and only to the page's own
 * origin: the tab's top frame and the frames of the top document's origin, never a frame of
 * another origin (an ad, a widget), whose scripts could read them from its window:
 *
 *   panel  --PanelRequest 'faults'-->  service worker (rules per tab, and the tab's frames of its page's origin)
 *   service worker  --tabs.sendMessage(FaultsMessage) to each such frame, or the answer to its RelayDocumentMessage-->  relay
 *   relay  --window.postMessage(FaultsMessage, its own origin)-->  page hook (matches each attempt core asks about)
 *
 * So does a replay, the panel's "send this request again":
 *
 *   panel  --PanelRequest 'replay'-->  service worker (from a port subscribed to the tab)
 *   service worker  --tabs.sendMessage(WorkerReplayMessage)-->  relay of the frame that sent it
 *   relay  --window.postMessage(ReplayMessage)-->  page hook (runs the replay core offered for it)
 *
 * A page keeps the replays core offers only while a panel is subscribed to its tab, which every
 * frame of the tab is told (a replay may go to any frame that has rows):
 *
 *   service worker  --tabs.sendMessage(PanelStateMessage) to every frame, or the answer to its RelayDocumentMessage-->  relay
 *   relay  --window.postMessage(PanelStateMessage)-->  page hook (keeps offers while open; drops them, and stops its replays, when closed)
 */

import type { Recording, RetrylineEvent } from '@retryline/core';
import type { RecordingEntry } from '@retryline/core/instrument';
import type { FaultRule, FaultRuleSet } from './faults';

/** Marks Retryline's page messages among everything else a page posts. */
export const NAMESPACE = 'retryline-devtools';
/** Bumped on any incompatible change; messages of another version are dropped. */
export const PROTOCOL_VERSION = 1;
/** The largest event accepted: the bytes of its JSON as UTF-8 (what Chrome's messaging and storage count). */
export const MAX_EVENT_BYTES = 16 * 1024;
/** The most events one page message may carry. */
export const MAX_BATCH = 200;
/** The port name the panel connects with. */
export const PANEL_PORT = 'retryline-panel';
/** How many requests the worker keeps per tab (oldest dropped first). */
export const RING_REQUESTS = 2000;
/**
 * The most bytes (UTF-8 JSON of its entries) the worker keeps per tab, oldest requests dropped
 * first. Every tab shares `storage.session`'s 10 MiB, so no tab may take it all: two full tabs fit,
 * and a tab whose write finds the quota full drops its own oldest rows, never another tab's. It
 * holds a full ring of ordinary requests (about 2 KB each with their headers), and keeps a
 * snapshot far below the 64 MiB a runtime message may carry.
 */
export const MAX_TAB_BYTES = 4 * 1024 * 1024;
/**
 * The most events the worker keeps of one request; later ones are dropped (its `request-end` is
 * still kept, so the row ends). A retry loop of 100 attempts is about 300 events.
 */
export const MAX_REQUEST_EVENTS = 500;
/** The most bytes (UTF-8 JSON) the worker keeps of one request, as {@link MAX_REQUEST_EVENTS} does. */
export const MAX_REQUEST_BYTES = 256 * 1024;

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

/**
 * The hook → the relay, and the relay → the worker: "this document uses Retryline". The hook posts
 * it once per document, when core first calls its `hello` (a client was created) and a relay
 * listens; the relay passes the first one of its document on. It lets the panel tell a page that
 * has not sent a Retryline request yet from a page without Retryline. A page can forge it: the
 * worst it can do is have its own tab said to use Retryline.
 */
export interface DetectedMessage {
  readonly ns: typeof NAMESPACE;
  readonly v: typeof PROTOCOL_VERSION;
  readonly kind: 'detected';
}

/** The most events the hook keeps while no relay is listening (oldest dropped first). */
export const MAX_QUEUE = 1000;

/**
 * The most requests a page hook keeps a replay of: the latest, the oldest dropped first. Core offers
 * one as each GET, HEAD and OPTIONS request starts, in development builds; each holds its request
 * (the caller's init or `Request`, its signal, its options), never a response. A page keeps them
 * only while a panel is subscribed to its tab (see {@link PanelStateMessage}).
 */
export const MAX_REPLAYS = 200;

/**
 * The methods whose requests core offers a replay of (request-engine.ts, `offerReplay`): the safe
 * ones (RFC 9110 §9.2.1), TRACE aside. The panel offers Replay on their rows only.
 */
export const REPLAYED_METHODS: readonly string[] = ['GET', 'HEAD', 'OPTIONS'];

/** What the relay sends the worker: events already size-checked (the worker validates them). */
export interface RelayMessage {
  readonly ns: typeof NAMESPACE;
  readonly v: typeof PROTOCOL_VERSION;
  readonly kind: 'events';
  readonly events: readonly unknown[];
}

/**
 * The relay of a frame → the worker: "this frame shows a new document", sent when the relay starts
 * (content scripts run once per document, at document_start) and when a document comes back from
 * the back/forward cache (shown again without running them). A tab's top frame's marks the boundary
 * between pages, so the extension needs no `webNavigation` permission. It carries nothing else: the
 * worker reads the tab, the frame and the URL from the message's sender, as the browser fills them
 * in. The worker answers with a {@link DocumentAnswer}. The top frame's notice also sets the top
 * document's origin: the frames of the page before are no longer sent rules.
 */
export interface RelayDocumentMessage {
  readonly ns: typeof NAMESPACE;
  readonly v: typeof PROTOCOL_VERSION;
  readonly kind: 'document';
}

/**
 * The worker's answer to a {@link RelayDocumentMessage}: what the new document is to hold, as the
 * messages the worker would otherwise send it, which the relay takes the same way. Always the
 * tab's {@link PanelStateMessage}; then, while a panel of the tab has fault rules, its
 * {@link FaultsMessage} if the frame is the tab's top frame or one whose document is of the top
 * document's origin, and that is the origin the rules were set for. A relay that gets no answer (the worker failed) takes the panel as closed.
 */
export type DocumentAnswer = readonly (PanelStateMessage | FaultsMessage)[];

/**
 * Set by the worker on the entries of a request whose events it stopped keeping
 * ({@link MAX_REQUEST_EVENTS}, {@link MAX_REQUEST_BYTES}): on the event that reached the limit
 * (`dropped: 0`, later events will not be kept) and on the request's `request-end` kept after it
 * (`dropped`: how many of its events were not kept).
 */
export interface Truncation {
  readonly dropped: number;
}

/** An event of a tab's timeline, with the origin of the page that sent it. */
export interface EventEntry {
  readonly type: 'event';
  readonly event: RetrylineEvent;
  readonly origin: string;
  /** Present when the worker dropped events of this request (see {@link Truncation}). */
  readonly truncated?: Truncation;
}

/** A navigation of the tab's top frame (its URL redacted as request URLs are). */
export type NavigationEntry = Extract<RecordingEntry, { readonly type: 'navigation' }>;

/**
 * One line of a tab's timeline: an event, or a navigation of the tab's top frame. A Recording's
 * entry, with the worker's {@link Truncation} mark where it dropped events.
 */
export type TimelineEntry = EventEntry | NavigationEntry;

/**
 * What the worker knows of a tab's current top document (the last one whose relay sent a
 * {@link RelayDocumentMessage} from the top frame), for the panel's empty state.
 */
export interface PageState {
  /**
   * The extension's relay runs in the document: false for a page loaded before the extension was
   * installed or reloaded, and for a page the browser runs no content script in (its own pages,
   * its store). A tab that goes from a recorded page to such a page keeps the recorded page's state:
   * without the `webNavigation` permission, only a relay tells the worker of a new document.
   */
  readonly hooked: boolean;
  /** The document (or a frame in it) created a Retryline client ({@link DetectedMessage}) or sent an event. */
  readonly detected: boolean;
  /**
   * The origins, as rows name them (an entry's `origin`), of the frames the document has now as far
   * as the worker heard (each relay's {@link RelayDocumentMessage}): the top frame's, and each
   * frame's latest document's. A frame removed from the page sends no notice, so one may be listed
   * that is gone; a frame that went to another document is listed with that document's origin
   * only. Absent when the worker does not know them: it was started after the document was, or the
   * page made more frames than it follows. Never stored: a worker that restarts forgets them.
   */
  readonly frames?: readonly string[];
}

/** The panel's settings for a tab, kept by the worker. */
export interface TabSettings {
  /** Keep rows across navigations (DevTools' "Preserve log"). @default false */
  readonly preserveLog: boolean;
  /** Record new events. @default true */
  readonly record: boolean;
}

/**
 * What names a request a page may send again: its id, and its client, method and URL as its
 * `request-start` event gives them (the URL redacted). A caller may give the same id to request
 * after request (a session-wide correlation id), so the id alone does not name one: core offers a
 * replay with all four, and the page hook keeps and finds it by all four.
 */
export interface ReplayTarget {
  readonly requestId: string;
  readonly client: string;
  readonly method: string;
  readonly url: string;
}

/**
 * Panel → worker. `subscribe` makes the port show the tab: its first one tells the tab's frames a
 * panel is open ({@link PanelStateMessage}), and when the last one goes they are told it closed.
 * `replay` has the page send request `requestId` (with its client, method and URL: a row's, see
 * {@link ReplayTarget}) of the frame whose origin is `source` (with the id, a row's `frameKey`
 * parts) again, through the Retryline client that sent it; it is taken only from a port subscribed
 * to that tab. `faults` replaces the tab's fault rules (an empty list
 * removes them), which go to the page's own origin only (see {@link FaultsMessage}); it is taken
 * only from a port subscribed to that tab, and the rules last while a port subscribed to the tab is
 * connected: when the last one goes (the panel closed), the tab's pages drop them. A worker that
 * was stopped forgets them with its ports, so a panel sends its rules again after each `subscribe`
 * (with the origin the worker last said they are bound to). Checked with `validateFaultRules` (an invalid set is ignored whole).
 */
export type PanelRequest =
  | { readonly kind: 'subscribe'; readonly tabId: number }
  | { readonly kind: 'clear'; readonly tabId: number }
  | { readonly kind: 'settings'; readonly tabId: number; readonly settings: Partial<TabSettings> }
  | {
      readonly kind: 'faults';
      readonly tabId: number;
      readonly rules: readonly FaultRule[];
      readonly seed?: number;
      /**
       * The top origin the worker last said the tab's rules are bound to, if it said one: what a
       * worker that has not heard of the tab's top document since it started binds them to.
       */
      readonly origin?: string;
    }
  | ({
      readonly kind: 'replay';
      readonly tabId: number;
      readonly source: string;
    } & ReplayTarget);

/**
 * Worker → panel: a snapshot on subscribe, then appended entries, clears and settings changes;
 * `page`: the tab's {@link PageState} when it changes; `evicted`: how many requests the tab's ring
 * dropped (oldest first, to stay within {@link RING_REQUESTS} and {@link MAX_TAB_BYTES}) since it
 * was last emptied, when it changes (a `cleared` sets it to 0); `faults`: the tab's rules as the
 * worker keeps (and has sent to the frames of the page's own origin) them, with the top origin
 * they are bound to and whether they apply now, after each change, after the snapshot when the tab
 * has any, and when a navigation of the top frame changes whether they apply.
 */
export type WorkerUpdate =
  | {
      readonly kind: 'snapshot';
      readonly tabId: number;
      readonly entries: readonly TimelineEntry[];
      readonly settings: TabSettings;
      readonly page: PageState;
      readonly evicted: number;
    }
  | { readonly kind: 'append'; readonly tabId: number; readonly entries: readonly TimelineEntry[] }
  | { readonly kind: 'cleared'; readonly tabId: number }
  | { readonly kind: 'settings'; readonly tabId: number; readonly settings: TabSettings }
  | { readonly kind: 'page'; readonly tabId: number; readonly page: PageState }
  | { readonly kind: 'evicted'; readonly tabId: number; readonly evicted: number }
  | {
      readonly kind: 'faults';
      readonly tabId: number;
      readonly rules: readonly FaultRule[];
      readonly seed?: number;
      /** The origin of the tab's top document the rules are bound to (unknown: held until it is). */
      readonly origin?: string;
      /**
       * Whether the tab's pages are given the rules now: false while its top document is of another
       * origin than {@link origin} (the rules apply again when it comes back), or for no rules.
       */
      readonly applied: boolean;
    };

/**
 * The worker → the relays of a tab's top frame and of its frames of the top document's origin
 * (`tabs.sendMessage` to each of those frames, or the answer to its {@link RelayDocumentMessage}),
 * while that is the origin the rules were set for, and the relay → its page's hook
 * (`window.postMessage`, to the page's own origin): the tab's fault rules, replacing any the page
 * had. A frame of another origin, a top document included, is never sent rules: its scripts could
 * read them from its window, and they would fault its requests. An empty list
 * removes them: the worker sends that to every frame of the tab, so it reaches each one that got
 * rules, and a relay passes it on only to a page that holds rules it handed it. The hook checks the
 * set again (`parseFaultRules`), since a page can post one too: the worst a page can do with it
 * is fault its own requests, marked as injected.
 */
export interface FaultsMessage extends FaultRuleSet {
  readonly ns: typeof NAMESPACE;
  readonly v: typeof PROTOCOL_VERSION;
  readonly kind: 'faults';
  /**
   * The worker → the relays, on every rule set (never on a removal): the origin of the tab's top
   * document the rules were set for, as a document's `location.origin` gives it (`"null"` for an
   * opaque one). A relay passes the set on only when it is its own document's origin, and without
   * this field: the worker's frame list lags each frame's navigation, and a document of another
   * origin must not be handed the rules.
   */
  readonly origin?: string;
}

/**
 * The relay → its page's hook (`window.postMessage`): send request `requestId` again (the panel's
 * Replay). The hook runs the replay core offered for it when the request started (development
 * builds; GET, HEAD and OPTIONS only) if it still keeps one ({@link MAX_REPLAYS}) whose client,
 * method and URL are these too ({@link ReplayTarget}), and ignores any other. A page can forge one
 * (the relay posts on the same window): the worst it can do is have one of its own GET, HEAD or
 * OPTIONS requests sent again, as it could send it itself.
 */
export interface ReplayMessage extends ReplayTarget {
  readonly ns: typeof NAMESPACE;
  readonly v: typeof PROTOCOL_VERSION;
  readonly kind: 'replay';
}

/**
 * The worker → the relays of a tab (`tabs.sendMessage`): a panel's replay. Request ids are the
 * sending frame's own, and a caller may choose one another frame also uses, so the replay goes to
 * the frame whose origin the row names: sent to every frame of the tab with that `origin`, which
 * each relay compares with its own; or, for an opaque origin (named with its frame, see
 * `senderOrigin`), to that frame alone, with `origin` `"null"`: a frame keeps its id across
 * navigations, so its relay passes the replay on only while its document's origin is opaque too.
 */
export interface WorkerReplayMessage extends ReplayMessage {
  readonly origin: string;
}

/**
 * The worker → every frame of a tab (`tabs.sendMessage`, or its {@link DocumentAnswer}), and the
 * relay → its page's hook (`window.postMessage`): whether a DevTools panel is subscribed to the
 * tab. Sent to every frame when the tab's first panel subscribes and when its last one goes (closed,
 * or turned to another tab), and in the answer to each new document. The hook keeps core's replay
 * offers only while `open` (each holds its request's caller data); when closed, it drops them and
 * stops the replays it runs. Until its document is told, a hook keeps them, so that the requests a
 * page sends as it loads can be replayed from a panel already open. It carries nothing else: every
 * frame may learn that the tab is inspected, nothing more. A page can forge one: the worst it can
 * do is have its own hook keep its replays, or drop them.
 */
export interface PanelStateMessage {
  readonly ns: typeof NAMESPACE;
  readonly v: typeof PROTOCOL_VERSION;
  readonly kind: 'panel';
  readonly open: boolean;
}

/**
 * A recording: what the panel exports as JSON, what `retryline view` opens, what core's
 * `recordEvents()` produces in Node. HAR 1.2 is the other format the panel exports and imports.
 */
export type { Recording };
