/**
 * What a request's `request-start` makes of its row, apart from the rest of the timeline fold:
 * {@link requestFields} is how the fold turns what a start says into a row's fields, and
 * {@link startedRow} is the whole row of a request that has only started. The page hook tests a
 * fault rule's pattern on that row (shared/faults.ts), and this module is all of the timeline it
 * takes into every page: it imports nothing of timeline.ts but its types.
 */

import type { RequestStartEvent } from '@retryline/core/instrument';
import { frameKey } from '../shared/frame-key';
import type { RequestRow } from './timeline';

/** What a request's start says of it; each part is absent while its `request-start` is unseen. */
export interface RequestStart {
  readonly client?: string;
  readonly operation?: string;
  readonly method?: string;
  readonly url?: string;
}

/** The fields of a row that its request's start decides. */
export type RequestFields = Pick<RequestRow, 'client' | 'operation' | 'method' | 'url' | 'origin' | 'path'>;

/**
 * A row's {@link RequestFields} from what its start said: `'unknown'` client, no method and no URL
 * while it is unseen; a request without a URL path shows its operation as its path.
 */
export function requestFields({ client, operation, method, url = '' }: RequestStart): RequestFields {
  const { origin, path } = splitUrl(url);
  return {
    client: client ?? 'unknown',
    ...(operation === undefined ? {} : { operation }),
    method: method ?? '',
    url,
    origin,
    path: path === '' ? (operation ?? '') : path,
  };
}

/**
 * The row of a request whose `request-start` is all that is known of it: what the panel shows the
 * moment it starts, and what `foldTimeline` makes of that one event (from the frame `source`, as
 * the timeline's row `index`). Pending, nothing sent, nothing waited.
 */
export function startedRow(event: RequestStartEvent, source: string, index: number): RequestRow {
  const { requestId, t } = event;
  return {
    key: frameKey(source, requestId),
    requestId,
    index,
    source,
    ...requestFields(event),
    complete: true,
    start: t,
    last: t,
    outcome: 'pending',
    attempts: [],
    injected: 0,
    hedges: [],
    waits: [],
    guardWaits: [],
  };
}

/** `https://api.example/a?b=*` → origin `https://api.example`, path `/a?b=*`. */
export function splitUrl(url: string): { origin: string; path: string } {
  if (url === '') return { origin: '', path: '' };
  // URL.canParse is Node 19.9+/Chrome 120+; a try keeps older viewers working.
  try {
    const parsed = new URL(url);
    if (parsed.origin === 'null') return { origin: '', path: url };
    return { origin: parsed.origin, path: `${parsed.pathname}${parsed.search}` };
  } catch {
    return { origin: '', path: url };
  }
}
