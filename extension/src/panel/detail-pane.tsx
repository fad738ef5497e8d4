/**
 * The selected request in full: every attempt (status, phase, error, the endpoint it was sent to,
 * headers as the events carry them, so redacted values stay `[redacted]`, and whether the panel's
 * fault injection answered it), each hedge after the attempt it hedged, every wait with how its
 * delay was computed, and the guards that held attempts back.
 */

import { useEffect, useState } from 'preact/hooks';
import { hasRedacted, toCurl, toFetch } from '../model/copy-request';
import {
  type AttemptRow,
  attemptsAndHedges,
  type HeaderMap,
  type NavigationMark,
  type RequestRow,
} from '../model/timeline';
import { MAX_REPLAYS, type PageState, REPLAYED_METHODS } from '../shared/protocol';
import { MAX_STRING_LENGTH } from '../shared/schema';
import {
  attemptStatusText,
  clockTime,
  formatMs,
  guardLabel,
  HEDGE_ANSWERED_DETAIL,
  HEDGE_DETAIL,
  hedgesText,
  INJECTED_BY,
  INJECTED_DETAIL,
  outcomeLabel,
  truncationText,
  waitComputation,
  waitLabel,
} from './format';

export interface DetailPaneProps {
  readonly row: RequestRow;
  readonly onClose: () => void;
  /** Puts text on the clipboard (Copy as cURL, Copy as fetch). */
  readonly copy?: (text: string) => Promise<void>;
  /** Shows the URL in DevTools' Network panel; absent where there is none (Firefox, the viewer). */
  readonly reveal?: (url: string) => void;
  /**
   * Has the page send the request again through its Retryline client; absent where no page feeds
   * the panel (the viewer, an imported file).
   */
  readonly replay?: (row: RequestRow) => void;
  /** The timeline's navigations: a row before the last one is of a page that is gone. */
  readonly navigations?: readonly NavigationMark[];
  /** What the worker knows of the tab's page: the origins of its frames, when it knows them. */
  readonly page?: PageState | undefined;
}

export function DetailPane(props: DetailPaneProps) {
  const { row, onClose, copy, reveal, replay } = props;
  return (
    <aside
      class="rl-detail"
      data-testid="detail"
      aria-label="Request details"
      onKeyDown={(event) => {
        if (event.key !== 'Escape') return;
        event.stopPropagation();
        onClose();
      }}
    >
      <header class="rl-detail__header">
        <h2 class="rl-detail__title">
          {row.method === '' ? null : <span class="rl-detail__method">{row.method} </span>}
          <span class="rl-detail__url">{row.url === '' ? row.path || row.requestId : row.url}</span>
        </h2>
        <button
          type="button"
          class="rl-button"
          onClick={onClose}
          aria-label="Close details"
          title="Close (Esc)"
        >
          ×
        </button>
      </header>
      <DetailActions
        row={row}
        copy={copy}
        reveal={reveal}
        replay={replay}
        blocked={replayBlocked(row, props.navigations ?? [], props.page)}
      />
      <RequestFacts row={row} />
      <RequestSteps row={row} />
    </aside>
  );
}

/** What is known of the request as a whole: its outcome, client, attempts, timing, error and ids. */
function RequestFacts({ row }: { readonly row: RequestRow }) {
  return (
    <dl class="rl-facts">
      <dt>Outcome</dt>
      <dd data-testid="detail-outcome">
        {outcomeLabel(row.outcome)}
        {row.status === undefined ? '' : ` · ${row.status}`}
      </dd>
      <dt>Client</dt>
      <dd>
        {row.client}
        {row.operation === undefined ? '' : ` · ${row.operation}`}
      </dd>
      <dt>Attempts</dt>
      <dd data-testid="detail-attempts">
        {row.attempts.length}
        {row.injected > 0 ? ` (${row.injected} ${INJECTED_BY})` : ''}
        {row.hedges.length > 0 ? `, and ${hedgesText(row.hedges.length)} beside them` : ''}
      </dd>
      {row.truncated ? (
        <>
          <dt>Not recorded</dt>
          <dd data-testid="detail-truncated">{truncationText(row.truncated)}</dd>
        </>
      ) : null}
      <dt>Started</dt>
      <dd>
        {clockTime(row.start)}
        {row.complete ? '' : ' (inferred: the request’s start was not recorded)'}
      </dd>
      {row.end === undefined ? null : (
        <>
          <dt>Took</dt>
          <dd>
            {formatMs(row.end - row.start)}
            {row.totalDelay === undefined ? '' : `, of which waiting ${formatMs(row.totalDelay)}`}
          </dd>
        </>
      )}
      {row.error ? (
        <>
          <dt>Error</dt>
          <dd class="rl-error">{errorText(row.error)}</dd>
        </>
      ) : null}
      <dt>Request id</dt>
      <dd class="rl-mono">{row.requestId}</dd>
      {/* With the id, what names the request: another frame may use the same id for its own. */}
      <dt title="The origin of the frame (or process) that sent this request’s events">Sent by</dt>
      <dd class="rl-mono" data-testid="detail-source">
        {row.source}
      </dd>
    </dl>
  );
}

