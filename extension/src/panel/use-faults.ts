/**
 * The tab's fault rules, as the panel holds them: what the worker last said the tab has (so every
 * panel of the tab shows the same rules), and a way to change them that checks the new set first.
 */

import { useEffect, useState } from 'preact/hooks';
import { type FaultRule, type FaultRuleSet, NO_RULES, validateFaultRules } from '../shared/faults';
import type { FaultsBinding, PanelSource } from './sources';

export interface FaultsState {
  /** The tab's rules, as the worker keeps them. */
  readonly set: FaultRuleSet;
  /** Where they apply: the top origin they were set for, and whether the page is on it now. */
  readonly binding: FaultsBinding;
  /**
   * Replaces the tab's rules with `change(rules)`, checked whole with `validateFaultRules` as the
   * worker checks them: the problem (`rules[1].url: …`), or `undefined` once asked for. `rules`
   * are the source's `faults.wanted()`: they include changes asked for whose answer has
   * not come back yet, so quick changes add up.
   */
  readonly change: (change: (rules: readonly FaultRule[]) => readonly FaultRule[]) => string | undefined;
}

interface Shown {
  readonly set: FaultRuleSet;
  readonly binding: FaultsBinding;
}

const NONE: Shown = { set: NO_RULES, binding: { applied: false } };

/** The fault rules of `source`'s tab, or `undefined` for a source without a page (a recording). */
export function useFaults(source: PanelSource): FaultsState | undefined {
  const [{ set, binding }, setState] = useState<Shown>(NONE);
  const faults = source.faults;

  useEffect(() => {
    setState(NONE);
    if (!faults) return;
    return source.subscribe((update) => {
      if (update.kind !== 'faults') return;
      const { set: next, origin, applied } = update;
      setState({ set: next, binding: origin === undefined ? { applied } : { origin, applied } });
    });
  }, [source]);

  if (!faults) return undefined;
  return {
    set,
    binding,
    change(change) {
      const { rules, seed } = faults.wanted();
      const checked = validateFaultRules({ rules: change(rules), ...(seed === undefined ? {} : { seed }) });
      if (!checked.ok) return checked.error;
      faults.set(checked.value);
      return undefined;
    },
  };
}
