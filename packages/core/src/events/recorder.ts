/**
 * Records the event stream into a {@link Recording}: the JSON the devtools panel exports and
 * imports and `retryline view` opens, so a Node test or the demo can be looked at in the same
 * timeline as a browser page. Pure: writing the file is the caller's (`JSON.stringify` it).
 */

import { subscribe } from './emitter';
import type { RetrylineEvent } from './types';

/** One line of a timeline: an event (with the origin of the page or process it came from), or a navigation. */
export type RecordingEntry =
  | { readonly type: 'event'; readonly event: RetrylineEvent; readonly origin: string }
  | { readonly type: 'navigation'; readonly url: string; readonly t: number };

/** A recorded timeline, as plain JSON. */
export interface Recording {
  readonly format: 'retryline-recording';
  readonly version: 1;
  /** When the recording was made (ISO 8601). */
  readonly recordedAt: string;
  /** Where it came from: a page URL, `node`, `demo` … */
  readonly source: string;
  readonly entries: readonly RecordingEntry[];
}

/** A recorder started by {@link recordEvents}. */
export interface EventRecorder {
  /** What has been recorded so far. */
  recording(): Recording;
  /** Stops recording and returns the recording. */
  stop(): Recording;
}

/** Options of {@link recordEvents}. */
export interface RecordOptions {
  /** Names where the events come from. @default 'node' */
  readonly source?: string;
  /** The origin entries are tagged with. @default the source */
  readonly origin?: string;
  /** The most events kept; older ones are dropped first. @default 100 000 */
  readonly limit?: number;
}

/**
 * Records every event of this realm (every client, `retry()` included) until `stop()`.
 *
 * @example
 * ```ts
 * const recorder = recordEvents({ source: 'checkout test' });
 * await api('https://api.example/orders');
 * writeFileSync('recording.json', JSON.stringify(recorder.stop()));
 * ```
 */
export function recordEvents(options: RecordOptions = {}): EventRecorder {
  const source = options.source ?? 'node';
  const origin = options.origin ?? source;
  const limit = options.limit ?? 100_000;
  const recordedAt = new Date(0).toISOString();
  const entries: RecordingEntry[] = [];
  let first: number | undefined;
  const unsubscribe = subscribe((event) => {
    first ??= event.t;
    entries.push({ type: 'event', event, origin });
    if (entries.length > limit) entries.shift();
  });
  const recording = (): Recording => ({
    format: 'retryline-recording',
    version: 1,
    // The time of the first event: the recorder reads no clock of its own (core stays pure).
    recordedAt: first === undefined ? recordedAt : new Date(first).toISOString(),
    source,
    entries: [...entries],
  });
  return {
    recording,
    stop() {
      unsubscribe();
      return recording();
    },
  };
}