/** The request's attempts in order, with the waits between them and the guards that held them back. */
function RequestSteps({ row }: { readonly row: RequestRow }) {
  return (
    <ol class="rl-timeline">
      {steps(row).map((step) =>
        step.kind === 'attempt' ? (
          <li
            key={`${step.attempt.hedge ? 'h' : 'a'}${step.attempt.n}`}
            class={step.attempt.hedge ? 'rl-step rl-step--hedge' : 'rl-step'}
            data-testid={step.attempt.hedge ? 'detail-hedge' : 'detail-attempt'}
          >
            <AttemptDetail attempt={step.attempt} />
          </li>
        ) : step.kind === 'wait' ? (
          <li key={`w${step.index}`} class="rl-step rl-step--wait" data-testid="detail-wait">
            <h3 class="rl-step__title">Wait: {waitLabel(step.wait)}</h3>
            <ul class="rl-computation">
              {waitComputation(step.wait).map((line) => (
                <li key={line}>{line}</li>
              ))}
            </ul>
            <p class="rl-step__meta">from {clockTime(step.wait.start)}</p>
          </li>
        ) : (
          <li key={`g${step.index}`} class="rl-step rl-step--wait" data-testid="detail-guard">
            <h3 class="rl-step__title">Held back: {guardLabel(step.guard)}</h3>
            <p class="rl-step__meta">
              {step.guard.guard} for {step.guard.key}, before attempt {step.guard.attempt}
            </p>
          </li>
        ),
      )}
    </ol>
  );
}

type Step =
  | { readonly kind: 'attempt'; readonly attempt: AttemptRow }
  | { readonly kind: 'wait'; readonly index: number; readonly wait: RequestRow['waits'][number] }
  | { readonly kind: 'guard'; readonly index: number; readonly guard: RequestRow['guardWaits'][number] };

/** Attempts with the waits before each and the hedge beside each, in the order they happened. */
function steps(row: RequestRow): Step[] {
  const out: Step[] = [];
  const placed = new Set<number>();
  const placedGuards = new Set<number>();
  const before = (n: number) => {
    row.waits.forEach((wait, index) => {
      if (wait.afterAttempt === n - 1 && !placed.has(index)) {
        placed.add(index);
        out.push({ kind: 'wait', index, wait });
      }
    });
    row.guardWaits.forEach((guard, index) => {
      if (guard.attempt === n && !placedGuards.has(index)) {
        placedGuards.add(index);
        out.push({ kind: 'guard', index, guard });
      }
    });
  };
  for (const attempt of attemptsAndHedges(row)) {
    before(attempt.n);
    out.push({ kind: 'attempt', attempt });
  }
  // Waits no recorded attempt followed (the request ended, or is waiting now).
  row.waits.forEach((wait, index) => {
    if (!placed.has(index)) out.push({ kind: 'wait', index, wait });
  });
  row.guardWaits.forEach((guard, index) => {
    if (!placedGuards.has(index)) out.push({ kind: 'guard', index, guard });
  });
  return out;
}

function AttemptDetail({ attempt }: { readonly attempt: AttemptRow }) {
  return (
    <>
      <h3 class="rl-step__title">
        {attempt.hedge ? 'Hedge of attempt' : 'Attempt'} {attempt.n}:{' '}
        <span class="rl-step__status">{attemptStatusText(attempt)}</span>
        <span class="rl-step__meta">
          {' '}
          · {attempt.outcome}
          {attempt.phase === undefined ? '' : ` · ${phaseText(attempt.phase)}`}
          {attempt.end === undefined ? ' · running' : ` · ${formatMs(attempt.end - attempt.start)}`} · at{' '}
          {clockTime(attempt.start)}
        </span>
      </h3>
      {attempt.endpoint === undefined ? null : (
        <p class="rl-step__meta rl-step__endpoint" data-testid="detail-endpoint">
          Endpoint: <span class="rl-mono">{attempt.endpoint}</span>
        </p>
      )}
      {attempt.hedge ? (
        <p class="rl-hedge-note" data-testid="detail-hedge-note">
          {HEDGE_DETAIL}
        </p>
      ) : null}
      {attempt.answeredBy === 'hedge' ? (
        <p class="rl-hedge-note" data-testid="detail-hedge-answered">
          {HEDGE_ANSWERED_DETAIL}
        </p>
      ) : null}
      {attempt.injected ? (
        <p class="rl-injected-note" data-testid="detail-injected">
          {INJECTED_DETAIL}
        </p>
      ) : null}
      {attempt.error ? <p class="rl-error">{errorText(attempt.error)}</p> : null}
      <Headers title="Request headers" headers={attempt.requestHeaders} />
      <Headers title="Response headers" headers={attempt.responseHeaders} />
    </>
  );
}

