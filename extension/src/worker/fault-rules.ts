/**
 * The worker's fault rules, per tab: set by a panel of the tab, sent to every frame of the tab,
 * sent again to each new document of it, and dropped (the tab's pages told to drop theirs) when the
 * tab's last panel goes. Kept in memory only: a worker that stops loses its panels' ports too, and
 * a panel sends its rules again once it has subscribed anew.
 */

import { type FaultRuleSet, NO_RULES } from '../shared/faults';
import { type FaultsMessage, NAMESPACE, PROTOCOL_VERSION } from '../shared/protocol';

/** What the rules need from the browser. */
export interface FaultRulesWorld {
  /** Sends `message` to every frame of tab `tabId` (`tabs.sendMessage`); a failure is ignored. */
  sendToTab(tabId: number, message: FaultsMessage): void;
}

export interface FaultRules {
  /** A panel of the tab sent rules (checked): kept, and sent to the tab. An empty set removes them. */
  set(tabId: number, set: FaultRuleSet): void;
  /** The tab's rules, if it has any. */
  of(tabId: number): FaultRuleSet | undefined;
  /** The tab's last panel went: its pages drop the rules. */
  panelsGone(tabId: number): void;
  /** What a new document of the tab is told: its rules, or nothing when it has none. */
  forDocument(tabId: number): FaultsMessage | undefined;
  /** The tab closed: nothing is left to tell. */
  tabClosed(tabId: number): void;
}

/** A rule set as the message that carries it to a tab's pages. */
export function faultsMessage(set: FaultRuleSet): FaultsMessage {
  const message: FaultsMessage = { ns: NAMESPACE, v: PROTOCOL_VERSION, kind: 'faults', rules: set.rules };
  return set.seed === undefined ? message : { ...message, seed: set.seed };
}

export function createFaultRules(world: FaultRulesWorld): FaultRules {
  const byTab = new Map<number, FaultRuleSet>();
  return {
    set(tabId, set) {
      const had = byTab.has(tabId);
      if (set.rules.length === 0) byTab.delete(tabId);
      else byTab.set(tabId, set);
      // Nothing to take back from a tab that had none.
      if (set.rules.length > 0 || had) world.sendToTab(tabId, faultsMessage(set));
    },
    of: (tabId) => byTab.get(tabId),
    panelsGone(tabId) {
      if (byTab.delete(tabId)) world.sendToTab(tabId, faultsMessage(NO_RULES));
    },
    forDocument(tabId) {
      const set = byTab.get(tabId);
      return set && faultsMessage(set);
    },
    tabClosed(tabId) {
      byTab.delete(tabId);
    },
  };
}
