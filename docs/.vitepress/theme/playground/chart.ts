// The geometry of the playground's SVG charts: linear scales with round ticks, and path strings for
// lines and bands. No chart library: a few line charts need only this.

export interface ChartLine {
  readonly name: string;
  readonly color: string;
  readonly points: ReadonlyArray<readonly [number, number]>;
  readonly markers?: boolean;
  readonly dashed?: boolean;
  readonly width?: number;
}

export interface ChartBand {
  readonly name: string;
  readonly color: string;
  /** [x, low, high] */
  readonly points: ReadonlyArray<readonly [number, number, number]>;
  /** An area between two lines, or a box per x. */
  readonly shape: 'area' | 'steps';
}

/** The drawing area of a chart, in SVG user units. */
export interface Frame {
  readonly width: number;
  readonly height: number;
  readonly left: number;
  readonly right: number;
  readonly top: number;
  readonly bottom: number;
}

export const FRAME: Frame = { width: 640, height: 260, left: 64, right: 16, top: 16, bottom: 40 };

export interface Scale {
  (value: number): number;
  readonly ticks: readonly number[];
}

/** Round tick values from 0 (or `min`) to at least `max`: steps of 1, 2 or 5 × 10^k. */
export function niceTicks(min: number, max: number, count = 5): number[] {
  const span = Math.max(max - min, Number.EPSILON);
  const raw = span / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = ([1, 2, 5, 10].find((m) => m * power >= raw) ?? 10) * power;
  const first = Math.floor(min / step) * step;
  const ticks: number[] = [];
  // Up to the first tick at or past `max`, so nothing drawn is above the top of the axis.
  for (let i = 0; ; i++) {
    const tick = Number((first + i * step).toPrecision(12));
    ticks.push(tick);
    if (tick >= max) return ticks;
  }
}

/** Maps [domain0, domain1] onto [range0, range1], with ticks over the domain. */
export function linearScale(
  domain: readonly [number, number],
  range: readonly [number, number],
  ticks: readonly number[] = [],
): Scale {
  const [d0, d1] = domain;
  const [r0, r1] = range;
  const k = d1 === d0 ? 0 : (r1 - r0) / (d1 - d0);
  return Object.assign((value: number) => r0 + (value - d0) * k, { ticks });
}

/** A y scale from 0 to a round maximum at least `max`, upwards in the frame. */
export function yScale(max: number, frame: Frame = FRAME): Scale {
  const ticks = niceTicks(0, max > 0 ? max : 1);
  const top = ticks.at(-1) ?? 1;
  return linearScale([0, top], [frame.height - frame.bottom, frame.top], ticks);
}

/** An x scale over [min, max], left to right in the frame. */
export function xScale(
  min: number,
  max: number,
  frame: Frame = FRAME,
  ticks: readonly number[] = niceTicks(min, max),
): Scale {
  return linearScale([min, max], [frame.left, frame.width - frame.right], ticks);
}

const round = (value: number) => Math.round(value * 10) / 10;

/** `M x y L x y …` through the points. */
export function linePath(points: ReadonlyArray<readonly [number, number]>, x: Scale, y: Scale): string {
  return points.map(([px, py], i) => `${i === 0 ? 'M' : 'L'}${round(x(px))} ${round(y(py))}`).join(' ');
}

/** A closed band between `low` and `high` over the same x values. */
export function bandPath(
  points: ReadonlyArray<readonly [number, number, number]>,
  x: Scale,
  y: Scale,
): string {
  if (points.length === 0) return '';
  const upper = points.map(([px, , high]) => [px, high] as const);
  const lower = points.map(([px, low]) => [px, low] as const).reverse();
  return `${linePath([...upper, ...lower], x, y)} Z`;
}

/** A step band: each x gets a box from `x − half` to `x + half` between its low and high. */
export function stepBandPath(
  points: ReadonlyArray<readonly [number, number, number]>,
  x: Scale,
  y: Scale,
  half = 0.3,
): string {
  return points
    .map(([px, low, high]) => {
      const x0 = round(x(px - half));
      const x1 = round(x(px + half));
      return `M${x0} ${round(y(high))} H${x1} V${round(y(low))} H${x0} Z`;
    })
    .join(' ');
}

/** Milliseconds for an axis or a label: `250 ms`, `1.5 s`, `2.1 min`. */
export function formatMs(ms: number): string {
  if (!Number.isFinite(ms)) return String(ms);
  if (Math.abs(ms) < 1000) return `${Number(ms.toPrecision(3))} ms`;
  if (Math.abs(ms) < 120_000) return `${Number((ms / 1000).toPrecision(3))} s`;
  return `${Number((ms / 60_000).toPrecision(3))} min`;
}
