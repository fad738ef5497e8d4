/**
 * The devtools hook core pushes events to (DESIGN §9), as a value with its world injected: the
 * MAIN-world content script (`hook.ts`) installs it on the page, tests drive it with fakes.
 *
 * Cost model: `push` appends to an array and, at most once per {@link FLUSH_MS}, arms one timer;
 * with no events nothing runs at all. Until a relay says it is listening, events wait in a queue
 * of at most {@link MAX_QUEUE} (oldest dropped), so the events of the first requests of a page are
 * not lost to the race between the two document_start scripts.
 */

import type { DevtoolsHook } from '@retryline/core';
import {
  type HookHelloMessage,
  MAX_BATCH,
  MAX_QUEUE,
  NAMESPACE,
  type PageMessage,
  PROTOCOL_VERSION,
} from '../shared/protocol';

/** How long events are gathered before they are posted: one frame, so a burst makes one message. */
export const FLUSH_MS = 16;

/** The hook's question to the relay (see {@link HookHelloMessage}). */
export const HOOK_HELLO: HookHelloMessage = Object.freeze({
  ns: NAMESPACE,
  v: PROTOCOL_VERSION,
  kind: 'hook-hello',
});

/** What the hook needs from its window, captured before any page script can replace it. */
export interface HookWorld {
  /** `window.postMessage` bound to the page's window, with the target origin already chosen. */
  readonly post: (message: PageMessage | HookHelloMessage) => void;
  readonly setTimer: (callback: () => void, ms: number) => unknown;
}

/** The installed hook: what core calls, and what the hook's `message` listener calls. */
export interface PageHook {
  /** What core calls ({@link DevtoolsHook}): takes anything, since a page may call it too. */
  push(event: unknown): void;
  /** The relay said it is listening: drain the queue and post from now on. */
  relayReady(): void;
  /** Events waiting to be posted (for tests). */
  pending(): number;
}

export function createPageHook(world: HookWorld): PageHook {
  let queue: unknown[] = [];
  let ready = false;
  let timer = false;

  const post = (events: unknown[]) => {
    try {
      world.post({ ns: NAMESPACE, v: PROTOCOL_VERSION, kind: 'events', events });
    } catch {
      // DataCloneError: an event holds something structured clone refuses (a function, a DOM node).
      // Post the others one by one rather than lose the whole batch.
      if (events.length === 1) return;
      for (const event of events) post([event]);
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

  const schedule = () => {
    if (!ready) return;
    if (queue.length >= MAX_BATCH) {
      flush();
    } else if (!timer) {
      timer = true;
      world.setTimer(flush, FLUSH_MS);
    }
  };

  return {
    push(event: unknown) {
      // Core calls this from inside a request: it must never throw, whatever it is given.
      try {
        if (typeof event !== 'object' || event === null) return;
        queue.push(event);
        if (queue.length > MAX_QUEUE) queue.shift();
        schedule();
      } catch {
        // Nothing a page sees may come from the extension.
      }
    },
    relayReady() {
      if (ready) return;
      ready = true;
      try {
        if (queue.length > 0) flush();
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
 * The target origin of the page's own messages: its origin, or `*` where the origin is opaque
 * (`file:`, sandboxed frames, `data:`), since no origin string matches an opaque origin.
 */
export function targetOrigin(location: { readonly origin: string; readonly protocol: string }): string {
  return location.origin === 'null' || location.protocol === 'file:' ? '*' : location.origin;
}