function phaseText(phase: NonNullable<AttemptRow['phase']>): string {
  switch (phase) {
    case 'not-sent':
      return 'failed before sending';
    case 'unknown':
      return 'may have reached the server';
    case 'response':
      return 'got a response';
  }
}

function errorText(error: {
  readonly name: string;
  readonly message: string;
  readonly code?: string;
}): string {
  return `${error.name}${error.code === undefined ? '' : ` (${error.code})`}: ${error.message}`;
}

function Headers({ title, headers }: { readonly title: string; readonly headers: HeaderMap | undefined }) {
  if (headers === undefined) return null;
  const names = Object.keys(headers).sort();
  return (
    <details class="rl-headers" open>
      <summary>
        {title} ({names.length})
      </summary>
      <table>
        <tbody>
          {names.map((name) => (
            <tr key={name} data-testid="header">
              <th scope="row">{name}</th>
              <td>{headers[name]}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </details>
  );
}

interface DetailActionsProps {
  readonly row: RequestRow;
  readonly copy: ((text: string) => Promise<void>) | undefined;
  readonly reveal: ((url: string) => void) | undefined;
  readonly replay: ((row: RequestRow) => void) | undefined;
  /** Why the row cannot be replayed, if it cannot (see {@link replayBlocked}). */
  readonly blocked: string | undefined;
}

const REPLAY_TITLE =
  'Have the page send this request again through the Retryline client that sent it (its options, guards and fault rules), as a new row';
const NOT_REPLAYED =
  'Only GET, HEAD and OPTIONS requests are replayed: sending any other again could change data';
const PAGE_GONE = 'This request’s page is gone';
const REPLAY_SENT =
  `Asked the page to send it again: its row appears as it starts. None does if the page has left, ` +
  `has sent ${MAX_REPLAYS} newer requests, sent it while no Retryline panel was open (a page keeps ` +
  `what Replay needs only while one is), or is a production build (replay is for development builds).`;

/**
 * Why the row's request cannot be sent again, or `undefined` when the page may still hold its
 * replay: not a GET, HEAD or OPTIONS request; sent before the tab's last navigation (with Preserve
 * log), or by a frame whose origin no frame of the page has now, as far as the worker knows (a
 * frame removed from the page says nothing, so a row of one may stay enabled and send nothing); or
 * its URL was cut where the extension records no more of it, so the page cannot find it by it.
 */
export function replayBlocked(
  row: RequestRow,
  navigations: readonly NavigationMark[],
  page: PageState | undefined,
): string | undefined {
  if (!REPLAYED_METHODS.includes(row.method)) return NOT_REPLAYED;
  if (row.index < (navigations.at(-1)?.beforeRow ?? 0)) {
    return `${PAGE_GONE}: it was sent before the tab’s last navigation`;
  }
  if (page?.frames && !page.frames.includes(row.source)) {
    return `${PAGE_GONE}: no frame of the tab’s page is of the origin that sent it (${row.source}) now`;
  }
  if (row.url.length >= MAX_STRING_LENGTH && row.url.endsWith('…')) {
    return 'Its URL is longer than the extension records, so the page cannot be asked for it';
  }
  return undefined;
}

/**
 * Copy as cURL / as fetch (redacted headers stay redacted, and say so), Reveal in Network, and
 * Replay.
 */
function DetailActions({ row, copy, reveal, replay, blocked }: DetailActionsProps) {
  const [said, setSaid] = useState('');
  useEffect(() => setSaid(''), [row.key]);
  const redacted = hasRedacted(row);
  const copyAs = (what: string, text: string) => {
    if (!copy) return;
    copy(text).then(
      () =>
        setSaid(
          redacted
            ? `Copied as ${what}. Redacted headers stay [redacted]: fill them in before sending.`
            : `Copied as ${what}. The body is not recorded, so it is not included.`,
        ),
      (error: Error) => setSaid(`Could not copy: ${error.message}`),
    );
  };
  const url = row.url;
  return (
    <div class="rl-detail__actions">
      {copy ? (
        <>
          <button
            type="button"
            class="rl-button"
            data-testid="copy-curl"
            onClick={() => copyAs('cURL', toCurl(row))}
          >
            Copy as cURL
          </button>
          <button
            type="button"
            class="rl-button"
            data-testid="copy-fetch"
            onClick={() => copyAs('fetch', toFetch(row))}
          >
            Copy as fetch
          </button>
        </>
      ) : null}
      {reveal && url !== '' ? (
        <button
          type="button"
          class="rl-button"
          data-testid="reveal-network"
          title="Show this URL's requests in the Network panel"
          onClick={() => reveal(url)}
        >
          Reveal in Network
        </button>
      ) : null}
      {replay ? (
        <button
          type="button"
          class="rl-button"
          data-testid="replay"
          disabled={blocked !== undefined}
          title={blocked ?? REPLAY_TITLE}
          onClick={() => {
            replay(row);
            setSaid(REPLAY_SENT);
          }}
        >
          Replay
        </button>
      ) : null}
      <span class="rl-detail__said" role="status" data-testid="copy-status">
        {said}
      </span>
    </div>
  );
}
