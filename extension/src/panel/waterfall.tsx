/**
 * One request's waterfall: a bar per attempt coloured by how it ended (outlined when the panel's
 * fault injection answered it), a thin bar below an attempt for its hedge (a second copy sent while
 * it ran; the attempt then keeps the top of the row, and is hatched as cancelled when the hedge
 * answered for it), hatched segments for the waits between them (labelled with why), and guard
 * waits before the attempts they held back.
 * Every row and lane is drawn on the session's one axis ({@link sessionAxis}), so bars line up
 * across requests and stay put while the list scrolls.
 */

import type { Ref } from 'preact';
import { type Axis, axisTicks, percentAt, spanOn, tickLabel } from '../model/axis';
import { type AttemptRow, attemptClass, type RequestRow } from '../model/timeline';
import { attemptTitle, clockTime, guardLabels, HEDGE_LABEL, refusalLabel, waitLabels } from './format';
import { fitLabel, labelWidth, pxOf } from './label-fit';

export type { Axis };

export interface WaterfallProps {
  readonly row: RequestRow;
  readonly axis: Axis;
  /** Where running attempts end for now. */
  readonly now: number;
  /** The waterfall's width in px, to choose labels that fit; undefined before layout. */
  readonly width?: number | undefined;
}

/** Preact 11 adds no `px`/`%` to numbers: every length is a string with its unit. */
const percent = (value: number): string => `${value}%`;

export function Waterfall({ row, axis, now, width }: WaterfallProps) {
  const refusal = refusalLabel(row);
  return (
    <div class="rl-waterfall" data-testid="waterfall">
      {row.guardWaits.map((wait) => {
        const labels = guardLabels(wait);
        return (
          <Wait
            key={`g${wait.attempt}-${wait.guard}`}
            kind={wait.guard}
            span={spanOn(axis, wait.start, wait.end)}
            labels={labels}
            title={`${labels[0]} (${wait.key}) before attempt ${wait.attempt}`}
            width={width}
          />
        );
      })}
      {row.waits.map((wait) => {
        const labels = waitLabels(wait);
        return (
          <Wait
            key={`w${wait.afterAttempt}`}
            kind={wait.reason}
            span={spanOn(axis, wait.start, wait.start + wait.delay)}
            labels={labels}
            title={`${labels[0]} after attempt ${wait.afterAttempt}`}
            width={width}
          />
        );
      })}
      {row.attempts.map((attempt) => (
        <AttemptBar
          key={`a${attempt.n}`}
          attempt={attempt}
          axis={axis}
          now={now}
          hedged={row.hedges.some((hedge) => hedge.n === attempt.n)}
        />
      ))}
      {row.hedges.map((hedge) => (
        <AttemptBar key={`h${hedge.n}`} attempt={hedge} axis={axis} now={now} hedged={false} />
      ))}
      {refusal !== undefined && (
        <Refusal label={refusal} at={row.end ?? row.last} axis={axis} width={width} />
      )}
    </div>
  );
}

interface AttemptBarProps {
  readonly attempt: AttemptRow;
  readonly axis: Axis;
  readonly now: number;
  /** A hedge ran beside it: it keeps the top of the row, the hedge's bar the bottom. */
  readonly hedged: boolean;
}

/** An attempt's bar, or its hedge's (thin, below it: `data-hedge`). */
function AttemptBar({ attempt, axis, now, hedged }: AttemptBarProps) {
  const kind = attemptClass(attempt);
  const end = attempt.end ?? Math.max(now, attempt.start);
  const span = spanOn(axis, attempt.start, end);
  const cancelled = attempt.answeredBy === 'hedge';
  const marks = `${attempt.injected ? ' rl-bar--injected' : ''}${hedged ? ' rl-bar--hedged' : ''}${
    attempt.hedge ? ' rl-bar--hedge' : ''
  }${cancelled ? ' rl-bar--cancelled' : ''}`;
  return (
    <span
      class={`rl-bar rl-bar--${kind}${marks}`}
      data-testid={attempt.hedge ? 'hedge-bar' : 'attempt-bar'}
      data-status={cancelled ? 'cancelled' : attempt.status === undefined ? kind : String(attempt.status)}
      data-attempt={String(attempt.n)}
      data-injected={attempt.injected ? 'true' : undefined}
      data-hedge={attempt.hedge ? 'true' : undefined}
      data-answered-by={attempt.answeredBy}
      data-endpoint={attempt.endpoint}
      style={{ left: percent(span.left), width: percent(span.width) }}
      title={attemptTitle(attempt)}
    >
      {attempt.hedge ? <span class="rl-sr">{HEDGE_LABEL}</span> : null}
    </span>
  );
}

