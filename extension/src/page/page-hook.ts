/**
 * The devtools hook core pushes events to, as a value with its world injected: the
 * MAIN-world content script (`hook.ts`) installs it on the page, tests drive it with fakes.
 *
 * Cost model: `hello` (core calls it once per client created) sets a flag and, once per document,
 * posts {@link DETECTED}; `push` appends to an array and, at most once per {@link FLUSH_MS}, arms
 * one timer; with no events nothing runs at all. Until a relay says it is listening, events wait in a queue
 * of at most {@link MAX_QUEUE} (oldest dropped), so the events of the first requests of a page are
 * not lost to the race between the two document_start scripts.
 *
 * Robustness (nothing the page controls can make emitting an event throw): after
 * document_start the page may replace any intrinsic the hook calls (`Array.prototype.slice`,
 * `push`, the array iterator), so every way into the hook's code (`push`, `relayReady`, its
 * timer) catches. A page that does so can at worst lose its own events for the panel; it can
 * never make a Retryline call throw, nor stop the hook for good.
 *
 * Replay: core offers a way to send each GET, HEAD and OPTIONS request again as it starts
 * (`replayable`, development builds); the hook keeps those of the latest {@link MAX_REPLAYS}
 * requests, by id, client, method and URL together ({@link ReplayTarget}: a caller may reuse an id),
 * and runs one when the relay brings the panel's {@link ReplayMessage}. Each offer
 * holds its request's caller data (its init and headers, its signal and listeners, its options),
 * so the hook keeps offers only while a DevTools panel is subscribed to the tab, as the relay says
 * ({@link PanelStateMessage}), and from the document's start until the relay first says (so that
 * the requests of a page loading under an open panel can be replayed); when the panel goes, it
 * drops them all and stops the replays it runs.
 */

import type { DevtoolsHook, FaultStep } from '@retryline/core/instrument';
import {
  type DetectedMessage,
  type FaultsMessage,
  type HookHelloMessage,
  MAX_BATCH,
  MAX_QUEUE,
  MAX_REPLAYS,
  NAMESPACE,
  type PageMessage,
  type PanelStateMessage,
  PROTOCOL_VERSION,
  type ReplayMessage,
  type ReplayTarget,
} from '../shared/protocol';
import { createPageFaults, type FaultWorld } from './page-faults';

/** How long events are gathered before they are posted: one frame, so a burst makes one message. */
export const FLUSH_MS = 16;

/** The hook's question to the relay (see {@link HookHelloMessage}). */
export const HOOK_HELLO: HookHelloMessage = Object.freeze({
  ns: NAMESPACE,
  v: PROTOCOL_VERSION,
  kind: 'hook-hello',
});

/** "This document uses Retryline" (see {@link DetectedMessage}): the hook posts it, the relay passes it on. */
export const DETECTED: DetectedMessage = Object.freeze({
  ns: NAMESPACE,
  v: PROTOCOL_VERSION,
  kind: 'detected',
});

/** What the hook needs from its window, captured before any page script can replace it. */
export interface HookWorld extends FaultWorld {
  /** `window.postMessage` bound to the page's window, with the target origin already chosen. */
  readonly post: (message: PageMessage | HookHelloMessage | DetectedMessage) => void;
  readonly setTimer: (callback: () => void, ms: number) => unknown;
  /**
   * A new `AbortController`: a replay's, or a fault rule set's (see `FaultWorld`), which the hook
   * aborts when the panel goes.
   */
  readonly controller: () => AbortController;
}

/** The installed hook: what core calls, and what the hook's `message` listener calls. */
export interface PageHook {
  /** What core calls ({@link DevtoolsHook}): takes anything, since a page may call it too. */
  push(event: unknown): void;
  /**
   * What core calls when a client is created ({@link DevtoolsHook}'s `hello`): the document uses
   * Retryline. Posts {@link DETECTED} once per document, when a relay listens. Never throws.
   */
  hello(): void;
  /**
   * What core asks before each attempt ({@link DevtoolsHook}'s `fault`): the step of the tab's
   * fault rules that answers it, or `undefined`. Takes anything and never throws.
   */
  fault(query: unknown): FaultStep | undefined;
  /** The relay brought the tab's fault rules ({@link FaultsMessage}): they replace the page's. */
  setFaults(message: FaultsMessage): void;
  /**
   * What core calls as a request that can be replayed starts ({@link DevtoolsHook}'s `replayable`):
   * keeps `replay` under the request's id and `request` (its client, method and URL), for the latest
   * {@link MAX_REPLAYS} requests, unless the relay said no panel is subscribed to the tab. Takes
   * anything and never throws.
   */
  replayable(requestId: unknown, replay: unknown, request: unknown): void;
  /**
   * The relay brought the panel's replay ({@link ReplayMessage}): runs the one kept for the request
   * it names, if any, with the signal of a controller of its own, which the hook aborts when the
   * panel goes; it forgets the controller once a replay that returns a promise settles.
   */
  replay(target: ReplayTarget): void;
  /**
   * The relay said whether a panel is subscribed to the tab ({@link PanelStateMessage}): when none
   * is, the kept replays are dropped and the running ones aborted, and none is kept until one is;
   * the injected waits in progress end too (see `PageFaults.stop`).
   */
  setPanel(open: boolean): void;
  /** The relay said it is listening: drain the queue and post from now on. */
  relayReady(): void;
  /** Events waiting to be posted (for tests). */
  pending(): number;
}

