/**
 * What the panel knows of the source it shows, kept from the source's updates: the timeline and
 * its raw entries, the tab's settings and connection, what the worker knows of the page, how many
 * requests its ring dropped, and the clock that running requests are drawn up to.
 */

import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { appendTimeline, emptyTimeline, foldTimeline, type Timeline } from '../model/timeline';
import type { PageState, TabSettings, TimelineEntry } from '../shared/protocol';
import { DEFAULT_SETTINGS, type PanelSource } from './sources';

export interface SourceState {
  readonly timeline: Timeline;
  /** The raw entries, as Export JSON saves them. */
  readonly entries: () => readonly TimelineEntry[];
  readonly settings: TabSettings;
  readonly connected: boolean;
  /** A live tab's: what the worker knows of its page (undefined until it has said). */
  readonly page: PageState | undefined;
  /** A live tab's: how many requests its ring dropped. */
  readonly evicted: number;
  /** When the last entries arrived, or the last tick while requests run. */
  readonly clock: number;
  /** Whether some request is still running. */
  readonly running: boolean;
}

export function useSourceState(active: PanelSource, now: () => number): SourceState {
  const [timeline, setTimeline] = useState<Timeline>(emptyTimeline);
  const [settings, setSettings] = useState<TabSettings>(DEFAULT_SETTINGS);
  const [connected, setConnected] = useState(true);
  const [page, setPage] = useState<PageState | undefined>(undefined);
  const [evicted, setEvicted] = useState(0);
  const [clock, setClock] = useState(now);
  // Append-only between resets, so kept out of render state.
  const entries = useRef<TimelineEntry[]>([]);

  useEffect(() => {
    // A new source replaces the old one's state; its first updates restore everything.
    return active.subscribe((update) => {
      switch (update.kind) {
        case 'reset': {
          entries.current = update.entries.slice();
          setTimeline(foldTimeline(update.entries));
          return;
        }
        case 'append':
          for (const entry of update.entries) entries.current.push(entry);
          setTimeline((current) => appendTimeline(current, update.entries));
          setClock(now());
          return;
        case 'settings':
          setSettings(update.settings);
          return;
        case 'status':
          setConnected(update.connected);
          return;
        case 'page':
          setPage(update.page);
          return;
        case 'evicted':
          setEvicted(update.evicted);
          return;
      }
    });
  }, [active]);

  // Running requests grow with the clock; tick only while there are some.
  const running = useMemo(() => timeline.rows.some((row) => row.outcome === 'pending'), [timeline]);
  useEffect(() => {
    if (!running || !active.live) return;
    const timer = setInterval(() => setClock(now()), 500);
    return () => clearInterval(timer);
  }, [running, active]);

  return {
    timeline,
    entries: () => entries.current,
    settings,
    connected,
    page,
    evicted,
    clock,
    running,
  };
}
