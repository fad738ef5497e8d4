/**
 * The worker's checks of what reaches it: a relay's batch, a panel's request, a sender's origin.
 * Messages come from content scripts of arbitrary pages and are treated as untrusted.
 */

import { parseFaultRules } from '../shared/faults';
import {
  type DetectedMessage,
  MAX_BATCH,
  NAMESPACE,
  type PanelRequest,
  type PanelStateMessage,
  PROTOCOL_VERSION,
  type RelayDocumentMessage,
  type ReplayTarget,
  type WorkerReplayMessage,
} from '../shared/protocol';
import { MAX_ID_LENGTH, MAX_STRING_LENGTH } from '../shared/schema';
import type { FrameDocument } from './fault-rules';
import { parseSettings } from './persistence';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isTabId(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

const isText = (value: unknown, max: number): value is string =>
  typeof value === 'string' && value.length > 0 && value.length <= max;

/** A panel's message, checked: `undefined` for anything that is not a {@link PanelRequest}. */
export function parsePanelRequest(value: unknown): PanelRequest | undefined {
  if (!isRecord(value) || !isTabId(value.tabId)) return undefined;
  const tabId = value.tabId;
  switch (value.kind) {
    case 'subscribe':
    case 'clear':
      return { kind: value.kind, tabId };
    case 'settings': {
      const settings = parseSettings(value.settings, true);
      return settings ? { kind: 'settings', tabId, settings } : undefined;
    }
    case 'faults': {
      // Checked whole: a set with one bad rule is refused (the panel checks it the same way first).
      const set = parseFaultRules({
        rules: value.rules,
        ...(value.seed === undefined ? {} : { seed: value.seed }),
      });
      if (!set) return undefined;
      // The origin the panel was told the rules are bound to: a bad one is no origin, not a bad set.
      const { origin } = value;
      return isText(origin, MAX_STRING_LENGTH)
        ? { kind: 'faults', tabId, ...set, origin }
        : { kind: 'faults', tabId, ...set };
    }
    case 'replay': {
      // As a row names its request: the frame's origin (as the worker recorded it), the id, and
      // the client, method and URL of its request-start, no longer than the worker keeps them.
      const { source, requestId, client, method, url } = value;
      return isText(source, MAX_STRING_LENGTH) &&
        isText(requestId, MAX_ID_LENGTH) &&
        isText(client, MAX_STRING_LENGTH) &&
        isText(method, MAX_STRING_LENGTH) &&
        isText(url, MAX_STRING_LENGTH)
        ? { kind: 'replay', tabId, source, requestId, client, method, url }
        : undefined;
    }
    default:
      return undefined;
  }
}

/** Whether a runtime message is a relay's batch (its events are still unchecked). */
export function isRelayMessage(value: unknown): value is { events: readonly unknown[] } {
  return (
    isRecord(value) &&
    value.ns === NAMESPACE &&
    value.v === PROTOCOL_VERSION &&
    value.kind === 'events' &&
    Array.isArray(value.events) &&
    value.events.length <= MAX_BATCH
  );
}

/** Whether a runtime message is a relay's "new document" notice ({@link RelayDocumentMessage}). */
export function isDocumentMessage(value: unknown): value is RelayDocumentMessage {
  return (
    isRecord(value) && value.ns === NAMESPACE && value.v === PROTOCOL_VERSION && value.kind === 'document'
  );
}

/** Whether a runtime message is a relay's "this document uses Retryline" ({@link DetectedMessage}). */
export function isDetectedMessage(value: unknown): value is DetectedMessage {
  return (
    isRecord(value) && value.ns === NAMESPACE && value.v === PROTOCOL_VERSION && value.kind === 'detected'
  );
}

/**
 * The new document a relay's notice stands for, read from its sender alone: the tab, and the URL
 * of that tab's top frame (frame 0). A notice from a frame inside the page, or from no tab, is no
 * new page and gives `undefined`.
 */
export function newDocumentOf(
  sender: SenderLike & { readonly tab?: { readonly id?: number | undefined } },
): { readonly tabId: number; readonly url: string } | undefined {
  const tabId = sender.tab?.id;
  if (!isTabId(tabId) || sender.frameId !== 0 || typeof sender.url !== 'string') return undefined;
  return { tabId, url: sender.url };
}

/**
 * The document a relay's new-document notice stands for, in whichever frame: the frame and the
 * document's origin, read from the sender alone (see {@link senderOrigin}); `undefined` when the
 * browser named no frame. Which frames get a tab's fault rules is decided from these.
 */
export function frameDocumentOf(sender: SenderLike): FrameDocument | undefined {
  const { frameId } = sender;
  if (typeof frameId !== 'number' || !Number.isSafeInteger(frameId) || frameId < 0) return undefined;
  return { frameId, origin: senderOrigin(sender) };
}

/** The origin a sender's URL belongs to (`"null"` for opaque ones and for no URL). */
export function originOf(url: string | undefined): string {
  if (url === undefined) return 'null';
  try {
    return new URL(url).origin;
  } catch {
    return 'null';
  }
}

/** What the worker reads of a relay message's sender: the browser fills it in, the page cannot. */
export interface SenderLike {
  /** The sending frame's URL. */
  readonly url?: string | undefined;
  /**
   * The sending document's origin as the browser computed it, where the browser gives it (Chrome
   * 80+): it "can differ from the url property (e.g., about:blank) or be opaque (e.g., sandboxed
   * iframes)", https://developer.mozilla.org/docs/Mozilla/Add-ons/WebExtensions/API/runtime/MessageSender
   */
  readonly origin?: unknown;
  /** The sending frame (0: the tab's top frame). */
  readonly frameId?: number | undefined;
}

/**
 * The origin a relay's events are recorded under: the frame's, as the browser vouches for it,
 * never anything the page wrote into a message. The panel keys rows by it (see `frameKey`), so
 * a frame of another origin can never add to this frame's rows.
 *
 * Every opaque origin serialises as `"null"` (HTML, serialization of an origin: "If origin is an
 * opaque origin, then return "null"", https://html.spec.whatwg.org/multipage/browsers.html#ascii-serialisation-of-an-origin),
 * yet each is distinct: a frame that sandboxes itself must not share rows with another sandboxed
 * frame (or a sandboxed top page), so an opaque origin is named with its frame.
 */
export function senderOrigin(sender: SenderLike): string {
  const origin =
    typeof sender.origin === 'string' && sender.origin !== '' ? sender.origin : originOf(sender.url);
  if (origin !== 'null') return origin;
  return typeof sender.frameId === 'number' ? `null (frame ${sender.frameId})` : 'null';
}

/**
 * Where a panel's replay of a request (`target`) of the frame whose origin is `source` goes, and
 * with what: an opaque origin names its frame ({@link senderOrigin}), which alone is sent the
 * replay, for an opaque origin (`"null"`: the frame may have gone to a document of another origin
 * since, keeping its id); any other origin is matched by each relay of the tab against its own, so
 * a frame of another origin that happens to use the same id (a caller may choose one) sends nothing.
 */
export function replayRoute(
  source: string,
  { requestId, client, method, url }: ReplayTarget,
): { readonly message: WorkerReplayMessage; readonly frameId?: number } {
  const frame = /^null \(frame (\d+)\)$/.exec(source)?.[1];
  const message: WorkerReplayMessage = {
    ns: NAMESPACE,
    v: PROTOCOL_VERSION,
    kind: 'replay',
    requestId,
    client,
    method,
    url,
    origin: frame === undefined ? source : 'null',
  };
  return frame === undefined ? { message } : { message, frameId: Number(frame) };
}

/** What the frames of a tab are told of its panels (see {@link PanelStateMessage}). */
export function panelState(open: boolean): PanelStateMessage {
  return { ns: NAMESPACE, v: PROTOCOL_VERSION, kind: 'panel', open };
}
