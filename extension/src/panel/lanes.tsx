/**
 * Per-key lanes (a guard key is the origin unless configured otherwise): the circuit breaker's
 * state over time as coloured bands, the retry budget's remaining allowance as a sparkline, and,
 * for a key the recovery gate held, its parked spans and probes, all on the whole timeline's time
 * span. Each frame runs its own guards, so a key has a lane per frame origin that reported it; the
 * origin is named once there is more than one.
 */

import { parkedSpans } from '../model/gate-lane';
import type { BreakerStateName, OriginLane } from '../model/timeline';
import { frameKey } from '../shared/frame-key';
import { clockTime, parkedDescription, parkedLabel, probeLabel, probeSign } from './format';

export interface LanesProps {
  readonly lanes: readonly OriginLane[];
  readonly start: number;
  readonly end: number;
}

export function Lanes({ lanes, start, end }: LanesProps) {
  if (lanes.length === 0) return null;
  const span = Math.max(1, end - start);
  const x = (t: number) => Math.min(100, Math.max(0, ((t - start) / span) * 100));
  const manySources = lanes.some((lane) => lane.source !== lanes[0]?.source);
  const gated = lanes.some((lane) => lane.gate.length > 0);
  return (
    <section
      class="rl-lanes"
      aria-label={gated ? 'Breaker, budget and recovery gate per origin' : 'Breaker and budget per origin'}
    >
      <div class="rl-lanes__caption">
        {gated ? 'Breaker state, retry budget and recovery gate' : 'Breaker state and retry budget'} per
        origin, {clockTime(start)} – {clockTime(end)}
      </div>
      {lanes.map((lane) => (
        <div
          key={frameKey(lane.source, lane.key)}
          class="rl-lane"
          data-testid="lane"
          data-key={lane.key}
          data-source={lane.source}
        >
          <span class="rl-lane__key" title={`${lane.key}, in ${lane.source}`}>
            {lane.key}
            {manySources ? ` · ${lane.source}` : null}
          </span>
          <div class="rl-lane__tracks">
            <BreakerTrack lane={lane} x={x} end={end} />
            <BudgetTrack lane={lane} x={x} />
            {lane.gate.length > 0 && <GateTrack lane={lane} x={x} end={end} />}
          </div>
        </div>
      ))}
    </section>
  );
}

interface TrackProps {
  readonly lane: OriginLane;
  readonly x: (t: number) => number;
}

function BreakerTrack({ lane, x, end }: TrackProps & { readonly end: number }) {
  if (lane.breaker.length === 0) return <div class="rl-track rl-track--empty" />;
  const bands: { from: number; to: number; state: BreakerStateName }[] = [];
  const first = lane.breaker[0];
  // Before its first transition, the breaker was in that transition's `from` state.
  if (first) bands.push({ from: Number.NEGATIVE_INFINITY, to: first.t, state: first.from });
  lane.breaker.forEach((transition, i) => {
    bands.push({ from: transition.t, to: lane.breaker[i + 1]?.t ?? end, state: transition.to });
  });
  return (
    <div class="rl-track" data-testid="breaker-track">
      {bands.map((band) => {
        const left = x(band.from);
        return (
          <span
            key={`${band.from}-${band.state}`}
            class={`rl-band rl-band--${band.state}`}
            data-state={band.state}
            style={{ left: `${left}%`, width: `${Math.max(0, x(band.to) - left)}%` }}
            title={`${lane.key}: ${band.state}${Number.isFinite(band.from) ? ` from ${clockTime(band.from)}` : ''}`}
          />
        );
      })}
    </div>
  );
}

function BudgetTrack({ lane, x }: TrackProps) {
  if (lane.budget.length === 0) return <div class="rl-track rl-track--empty" />;
  const max = lane.budget.reduce((most, sample) => Math.max(most, sample.remaining), 1);
  // Numbers only go into the SVG: the key and other page data stay in text nodes and titles.
  const points = lane.budget
    .map(
      (sample) => `${(x(sample.t) * 10).toFixed(1)},${(20 - (sample.remaining / max) * 18 - 1).toFixed(1)}`,
    )
    .join(' ');
  const latest = lane.budget[lane.budget.length - 1];
  const denied = lane.budget.filter((sample) => !sample.allowed);
  return (
    <div
      class="rl-track"
      data-testid="budget-track"
      title={`${lane.key}: ${latest?.remaining ?? 0} retries left`}
    >
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
      <span class="rl-track__value">{latest?.remaining ?? 0} left</span>
    </div>
  );
}

/**
 * The recovery gate's track: hatched spans while the key had retries parked, and a marker where
 * each probe's attempt started, with a sign for how it ended (✓ recovered, ✗ still failing), so
 * neither reads by colour alone. Each says it all in its title and accessible name.
 */
function GateTrack({ lane, x, end }: TrackProps & { readonly end: number }) {
  const spans = parkedSpans(lane.gate);
  return (
    <div class="rl-track rl-track--gate" data-testid="gate-track" title={`${lane.key}: recovery gate`}>
      {spans.map((span) => {
        const left = x(span.from);
        return (
          <span
            key={span.from}
            class="rl-gate-span"
            data-testid="parked-span"
            style={{ left: `${left}%`, width: `${Math.max(0, x(span.to ?? end) - left)}%` }}
            title={`${lane.key}: ${parkedDescription(span)}`}
          >
            {parkedLabel(span)}
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
            style={{ left: `${x(probe.t)}%` }}
            title={`${lane.key}: ${label} · attempt ${probe.attempt} of ${probe.requestId} · ${clockTime(probe.t)}`}
          >
            {probeSign(probe.result)}
          </span>
        );
      })}
    </div>
  );
}
