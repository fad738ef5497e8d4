/**
 * The worker's fault rules, per tab, and the frames they go to. A panel of the tab sets them; they
 * are bound to the origin of the tab's top document at the time they were set, and go to that
 * origin only: the tab's top frame, and each frame whose document is of that origin (the app's own
 * frames), while the top document is of it. A frame of another origin (an ad, a widget) is never
 * sent them, nor given them for its new document: any script in it could read them once its relay
 * handed them to its page, and they would fault its own Retryline requests. Nor is a top document
 * of another origin (a site the developer followed a link to, or one a framed ad navigated the top
 * frame to): after such a navigation the rules are held back, and apply again when the top frame
 * comes back to their origin (the panel says so: see {@link TabFaults}). Every rule set the worker
 * sends is stamped with that origin, and a relay passes it on only to a document of it (see
 * `faultsFromWorker`), so a frame list that lags a navigation hands no other origin the rules.
 *
 * Each new document of the top frame or of a frame of its origin is given them once, as the
 * answer to its relay's notice, however often the frame loads one. When the tab's last panel goes,
 * or the panel sends an empty set, every frame of the tab is told to drop them: a removal carries
 * no rule, and it reaches every frame that got them, even one the worker no longer knows of (see
 * {@link FaultRulesWorld.sendToTab}). It is sent whether or not this worker knows of rules: one
 * started since they were sent (an MV3 worker is stopped when idle) knows nothing of them, and a
 * relay passes a removal on only while its page holds rules.
 *
 * The worker learns the frames from their relays' new-document notices alone (it has no
 * `webNavigation`): the top frame's sets the top origin, and forgets the frames of the page
 * before it, whose documents went with it. Kept in memory only: a worker that stops loses its
 * panels' ports too, and a panel sends its rules again once it has subscribed anew, with the
 * origin the worker last said they were bound to, which a worker that has not heard of the top
 * document since it started binds them to (sending them to the top frame alone, whose relay checks
 * the stamp); a set whose origin neither knows is held until the top frame's relay names its
 * document.
 */

import { type FaultRuleSet, NO_RULES } from '../shared/faults';
import { type FaultsMessage, NAMESPACE, PROTOCOL_VERSION } from '../shared/protocol';

/** What the rules need from the browser. */
export interface FaultRulesWorld {
  /** Sends `message` to frame `frameId` of tab `tabId` alone (`tabs.sendMessage` with `frameId`); a failure is ignored. */
  sendToFrame(tabId: number, frameId: number, message: FaultsMessage): void;
  /**
   * Sends `message` to every frame of tab `tabId` (`tabs.sendMessage`); a failure is ignored. Only
   * ever a removal: a relay passes one on only when its page has rules (see `passesFaults`).
   */
  sendToTab(tabId: number, message: FaultsMessage): void;
}

/** A frame's new document, as the browser names its sender (see `frameDocumentOf`). */
export interface FrameDocument {
  /** 0: the tab's top frame. */
  readonly frameId: number;
  /** The document's origin, as the browser gives it (see `senderOrigin`). */
  readonly origin: string;
}

/**
 * A tab's rules as the worker keeps them, and tells its panels: the set, the top origin it is bound
 * to, and whether its pages are given it now.
 */
export interface TabFaults extends FaultRuleSet {
  /**
   * The origin of the tab's top document when the rules were set (as `senderOrigin` names it).
   * Absent while the worker does not know it (see {@link FaultRules.set}).
   */
  readonly origin?: string;
  /**
   * Whether the tab's pages are given the rules now: the top document is of {@link origin} (or not
   * yet known to this worker, whose messages are stamped with it). False when it went to another
   * origin: the rules are held back until it comes back.
   */
  readonly applied: boolean;
}

export interface FaultRules {
  /**
   * A panel of the tab sent rules (checked): kept, bound to the top document's origin (or, when the
   * worker has not heard of the top document since it started, to `origin`, the one the panel was
   * told they were bound to), and sent to the tab's top frame and its frames of that origin. An
   * empty set removes them, from every frame.
   */
  set(tabId: number, set: FaultRuleSet, origin?: string): void;
  /** The tab's rules, if it has any. */
  of(tabId: number): TabFaults | undefined;
  /**
   * A panel subscribed to the tab: a worker that has no rules for it (one started since they were
   * sent) has every frame of the tab drop any it still holds, before the panel sends its own again.
   */
  panelSubscribed(tabId: number): void;
  /** The tab's last panel went: its pages drop the rules. */
  panelsGone(tabId: number): void;
  /**
   * What a new document of the tab is told: its rules, for the top frame and a frame of the top
   * document's origin, while that is the origin they are bound to; nothing for any other frame, or
   * when the tab has none.
   */
  forDocument(tabId: number, document: FrameDocument): FaultsMessage | undefined;
  /** The tab closed: nothing is left to tell, and its frames are forgotten. */
  tabClosed(tabId: number): void;
}

/**
 * The most frames of the top document's origin the worker keeps per tab. No notice says a frame is
 * gone, so a page that makes and removes frames over and over would grow the list without end:
 * past this, the frame heard of least recently is dropped, and told to drop the rules it has.
 */
export const MAX_FRAMES = 100;

