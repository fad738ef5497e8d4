/**
 * What the panel says around and instead of its rows: the banners of a live tab (connection,
 * recording, requests the worker's ring dropped) and the empty state. A live tab's empty state
 * tells apart what the worker knows of its page ({@link PageState}): no relay in it (reload),
 * no Retryline in it, or Retryline and no request yet, since each asks the developer for
 * something else.
 */

import { type PageState, RING_REQUESTS } from '../shared/protocol';

/** What a live tab's panel says of its connection, its recording and the worker's ring. */
export function LiveBanners(props: {
  readonly connected: boolean;
  readonly record: boolean;
  /** Requests the worker's ring dropped, oldest first, since the tab's log was last emptied. */
  readonly evicted: number;
}) {
  const { evicted } = props;
  return (
    <>
      {!props.connected && (
        <div class="rl-banner rl-banner--warn" role="status">
          Reconnecting to the extension…
        </div>
      )}
      {!props.record && (
        <div class="rl-banner" role="status">
          Recording is paused: new requests are not captured.
        </div>
      )}
      {evicted > 0 && (
        <div class="rl-banner" role="status" data-testid="dropped">
          {evicted.toLocaleString('en')} older {evicted === 1 ? 'request was' : 'requests were'} dropped: the
          extension keeps the latest {RING_REQUESTS.toLocaleString('en')} requests of a tab.
        </div>
      )}
    </>
  );
}

/** Which empty state the panel shows: `unknown` until the worker has said what it knows of the page. */
export type EmptyState = 'no-page' | 'unknown' | 'not-hooked' | 'not-detected' | 'no-requests';

export function emptyState(live: boolean, page: PageState | undefined): EmptyState {
  if (!live) return 'no-page';
  if (page === undefined) return 'unknown';
  if (page.detected) return 'no-requests';
  return page.hooked ? 'not-detected' : 'not-hooked';
}

const WORKERS = 'Requests made from Web Workers are not captured.';

export function Empty(props: {
  readonly live: boolean;
  readonly page: PageState | undefined;
  readonly onImport: () => void;
}) {
  const state = emptyState(props.live, props.page);
  return (
    <div class="rl-empty" data-testid="empty" data-state={state}>
      {state === 'no-page' ? (
        <>
          <p>
            No page attached. Open (or drop here) a Retryline recording (.json) or a HAR exported by this
            panel.
          </p>
          <button type="button" class="rl-button" data-testid="empty-import" onClick={props.onImport}>
            Import a file
          </button>
        </>
      ) : state === 'not-hooked' ? (
        <>
          <p data-testid="no-events">The extension is not running in this page.</p>
          <p class="rl-empty__hint">
            Reload the page to start recording. A page opened before the extension was installed or reloaded
            is not recorded until it loads again, and the browser’s own pages are never recorded.
          </p>
        </>
      ) : state === 'not-detected' ? (
        <>
          <p data-testid="no-events">Retryline not detected on this page.</p>
          <p class="rl-empty__hint">
            Neither the page nor its frames has created a Retryline client since it loaded. Requests appear
            here when they are sent through one of Retryline’s adapters: retryFetch from @retryline/fetch,
            attachRetry from @retryline/axios, or retryline() from @retryline/ky. {WORKERS}
          </p>
        </>
      ) : state === 'no-requests' ? (
        <>
          <p data-testid="no-events">Retryline is on this page: no requests yet.</p>
          <p class="rl-empty__hint">
            Use the page to see each request’s attempts and waits as it is sent. {WORKERS} Press / to filter.
          </p>
        </>
      ) : (
        <>
          <p data-testid="no-events">No Retryline events from this page yet.</p>
          <p class="rl-empty__hint">
            Use the page (or reload it) to see each request’s attempts and waits. Only requests sent through
            Retryline (its fetch, axios or ky adapters) in the page and its frames appear here; requests made
            from Web Workers are not captured. Press / to filter.
          </p>
        </>
      )}
    </div>
  );
}
