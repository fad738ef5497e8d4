/**
 * The relay's gate: which `message` events of a page are Retryline's, as a pure
 * function of the event and the page's location. Everything else is ignored silently. The data
 * read here is a structured clone made by `postMessage`, so no page getter or function can run;
 * each event is turned into plain JSON before it goes further.
 */

import { exceedsUtf8 } from '../shared/byte-length';
import {
  type FaultsMessage,
  MAX_BATCH,
  MAX_EVENT_BYTES,
  NAMESPACE,
  type PanelStateMessage,
  PROTOCOL_VERSION,
  type RelayMessage,
  type RelayReadyMessage,
  type ReplayMessage,
} from '../shared/protocol';

/** The relay's answer to the hook (see {@link RelayReadyMessage}). */
export const RELAY_READY: RelayReadyMessage = Object.freeze({
  ns: NAMESPACE,
  v: PROTOCOL_VERSION,
  kind: 'relay-ready',
});

/** What the relay tells its page's hook when the page is to have no fault rules. */
export const NO_FAULTS: FaultsMessage = Object.freeze({
  ns: NAMESPACE,
  v: PROTOCOL_VERSION,
  kind: 'faults',
  rules: Object.freeze([]),
});

/**
 * The worker's fault rules as the relay passes them on to the hook: the message rebuilt with its
 * known fields, or `undefined` for anything else, and for a rule set stamped for another origin
 * than this document's (or not stamped: see `FaultsMessage.origin`), as for a replay. A removal
 * carries no origin and is for every document. The stamp is not passed on (the hook checks the
 * rules themselves).
 */
export function faultsFromWorker(value: unknown, location: PageLike['location']): FaultsMessage | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { ns, v, kind, rules, seed, origin } = value as Record<string, unknown>;
  if (ns !== NAMESPACE || v !== PROTOCOL_VERSION || kind !== 'faults' || !Array.isArray(rules))
    return undefined;
  if (rules.length > 0 && origin !== location.origin) return undefined;
  const message: FaultsMessage = { ns: NAMESPACE, v: PROTOCOL_VERSION, kind: 'faults', rules };
  return typeof seed === 'number' ? { ...message, seed } : message;
}

/**
 * Whether the relay hands the worker's `faults` on to its page, given whether the page holds rules
 * the relay handed it (`holding`): a rule set always (the worker sends one only to the frames of
 * the page's own origin, stamped with it: see {@link faultsFromWorker}); a removal only to a page that has rules. The worker sends a removal to
 * every frame of the tab, so that it reaches each one that got rules, and a frame that never had
 * any (one of another origin) has nothing to drop, nor anything to learn of the panel.
 */
export function passesFaults(faults: FaultsMessage, holding: boolean): boolean {
  return faults.rules.length > 0 || holding;
}

/**
 * The worker's replay ({@link WorkerReplayMessage}) as the relay passes it on to the hook: rebuilt
 * with what names the request alone (its id, client, method and URL), or `undefined` for anything else, and for a replay meant for a frame
 * of another origin than this document's (the worker sends one to every frame of the tab). A replay
 * for an opaque origin (`"null"`, sent to one frame by its id) passes only in a document whose
 * origin is opaque: the frame may show a document of another origin since its row was recorded.
 */
export function replayFromWorker(value: unknown, location: PageLike['location']): ReplayMessage | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { ns, v, kind, requestId, client, method, url, origin } = value as Record<string, unknown>;
  if (ns !== NAMESPACE || v !== PROTOCOL_VERSION || kind !== 'replay' || origin !== location.origin)
    return undefined;
  if (typeof requestId !== 'string' || typeof client !== 'string') return undefined;
  if (typeof method !== 'string' || typeof url !== 'string') return undefined;
  return { ns: NAMESPACE, v: PROTOCOL_VERSION, kind: 'replay', requestId, client, method, url };
}

/** What the relay tells its page's hook of the tab's panels ({@link PanelStateMessage}). */
export const panelMessage = (open: boolean): PanelStateMessage =>
  Object.freeze({ ns: NAMESPACE, v: PROTOCOL_VERSION, kind: 'panel', open });

