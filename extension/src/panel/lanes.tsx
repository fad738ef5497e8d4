/**
 * Per-key lanes (a guard key is the origin unless configured otherwise): the circuit breaker's
 * state over time as bands that say open or half-open in text, the retry budget's remaining
 * allowance as a sparkline, and, for a key the recovery gate held, its parked spans and probes.
 * They are drawn on the session's axis in the list's waterfall column, so a band lines up with the
 * requests below it. Each frame runs its own guards, so a key has a lane per frame origin that
 * reported it; the origin is named once there is more than one.
 *
 * Where the panel is short (docked at the bottom) the lanes collapse to one line per key, the
 * breaker's bands and the budget's count; a click on a key (or the caption's toggle) expands or
 * collapses them, whatever the height.
 */

import { useState } from 'preact/hooks';
import { type Axis, percentAt, spanOn } from '../model/axis';
import { parkedSpans } from '../model/gate-lane';
import type { GuardState } from '../model/lane-state';
import type { BreakerStateName, OriginLane } from '../model/timeline';
import { frameKey } from '../shared/frame-key';
import {
  budgetLabel,
  clockTime,
  guardStateText,
  parkedDescription,
  parkedLabel,
  probeLabel,
  probeSign,
} from './format';
import { pxOf } from './label-fit';
import { useWidth } from './use-width';
import { FitText } from './waterfall';

export interface LanesProps {
  readonly lanes: readonly OriginLane[];
  /** The session's axis, shared with the request list. */
  readonly axis: Axis;
  /** What each lane's guards are doing now, by `frameKey(source, key)` (absent: nothing holds). */
  readonly states?: ReadonlyMap<string, readonly GuardState[]>;
}

/** `auto`: expanded unless the panel is short (the stylesheet decides); else as the user chose. */
type Fold = 'auto' | 'expanded' | 'collapsed';

const percent = (value: number): string => `${value}%`;

export function Lanes({ lanes, axis, states }: LanesProps) {
  const [fold, setFold] = useState<Fold>('auto');
  if (lanes.length === 0) return null;
  const manySources = lanes.some((lane) => lane.source !== lanes[0]?.source);
  const gated = lanes.some((lane) => lane.gate.length > 0);
  const what = gated ? 'Breaker, budget and gate' : 'Breaker and budget';
  return (
    <section
      class={`rl-lanes rl-lanes--${fold}`}
      data-testid="lanes"
      aria-label={gated ? 'Breaker, budget and recovery gate per origin' : 'Breaker and budget per origin'}
    >
      <div class="rl-lanes__caption rl-cols">
        <span class="rl-lanes__title">
          <button
            type="button"
            class="rl-lanes__toggle"
            data-testid="lanes-collapse"
            aria-expanded="true"
            title="Collapse the lanes to one line per origin"
            onClick={() => setFold('collapsed')}
          >
            <span aria-hidden="true">▾</span> {what} per origin
          </button>
          <span class="rl-lanes__range" title="The session's span, which the lanes and the rows share">
            {`, ${clockTime(axis.start)} – ${clockTime(axis.end)}`}
          </span>
        </span>
        <Legend />
      </div>
      {lanes.map((lane) => (
        <Lane
          key={frameKey(lane.source, lane.key)}
          lane={lane}
          axis={axis}
          named={manySources}
          states={states?.get(frameKey(lane.source, lane.key)) ?? []}
          onExpand={() => setFold('expanded')}
        />
      ))}
    </section>
  );
}

/** What the bands' colours mean, in words beside each swatch. */
function Legend() {
  return (
    <span class="rl-legend" data-testid="legend">
      {(['closed', 'open', 'half-open'] as const).map((state) => (
        <span key={state} class="rl-legend__item">
          <span class={`rl-legend__swatch rl-band--${state}`} aria-hidden="true" />
          {state}
        </span>
      ))}
    </span>
  );
}

interface LaneProps {
  readonly lane: OriginLane;
  readonly axis: Axis;
  /** Whether to name the frame's origin after the key (more than one frame reported guards). */
  readonly named: boolean;
  readonly states: readonly GuardState[];
  readonly onExpand: () => void;
}

function Lane({ lane, axis, named, states, onExpand }: LaneProps) {
  const now = states.map(guardStateText).join(', ');
  const key = named ? `${lane.key} · ${lane.source}` : lane.key;
  const latest = lane.budget[lane.budget.length - 1];
  const summary = latest === undefined ? '' : ` · ${budgetLabel(latest.remaining)}`;
  return (
    <div class="rl-lane rl-cols" data-testid="lane" data-key={lane.key} data-source={lane.source}>
      <span class="rl-lane__key" title={`${lane.key}, in ${lane.source}${now === '' ? '' : `: ${now}`}`}>
        <span class="rl-lane__name">{key}</span>
        {now === '' ? null : (
          <span class="rl-lane__state" data-testid="lane-state">
            {now}
          </span>
        )}
      </span>
      {/* Shown instead of the key while the lanes are collapsed: the key and its budget, expandable. */}
      <button
        type="button"
        class="rl-lane__expand"
        aria-expanded="false"
        title={`${lane.key}, in ${lane.source}${now === '' ? '' : ` (${now})`}: show the breaker, budget and gate tracks`}
        onClick={onExpand}
      >
        <span aria-hidden="true">▸</span> {key}
        {summary}
      </button>
      <div class="rl-lane__tracks">
        <BreakerTrack lane={lane} axis={axis} />
        <BudgetTrack lane={lane} axis={axis} />
        {lane.gate.length > 0 && <GateTrack lane={lane} axis={axis} />}
      </div>
    </div>
  );
}