interface WaitProps {
  readonly kind: string;
  readonly span: { readonly left: number; readonly width: number };
  /** Longest first; the longest that fits is shown, the first is in the title. */
  readonly labels: readonly string[];
  readonly title: string;
  readonly width: number | undefined;
}

function Wait({ kind, span, labels, title, width }: WaitProps) {
  return (
    <span
      class={`rl-wait rl-wait--${kind}`}
      data-testid="wait"
      data-kind={kind}
      style={{ left: percent(span.left), width: percent(span.width) }}
      title={title}
    >
      <FitText labels={labels} px={pxOf(span.width, width)} />
    </span>
  );
}

export interface FitTextProps {
  /** What is shown: the longest of these that fits, longest first. */
  readonly labels: readonly string[];
  /** The box's width in px, if known. */
  readonly px: number | undefined;
  /** What screen readers read (and the element's text says). @default the first label */
  readonly full?: string;
}

/**
 * A box's label: the longest of `labels` that fits is shown, whole or not at all (the stylesheet
 * wraps a label its box cannot hold onto a second line, which the box hides: `.rl-fit`); the full
 * text is always there for screen readers.
 */
export function FitText({ labels, px, full = labels[0] ?? '' }: FitTextProps) {
  const shown = fitLabel(labels, px);
  return (
    <>
      <span class="rl-sr">{full}</span>
      {shown === '' ? null : (
        <>
          <span class="rl-fit" aria-hidden="true" />
          <span class="rl-fit__text" aria-hidden="true">
            {shown}
          </span>
        </>
      )}
    </>
  );
}

interface RefusalProps {
  readonly label: string;
  readonly at: number;
  readonly axis: Axis;
  readonly width: number | undefined;
}

/** Where a guard refused the request; its label sits after the mark if it has room there, else before. */
function Refusal({ label, at, axis, width }: RefusalProps) {
  const left = percentAt(axis, at);
  const room = pxOf(100 - left, width);
  const before = room === undefined ? left > 70 : labelWidth(label) > room;
  return (
    <span
      class={before ? 'rl-refusal rl-refusal--before' : 'rl-refusal'}
      data-testid="refusal"
      style={before ? { right: percent(Math.round((100 - left) * 1000) / 1000) } : { left: percent(left) }}
      title={`refused: ${label} at ${clockTime(at)}`}
    >
      {label}
    </span>
  );
}

/** Ticks are at least this far apart, so their labels never touch. */
const TICK_PX = 60;

export interface WaterfallAxisProps {
  readonly axis: Axis | undefined;
  /** The axis's width in px (the waterfall's): how many ticks fit. */
  readonly width: number | undefined;
  /** Receives the axis's element, which the list measures. */
  readonly innerRef?: Ref<HTMLDivElement>;
}

/**
 * Tick labels for the session's axis, as offsets from its start (whose clock time is the title),
 * a step of 1, 2 or 5 × 10^n apart. A label with no room before the right edge sits before its
 * tick instead, if it has room there; else it is left out.
 */
export function WaterfallAxis({ axis, width, innerRef = null }: WaterfallAxisProps) {
  if (!axis) return <div class="rl-axis" ref={innerRef} />;
  const { step, at } = axisTicks(axis, width === undefined ? 4 : Math.max(1, Math.floor(width / TICK_PX)));
  const gap = pxOf(percentAt(axis, axis.start + step), width);
  return (
    <div
      class="rl-axis"
      ref={innerRef}
      data-testid="axis"
      title={`Time from ${clockTime(axis.start)}, the start of the session`}
    >
      {at.map((offset) => {
        const left = percentAt(axis, axis.start + offset);
        const label = tickLabel(offset, step);
        const room = pxOf(100 - left, width);
        const end = room !== undefined && room < labelWidth(label);
        // Before its tick, the label must clear the previous tick's label.
        if (end && (gap === undefined || gap < 2 * labelWidth(label))) return null;
        return (
          <span
            key={offset}
            class={end ? 'rl-axis__tick rl-axis__tick--end' : 'rl-axis__tick'}
            data-testid="tick"
            style={{ left: percent(left) }}
          >
            {label}
          </span>
        );
      })}
    </div>
  );
}
