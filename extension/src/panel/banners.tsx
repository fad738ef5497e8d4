/**
 * The banners between the toolbar and the list: the imported file in view (with the way back to
 * the live page), a live tab's connection, recording and dropped requests, active fault rules,
 * and what the panel has to say about the last import.
 */

import type { FaultRuleSet } from '../shared/faults';
import { LiveBanners } from './empty-state';
import { FaultsBanner } from './faults-tab';

/** Something the panel says until it is dismissed or the next import: an import's error, or what it skipped. */
export interface Notice {
  readonly kind: 'error' | 'info';
  readonly text: string;
}

export interface BannersProps {
  /** The imported file's name, while one is viewed. */
  readonly imported: string | undefined;
  /** Shows the live page again; absent where there is none (the viewer). */
  readonly onBack: (() => void) | undefined;
  /** A live tab's state, shown while it is viewed. */
  readonly live:
    | { readonly connected: boolean; readonly record: boolean; readonly evicted: number }
    | undefined;
  /** The tab's fault rules, where it has a page to fault. */
  readonly faults: FaultRuleSet | undefined;
  /** Shows the Faults tab; absent while it cannot be shown or is shown. */
  readonly onShowFaults: (() => void) | undefined;
  readonly notice: Notice | undefined;
  readonly onDismiss: () => void;
}

export function Banners(props: BannersProps) {
  const { imported, onBack, live, faults, onShowFaults, notice } = props;
  return (
    <>
      {imported !== undefined && (
        <div class="rl-banner" data-testid="imported">
          Viewing {imported}
          {onBack ? (
            <button type="button" class="rl-link" onClick={onBack}>
              Back to the live page
            </button>
          ) : null}
        </div>
      )}
      {live && <LiveBanners {...live} />}
      {faults && <FaultsBanner set={faults} {...(onShowFaults ? { onShow: onShowFaults } : {})} />}
      {notice && (
        <div class={`rl-banner rl-banner--${notice.kind}`} role="alert" data-testid="notice">
          {notice.text}
          <button type="button" class="rl-link" onClick={props.onDismiss}>
            Dismiss
          </button>
        </div>
      )}
    </>
  );
}