interface TrackProps {
  readonly lane: OriginLane;
  readonly axis: Axis;
}

/**
 * What a band says on itself where it fits: the states a request can be refused in (closed, the
 * quiet default, is told by its colour and the legend; screen readers get every state's name).
 */
const STATE_TEXT: Readonly<Record<BreakerStateName, readonly string[]>> = {
  closed: [],
  open: ['open'],
  'half-open': ['half-open'],
};

function BreakerTrack({ lane, axis }: TrackProps) {
  const [ref, width] = useWidth<HTMLDivElement>();
  if (lane.breaker.length === 0) return <div class="rl-track rl-track--empty" ref={ref} />;
  const bands: { from: number; to: number; state: BreakerStateName }[] = [];
  const first = lane.breaker[0];
  // Before its first transition, the breaker was in that transition's `from` state.
  if (first) bands.push({ from: Number.NEGATIVE_INFINITY, to: first.t, state: first.from });
  lane.breaker.forEach((transition, i) => {
    bands.push({ from: transition.t, to: lane.breaker[i + 1]?.t ?? axis.end, state: transition.to });
  });
  return (
    <div class="rl-track rl-track--breaker" data-testid="breaker-track" ref={ref}>
      {bands.map((band) => {
        const span = spanOn(axis, Math.max(band.from, axis.start), band.to);
        const since = Number.isFinite(band.from) ? ` from ${clockTime(band.from)}` : '';
        return (
          <span
            key={`${band.from}-${band.state}`}
            class={`rl-band rl-band--${band.state}`}
            data-state={band.state}
            style={{ left: percent(span.left), width: percent(span.width) }}
            title={`${lane.key}: breaker ${band.state}${since}`}
          >
            <FitText
              labels={STATE_TEXT[band.state]}
              px={pxOf(span.width, width)}
              full={`breaker ${band.state}`}
            />
          </span>
        );
      })}
    </div>
  );
}

function BudgetTrack({ lane, axis }: TrackProps) {
  if (lane.budget.length === 0) return <div class="rl-track rl-track--empty rl-track--budget" />;
  const x = (t: number) => percentAt(axis, t);
  const max = lane.budget.reduce((most, sample) => Math.max(most, sample.remaining), 1);
  // Numbers only go into the SVG: the key and other page data stay in text nodes and titles.
  const points = lane.budget
    .map(
      (sample) => `${(x(sample.t) * 10).toFixed(1)},${(20 - (sample.remaining / max) * 18 - 1).toFixed(1)}`,
    )
    .join(' ');
  const latest = lane.budget[lane.budget.length - 1];
  const denied = lane.budget.filter((sample) => !sample.allowed);
  const left = budgetLabel(latest?.remaining ?? 0);
  return (
    <div class="rl-track rl-track--budget" data-testid="budget-track" title={`${lane.key}: ${left}`}>
      <svg class="rl-sparkline" viewBox="0 0 1000 20" preserveAspectRatio="none" aria-hidden="true">
        <polyline points={points} />
        {denied.map((sample) => (
          <line
            key={sample.t}
            class="rl-sparkline__denied"
            x1={x(sample.t) * 10}
            x2={x(sample.t) * 10}
            y1={0}
            y2={20}
          />
        ))}
      </svg>
      <span class="rl-track__value">{left}</span>
    </div>
  );
}

/**
 * The recovery gate's track: hatched spans while the key had retries parked, and a marker where
 * each probe's attempt started, with a sign for how it ended (✓ recovered, ✗ still failing), so
 * neither reads by colour alone. Each says it all in its title and accessible name.
 */
function GateTrack({ lane, axis }: TrackProps) {
  const spans = parkedSpans(lane.gate);
  return (
    <div class="rl-track rl-track--gate" data-testid="gate-track" title={`${lane.key}: recovery gate`}>
      {spans.map((parked) => {
        const span = spanOn(axis, parked.from, parked.to ?? axis.end);
        return (
          <span
            key={parked.from}
            class="rl-gate-span"
            data-testid="parked-span"
            style={{ left: percent(span.left), width: percent(span.width) }}
            title={`${lane.key}: ${parkedDescription(parked)}`}
          >
            {parkedLabel(parked)}
          </span>
        );
      })}
      {lane.probes.map((probe) => {
        const label = probeLabel(probe);
        return (
          <span
            key={frameKey(probe.requestId, String(probe.attempt))}
            class={`rl-probe rl-probe--${probe.result}`}
            data-testid="probe"
            data-result={probe.result}
            role="img"
            aria-label={label}
            style={{ left: percent(percentAt(axis, probe.t)) }}
            title={`${lane.key}: ${label} · attempt ${probe.attempt} of ${probe.requestId} · ${clockTime(probe.t)}`}
          >
            {probeSign(probe.result)}
          </span>
        );
      })}
    </div>
  );
}