/** What the hook keeps a replay under: the request's id, client, method and URL (see {@link ReplayTarget}). */
const replayKey = (requestId: string, { client, method, url }: Omit<ReplayTarget, 'requestId'>): string =>
  `${requestId} ${client} ${method} ${url}`;

export function createPageHook(world: HookWorld): PageHook {
  const faults = createPageFaults(world);
  let queue: unknown[] = [];
  let ready = false;
  let timer = false;
  // Core said hello (a client was created); the relay was told so (once per document).
  let detected = false;
  let announced = false;
  // The latest requests' replays by replayKey, the oldest first (a Map keeps the order of insertion).
  const replays = new Map<string, (signal: AbortSignal) => unknown>();
  // The replays it runs, until one settles or the panel goes.
  const running = new Set<AbortController>();
  // Whether a panel is subscribed to the tab: unknown until the relay says.
  let panel: boolean | undefined;

  const announce = () => {
    if (!ready || !detected || announced) return;
    announced = true;
    world.post(DETECTED);
  };

  const post = (events: unknown[]) => {
    try {
      world.post({ ns: NAMESPACE, v: PROTOCOL_VERSION, kind: 'events', events });
    } catch {
      // DataCloneError: an event holds something structured clone refuses (a function, a DOM node).
      // Post the others one by one rather than lose the whole batch (an index, not the array
      // iterator, which the page can replace).
      if (events.length === 1) return;
      for (let at = 0; at < events.length; at += 1) post([events[at]]);
    }
  };

  const flush = () => {
    timer = false;
    const events = queue;
    queue = [];
    for (let start = 0; start < events.length; start += MAX_BATCH) {
      post(events.slice(start, start + MAX_BATCH));
    }
  };

  // The timer's callback runs outside any caller's try: a throw there would reach the page as an
  // uncaught error from the extension. The batch it was posting is lost; the next push re-arms.
  const flushFromTimer = () => {
    try {
      flush();
    } catch {
      // Nothing a page sees may come from the extension.
    }
  };

  const schedule = () => {
    if (!ready) return;
    if (queue.length >= MAX_BATCH) {
      flush();
    } else if (!timer) {
      world.setTimer(flushFromTimer, FLUSH_MS);
      // Only once it is armed: a timer that failed to arm must not stop every later flush.
      timer = true;
    }
  };

  return {
    push(event: unknown) {
      // Core calls this from inside a request: it must never throw, whatever it is given.
      try {
        if (typeof event !== 'object' || event === null) return;
        const { type, requestId } = event as { type?: unknown; requestId?: unknown };
        if (type === 'request-end' && typeof requestId === 'string') faults.ended(requestId);
        queue.push(event);
        if (queue.length > MAX_QUEUE) queue.shift();
        schedule();
      } catch {
        // Nothing a page sees may come from the extension.
      }
    },
    hello() {
      try {
        detected = true;
        announce();
      } catch {
        // Nothing a page sees may come from the extension.
      }
    },
    relayReady() {
      if (ready) return;
      ready = true;
      try {
        announce();
        if (queue.length > 0) flush();
      } catch {
        // As above.
      }
    },
    fault(query: unknown) {
      try {
        if (faults.active() === 0 || typeof query !== 'object' || query === null) return undefined;
        const { client, method, url, attempt, requestId } = query as Record<string, unknown>;
        if (typeof method !== 'string' || typeof url !== 'string' || typeof requestId !== 'string')
          return undefined;
        if (typeof attempt !== 'number' || !Number.isInteger(attempt) || attempt < 1) return undefined;
        return faults.fault({
          client: String(client),
          method: method.toUpperCase(),
          url,
          attempt,
          requestId,
        });
      } catch {
        // Core guards its question too; the page must not see the extension fail either way.
        return undefined;
      }
    },
    setFaults(message) {
      try {
        faults.set({ rules: message.rules, ...(message.seed === undefined ? {} : { seed: message.seed }) });
      } catch {
        // A set that cannot be read is no set: the page keeps what it had.
      }
    },
    replayable(requestId, replay, request) {
      try {
        if (panel === false || typeof requestId !== 'string' || typeof replay !== 'function') return;
        const key = replayKey(requestId, request as ReplayTarget);
        // Taken again (a caller-chosen id reused for the same request), it is the latest.
        replays.delete(key);
        replays.set(key, replay as (signal: AbortSignal) => unknown);
        if (replays.size > MAX_REPLAYS) replays.delete(replays.keys().next().value as string);
      } catch {
        // Nothing a page sees may come from the extension.
      }
    },
    replay(target) {
      try {
        const run = replays.get(replayKey(target.requestId, target));
        if (!run) return;
        const controller = world.controller();
        running.add(controller);
        const done = () => running.delete(controller);
        const ran = run(controller.signal) as PromiseLike<unknown> | undefined;
        if (typeof ran?.then === 'function') ran.then(done, done);
      } catch {
        // Core's replay never throws; one the page gave the hook itself may.
      }
    },
    setPanel(open) {
      try {
        panel = open;
        if (open) return;
        faults.stop();
        replays.clear();
        for (const controller of running) controller.abort();
        running.clear();
      } catch {
        // As above.
      }
    },
    pending: () => queue.length,
  };
}