/**
 * A rule set as the message that carries it to a tab's pages, stamped with the top origin it is
 * bound to (`origin`, as `senderOrigin` names it) as each relay's `location.origin` gives it: every
 * opaque origin is `"null"` there. A removal carries no origin: it is for every frame.
 */
export function faultsMessage(set: FaultRuleSet, origin?: string): FaultsMessage {
  const message: FaultsMessage = { ns: NAMESPACE, v: PROTOCOL_VERSION, kind: 'faults', rules: set.rules };
  const seeded = set.seed === undefined ? message : { ...message, seed: set.seed };
  if (origin === undefined || set.rules.length === 0) return seeded;
  return { ...seeded, origin: origin.startsWith('null') ? 'null' : origin };
}

/**
 * Whether a frame of `origin` is of the top document's origin `top`. An opaque origin is like no
 * other (senderOrigin names it with its frame), nor is a file's (browsers give each file an
 * origin of its own, which Chrome reports as `file://`).
 */
function isSameOrigin(origin: string, top: string): boolean {
  return origin === top && !top.startsWith('null') && top !== 'file://';
}

/** What the worker knows of a tab's current page. */
interface TabPage {
  /** The top document's origin; unknown until the top frame's relay announces a document. */
  top: string | undefined;
  /** The frames whose document is of `top`'s origin, but the top frame, heard of least recently first. */
  readonly frames: Set<number>;
}

/** A tab's rules and the top origin they are bound to (unknown: held until the top is known). */
interface Bound {
  readonly set: FaultRuleSet;
  origin: string | undefined;
}

export function createFaultRules(world: FaultRulesWorld): FaultRules {
  const byTab = new Map<number, Bound>();
  const pages = new Map<number, TabPage>();

  const pageOf = (tabId: number): TabPage => {
    let page = pages.get(tabId);
    if (!page) {
      page = { top: undefined, frames: new Set() };
      pages.set(tabId, page);
    }
    return page;
  };

  /** Whether the tab's pages are given its rules now (see {@link TabFaults.applied}). */
  const applies = (tabId: number, bound: Bound): boolean => {
    const top = pages.get(tabId)?.top;
    return bound.origin !== undefined && (top === undefined || top === bound.origin);
  };

  /** The tab's rules as its pages are to be given them now, if they are. */
  const messageFor = (tabId: number): FaultsMessage | undefined => {
    const bound = byTab.get(tabId);
    return bound && applies(tabId, bound) ? faultsMessage(bound.set, bound.origin) : undefined;
  };

  /**
   * Tells every frame of the tab to drop its rules, whether or not this worker knows of any: one
   * started since they were sent does not (a relay passes it on only while its page holds rules).
   */
  const remove = (tabId: number) => {
    byTab.delete(tabId);
    world.sendToTab(tabId, faultsMessage(NO_RULES));
  };

  /** Adds `frameId` as one of the page's origin, last heard of, within {@link MAX_FRAMES}. */
  const addFrame = (tabId: number, page: TabPage, frameId: number) => {
    page.frames.delete(frameId);
    page.frames.add(frameId);
    for (const oldest of page.frames) {
      if (page.frames.size <= MAX_FRAMES) break;
      page.frames.delete(oldest);
      // No frame keeps rules the worker would not change or take back.
      if (byTab.has(tabId)) world.sendToFrame(tabId, oldest, faultsMessage(NO_RULES));
    }
  };

  return {
    set(tabId, set, origin) {
      if (set.rules.length === 0) {
        remove(tabId);
        return;
      }
      const page = pages.get(tabId);
      // The top document's origin now, as the browser named it; the panel's word only when the
      // worker has heard of no top document since it started (the relay checks the stamp all the same).
      byTab.set(tabId, { set, origin: page?.top ?? origin });
      const message = messageFor(tabId);
      if (!message) return;
      // The top frame even before its relay spoke: a page with no relay has no receiver, which is fine.
      world.sendToFrame(tabId, 0, message);
      for (const frameId of page?.frames ?? []) world.sendToFrame(tabId, frameId, message);
    },
    of(tabId) {
      const bound = byTab.get(tabId);
      if (!bound) return undefined;
      const { set, origin } = bound;
      const applied = applies(tabId, bound);
      return origin === undefined ? { ...set, applied } : { ...set, origin, applied };
    },
    panelSubscribed(tabId) {
      if (!byTab.has(tabId)) remove(tabId);
    },
    panelsGone: remove,
    forDocument(tabId, { frameId, origin }) {
      const page = pageOf(tabId);
      if (frameId === 0) {
        // A new page: the frames of the one before went with it. Rules set before this worker knew
        // of any top document are bound to the first it hears of.
        page.top = origin;
        page.frames.clear();
        const bound = byTab.get(tabId);
        if (bound && bound.origin === undefined) bound.origin = origin;
      } else if (page.top !== undefined && isSameOrigin(origin, page.top)) {
        addFrame(tabId, page, frameId);
      } else {
        // Not the app's (or no longer: a frame that went to another origin).
        page.frames.delete(frameId);
        return undefined;
      }
      return messageFor(tabId);
    },
    tabClosed(tabId) {
      byTab.delete(tabId);
      pages.delete(tabId);
    },
  };
}
