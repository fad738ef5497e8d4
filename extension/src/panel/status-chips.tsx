/**
 * Counts above the list, each a toggle for the filter term that shows those requests: retried,
 * failed, refused (by a guard), and the time all of them spent waiting.
 */

import { useMemo } from 'preact/hooks';
import { hasTerm, isFailed, isRefused, isRetried, waitedMs } from '../model/filter-terms';
import type { RequestRow } from '../model/timeline';
import { formatMs } from './format';

export interface StatusChipsProps {
  /** Every request (the counts do not change with the filter). */
  readonly rows: readonly RequestRow[];
  /** The filter's text, which says which chips are on. */
  readonly text: string;
  readonly onToggle: (term: string) => void;
}

interface Counts {
  readonly retried: number;
  readonly failed: number;
  readonly refused: number;
  readonly waited: number;
}

export function countRows(rows: readonly RequestRow[]): Counts {
  let retried = 0;
  let failed = 0;
  let refused = 0;
  let waited = 0;
  for (const row of rows) {
    if (isRetried(row)) retried++;
    if (isFailed(row)) failed++;
    if (isRefused(row)) refused++;
    waited += waitedMs(row);
  }
  return { retried, failed, refused, waited };
}

export function StatusChips({ rows, text, onToggle }: StatusChipsProps) {
  const counts = useMemo(() => countRows(rows), [rows]);
  const chips = [
    { term: 'is:retried', label: `${counts.retried} retried`, title: 'Requests sent more than once' },
    { term: 'is:failed', label: `${counts.failed} failed`, title: 'Requests that ended without success' },
    { term: 'is:refused', label: `${counts.refused} refused`, title: 'Requests a guard refused' },
    {
      term: 'is:waited',
      label: `${formatMs(counts.waited)} waited`,
      title: 'Time spent in retry waits and guard holds, all requests together',
    },
  ];
  return (
    <div class="rl-chips" role="toolbar" aria-label="Quick filters" data-testid="chips">
      {chips.map((chip) => (
        <button
          key={chip.term}
          type="button"
          class="rl-chip"
          aria-pressed={hasTerm(text, chip.term)}
          data-testid={`chip-${chip.term.slice(3)}`}
          title={`${chip.title}: filter ${chip.term}`}
          onClick={() => onToggle(chip.term)}
        >
          {chip.label}
        </button>
      ))}
    </div>
  );
}