/**
 * The worker's word on the tab's panels ({@link PanelStateMessage}) as the relay passes it on to the
 * hook: rebuilt, or `undefined` for anything else.
 */
export function panelFromWorker(value: unknown): PanelStateMessage | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { ns, v, kind, open } = value as Record<string, unknown>;
  if (ns !== NAMESPACE || v !== PROTOCOL_VERSION || kind !== 'panel' || typeof open !== 'boolean')
    return undefined;
  return panelMessage(open);
}

/**
 * The worker's answer to the relay's new-document notice ({@link DocumentAnswer}): the messages it
 * holds, each still to be checked as the worker's messages are; none for anything else.
 */
export function documentAnswer(value: unknown): readonly unknown[] {
  return Array.isArray(value) ? value : [];
}

/** The parts of a `MessageEvent` the gate reads. */
export interface MessageEventLike {
  readonly source: unknown;
  readonly origin: string;
  readonly data: unknown;
}

/** The page the relay runs in: its window (the only accepted source) and its location. */
export interface PageLike {
  readonly window: unknown;
  readonly location: { readonly origin: string; readonly protocol: string };
}

/** What the relay does with an accepted message. */
export type Accepted =
  | { readonly kind: 'events'; readonly message: RelayMessage; readonly dropped: number }
  | { readonly kind: 'hello' }
  | { readonly kind: 'detected' };

/**
 * An opaque origin (`file:`, a sandboxed frame, `data:`) has no string that names it: the page
 * posts with `*` and the event's origin is `"null"` (Chrome reports `file://` for files).
 */
function originMatches(eventOrigin: string, location: PageLike['location']): boolean {
  if (eventOrigin === location.origin) return true;
  const opaque = location.origin === 'null' || location.protocol === 'file:';
  return opaque && (eventOrigin === 'null' || eventOrigin === 'file://');
}

/** The event as plain JSON, or `undefined` when it is not JSON or its JSON is more than {@link MAX_EVENT_BYTES} of UTF-8. */
export function toPlainEvent(value: unknown): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  let json: string | undefined;
  try {
    // A structured clone can still hold a cycle, a BigInt or a Map: JSON refuses or flattens them.
    json = JSON.stringify(value);
  } catch {
    return undefined;
  }
  if (json === undefined || exceedsUtf8(json, MAX_EVENT_BYTES)) return undefined;
  return JSON.parse(json);
}

/**
 * Checks a page message: it must come from this very window (`event.source === window`: not
 * another frame or a popup), from this origin, carry Retryline's namespace and protocol version,
 * and be a known kind (`hook-hello`, `detected`, `events`). An `events` message must hold an array
 * of at most {@link MAX_BATCH}; events whose JSON is more than {@link MAX_EVENT_BYTES} bytes of
 * UTF-8 are dropped one by one.
 */
export function acceptPageMessage(event: MessageEventLike, page: PageLike): Accepted | undefined {
  if (event.source !== page.window || !originMatches(event.origin, page.location)) return undefined;
  const data = event.data;
  if (typeof data !== 'object' || data === null) return undefined;
  const { ns, v, kind } = data as { ns?: unknown; v?: unknown; kind?: unknown };
  if (ns !== NAMESPACE || v !== PROTOCOL_VERSION) return undefined;
  if (kind === 'hook-hello') return { kind: 'hello' };
  if (kind === 'detected') return { kind: 'detected' };
  if (kind !== 'events') return undefined;
  const events = (data as { events?: unknown }).events;
  if (!Array.isArray(events) || events.length > MAX_BATCH) return undefined;
  const plain: unknown[] = [];
  for (const value of events) {
    const event = toPlainEvent(value);
    if (event !== undefined) plain.push(event);
  }
  return {
    kind: 'events',
    message: { ns: NAMESPACE, v: PROTOCOL_VERSION, kind: 'events', events: plain },
    dropped: events.length - plain.length,
  };
}