/** Whether a `message` event is the relay saying it listens (a page can forge it; see protocol). */
export function isRelayReady(source: unknown, self: unknown, data: unknown): boolean {
  if (source !== self || typeof data !== 'object' || data === null) return false;
  const message = data as { ns?: unknown; v?: unknown; kind?: unknown };
  return message.ns === NAMESPACE && message.v === PROTOCOL_VERSION && message.kind === 'relay-ready';
}

/**
 * Whether a `message` event brings the tab's fault rules from the relay. A page can forge one (the
 * relay posts on the same window); the hook checks the rules it carries all the same.
 */
export function isFaultsMessage(source: unknown, self: unknown, data: unknown): data is FaultsMessage {
  if (source !== self || typeof data !== 'object' || data === null) return false;
  const message = data as { ns?: unknown; v?: unknown; kind?: unknown; rules?: unknown };
  return (
    message.ns === NAMESPACE &&
    message.v === PROTOCOL_VERSION &&
    message.kind === 'faults' &&
    Array.isArray(message.rules)
  );
}

/**
 * Whether a `message` event brings the panel's replay of a request from the relay. A page can forge
 * one (see {@link ReplayMessage}): the worst it can do is have one of its own requests sent again.
 */
export function isReplayMessage(source: unknown, self: unknown, data: unknown): data is ReplayMessage {
  if (source !== self || typeof data !== 'object' || data === null) return false;
  const message = data as Partial<Record<keyof ReplayMessage, unknown>>;
  return (
    message.ns === NAMESPACE &&
    message.v === PROTOCOL_VERSION &&
    message.kind === 'replay' &&
    typeof message.requestId === 'string' &&
    typeof message.client === 'string' &&
    typeof message.method === 'string' &&
    typeof message.url === 'string'
  );
}

/**
 * Whether a `message` event brings the relay's word on the tab's panels. A page can forge one (see
 * {@link PanelStateMessage}): the worst it can do is have its own hook keep or drop its replays.
 */
export function isPanelMessage(source: unknown, self: unknown, data: unknown): data is PanelStateMessage {
  if (source !== self || typeof data !== 'object' || data === null) return false;
  const message = data as { ns?: unknown; v?: unknown; kind?: unknown; open?: unknown };
  return (
    message.ns === NAMESPACE &&
    message.v === PROTOCOL_VERSION &&
    message.kind === 'panel' &&
    typeof message.open === 'boolean'
  );
}

/**
 * The target origin of the page's own messages: its origin, or `*` where the origin is opaque
 * (`file:`, sandboxed frames, `data:`), since no origin string matches an opaque origin.
 */
export function targetOrigin(location: { readonly origin: string; readonly protocol: string }): string {
  return location.origin === 'null' || location.protocol === 'file:' ? '*' : location.origin;
}
