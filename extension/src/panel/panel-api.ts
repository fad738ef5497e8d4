/**
 * The panel's API (`window.__retrylinePanel`), which the end-to-end tests and the benchmark drive
 * the panel through: it answers from the panel's latest render.
 */

import { useEffect, useRef } from 'preact/hooks';
import type { FaultRuleSet } from '../shared/faults';
import { mswSnippet } from '../shared/msw-snippet';
import type { FaultsState } from './use-faults';

/** What the entries expose as `window.__retrylinePanel`, for the end-to-end test and the benchmark. */
export interface PanelApi {
  /** How many requests the list shows (after filters). */
  rows(): number;
  exportJson(): string;
  exportHar(): string;
  /** Imports a Recording or HAR, as the Import button does (errors show in the panel). */
  importText(text: string): void;
  /** The tab's fault rules as the Faults tab shows them, and the msw test its Export saves for them. */
  faults(): { readonly set: FaultRuleSet; readonly mswTest: string } | undefined;
}

/** What the API answers from, as the panel last rendered it. */
export interface PanelApiState {
  /** How many requests the list shows. */
  readonly rows: number;
  readonly exportJson: () => string;
  readonly exportHar: () => string;
  readonly importText: (text: string) => void;
  readonly faults: FaultsState | undefined;
}

/** Hands `onApi` the panel's API once, when the panel mounts. */
export function usePanelApi(onApi: ((api: PanelApi) => void) | undefined, state: PanelApiState): void {
  // The API reads the latest render's values through a ref, so it is created only once.
  const latest = useRef(state);
  latest.current = state;
  useEffect(() => {
    onApi?.({
      rows: () => latest.current.rows,
      exportJson: () => latest.current.exportJson(),
      exportHar: () => latest.current.exportHar(),
      importText: (text) => latest.current.importText(text),
      faults: () => {
        const { faults } = latest.current;
        return faults && { set: faults.set, mswTest: mswSnippet(faults.set) };
      },
    });
  }, []);
}
