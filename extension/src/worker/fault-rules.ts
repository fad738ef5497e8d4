/**
 * The worker's fault rules, per tab, and the frames they go to. A panel of the tab sets them; they
 * go to the page's own origin only: the tab's top frame, and each frame whose document is of the
 * top document's origin (the app's own frames). A frame of another origin (an ad, a widget) is
 * never sent them, nor given them for its new document: any script in it could read them once its
 * relay handed them to its page, and they would fault its own Retryline requests. Each new
 * document of the top frame or of a frame of its origin is given them once, as the answer to its
 * relay's notice, however often the frame loads one. When the tab's last panel goes, or the panel
 * sends an empty set, every frame of the tab is told to drop them: a removal carries no rule, and
 * it reaches every frame that got them, even one the worker no longer knows of (see
 * {@link FaultRulesWorld.sendToTab}).
 *
 * The worker learns the frames from their relays' new-document notices alone (it has no
 * `webNavigation`): the top frame's sets the origin that decides, and forgets the frames of the
 * page before it, whose documents went with it. Kept in memory only: a worker that stops loses its
 * panels' ports too, and a panel sends its rules again once it has subscribed anew; until the
 * top frame shows a new document, such a worker sends them to the top frame alone (the frames
 * keep the rules they had, and a removal still reaches them).
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

export interface FaultRules {
  /**
   * A panel of the tab sent rules (checked): kept, and sent to the tab's top frame and its frames of
   * the same origin. An empty set removes them, from every frame.
   */
  set(tabId: number, set: FaultRuleSet): void;
  /** The tab's rules, if it has any. */
  of(tabId: number): FaultRuleSet | undefined;
  /** The tab's last panel went: its pages drop the rules. */
  panelsGone(tabId: number): void;
  /**
   * What a new document of the tab is told: its rules, for the top frame and a frame of the top
   * document's origin; nothing for any other frame, or when the tab has none.
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

/** A rule set as the message that carries it to a tab's pages. */
export function faultsMessage(set: FaultRuleSet): FaultsMessage {
  const message: FaultsMessage = { ns: NAMESPACE, v: PROTOCOL_VERSION, kind: 'faults', rules: set.rules };
  return set.seed === undefined ? message : { ...message, seed: set.seed };
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

export function createFaultRules(world: FaultRulesWorld): FaultRules {
  const byTab = new Map<number, FaultRuleSet>();
  const pages = new Map<number, TabPage>();

  const pageOf = (tabId: number): TabPage => {
    let page = pages.get(tabId);
    if (!page) {
      page = { top: undefined, frames: new Set() };
      pages.set(tabId, page);
    }
    return page;
  };

  /** Tells every frame of the tab to drop its rules, if the tab has any. */
  const remove = (tabId: number) => {
    if (byTab.delete(tabId)) world.sendToTab(tabId, faultsMessage(NO_RULES));
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
    set(tabId, set) {
      if (set.rules.length === 0) {
        remove(tabId);
        return;
      }
      byTab.set(tabId, set);
      const message = faultsMessage(set);
      // The top frame even before its relay spoke: a page with no relay has no receiver, which is fine.
      world.sendToFrame(tabId, 0, message);
      for (const frameId of pages.get(tabId)?.frames ?? []) world.sendToFrame(tabId, frameId, message);
    },
    of: (tabId) => byTab.get(tabId),
    panelsGone: remove,
    forDocument(tabId, { frameId, origin }) {
      const page = pageOf(tabId);
      if (frameId === 0) {
        // A new page: the frames of the one before went with it, and its origin decides now.
        page.top = origin;
        page.frames.clear();
      } else if (page.top !== undefined && isSameOrigin(origin, page.top)) {
        addFrame(tabId, page, frameId);
      } else {
        // Not the app's (or no longer: a frame that went to another origin).
        page.frames.delete(frameId);
        return undefined;
      }
      const set = byTab.get(tabId);
      return set && faultsMessage(set);
    },
    tabClosed(tabId) {
      byTab.delete(tabId);
      pages.delete(tabId);
    },
  };
}
