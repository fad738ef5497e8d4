// A small SVG line-chart writer for bench/report.mjs: axes with ticks and labels, a legend, one
// polyline per series, an optional logarithmic y axis and shaded x ranges (such as a stall). The
// chart draws its own white background and dark text, so it reads the same in GitHub's light and
// dark themes, and carries a <title> and <desc> for screen readers. No dependencies.
//
//   import { lineChart } from './lib/svg.mjs';
//   writeFileSync('chart.svg', lineChart({ title, xLabel, yLabel, series: [{ name, points: [[x, y]] }] }));

// Okabe–Ito colours (distinguishable with the common colour-vision deficiencies), each with a dash
// pattern so that lines which overlap or print in grey still tell apart.
const STYLES = [
  { color: '#0072B2', dash: '' },
  { color: '#D55E00', dash: '7 4' },
  { color: '#009E73', dash: '2 3' },
  { color: '#CC79A7', dash: '10 3 2 3' },
  { color: '#000000', dash: '' },
  { color: '#E69F00', dash: '4 2' },
  { color: '#56B4E9', dash: '1 2' },
];

const TEXT = '#1f2328';
const MUTED = '#57606a';
const GRID = '#d0d7de';
const FONT = 'font-family="system-ui, -apple-system, Segoe UI, Helvetica, Arial, sans-serif"';

/** Escapes text for an SVG text node or attribute. */
export function escapeXml(text) {
  return String(text).replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c],
  );
}

/** A number as a tick label: thousands separators, and no more decimals than the step needs. */
function tickLabel(value, step) {
  const decimals = step >= 1 ? 0 : Math.min(6, Math.ceil(-Math.log10(step)));
  return value.toLocaleString('en-US', { minimumFractionDigits: decimals, maximumFractionDigits: decimals });
}

/** Evenly spaced "round" ticks (steps of 1, 2 or 5 × 10^k) covering [min, max], about `count` of them. */
function linearTicks(min, max, count) {
  const span = max - min || Math.abs(max) || 1;
  const raw = span / count;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * magnitude).find((s) => s >= raw);
  const first = Math.floor(min / step) * step;
  const last = Math.ceil(max / step) * step;
  const ticks = [];
  for (let i = 0; first + i * step <= last + step / 2; i++)
    ticks.push(Number((first + i * step).toPrecision(12)));
  return { ticks, step };
}

/**
 * Ticks at 1, 2 and 5 × each power of ten (only the powers when that is crowded), from the largest
 * such value ≤ min to the smallest ≥ max (min > 0), so the data fills the axis.
 */
function logTicks(min, max) {
  const candidates = [];
  for (let power = Math.floor(Math.log10(min)); power <= Math.ceil(Math.log10(max)); power++) {
    for (const m of [1, 2, 5]) candidates.push(Number((m * 10 ** power).toPrecision(12)));
  }
  const low = candidates.findLast((value) => value <= min);
  const high = candidates.find((value) => value >= max);
  const ticks = candidates.filter((value) => value >= low && value <= high);
  if (ticks.length <= 10) return { ticks };
  const isPower = (value) => Math.abs(Math.log10(value) - Math.round(Math.log10(value))) < 1e-9;
  return { ticks: [low, ...ticks.filter((value) => value > low && value < high && isPower(value)), high] };
}

/**
 * Renders a line chart as an SVG document.
 *
 * @param {object} chart
 * @param {string} chart.title shown at the top and used as the accessible name
 * @param {string} [chart.description] the accessible description (<desc>); also shown as a subtitle
 * @param {string} chart.xLabel
 * @param {string} chart.yLabel
 * @param {{ name: string, points: Array<[number, number]> }[]} chart.series in legend order
 * @param {boolean} [chart.logY] logarithmic y axis (every y must be > 0)
 * @param {number} [chart.yMin] force the y axis to start here (linear axes start at 0 by default)
 * @param {{ from: number, to: number, label: string }[]} [chart.ranges] x ranges to shade
 * @param {{ y: number, label: string }[]} [chart.rules] horizontal reference lines (a capacity, a target)
 * @param {number} [chart.width] 760 by default
 * @param {number} [chart.height] 420 by default
 * @returns {string}
 */
export function lineChart({
  title,
  description,
  xLabel,
  yLabel,
  series,
  logY = false,
  yMin,
  ranges = [],
  rules = [],
  width = 760,
  height = 420,
}) {
  const all = series.flatMap((s) => s.points);
  if (all.length === 0) throw new Error(`chart "${title}" has no points`);
  if (logY && all.some(([, y]) => !(y > 0)))
    throw new Error(`chart "${title}": a log axis needs every y > 0`);

  // Layout: title (and subtitle) on top, legend on the right, axis labels outside the plot area.
  const legendWidth = 24 + 7.2 * Math.max(...series.map((s) => s.name.length)) + 16;
  const margin = { top: description ? 64 : 46, right: legendWidth + 20, bottom: 56, left: 76 };
  const plotWidth = width - margin.left - margin.right;
  const plotHeight = height - margin.top - margin.bottom;

  const xs = all.map(([x]) => x);
  const ys = [...all.map(([, y]) => y), ...rules.map((rule) => rule.y)];
  const x = linearTicks(Math.min(...xs), Math.max(...xs), 8);
  const xLow = Math.min(...xs);
  const xHigh = Math.max(...xs);
  const xTicks = x.ticks.filter((t) => t >= xLow && t <= xHigh);

  const y = logY ? logTicks(Math.min(...ys), Math.max(...ys)) : linearTicks(yMin ?? 0, Math.max(...ys), 6);
  const yLow = y.ticks[0];
  const yHigh = y.ticks.at(-1);

  const px = (value) => margin.left + ((value - xLow) / (xHigh - xLow || 1)) * plotWidth;
  const py = logY
    ? (value) =>
        margin.top +
        plotHeight -
        ((Math.log10(value) - Math.log10(yLow)) / (Math.log10(yHigh) - Math.log10(yLow) || 1)) * plotHeight
    : (value) => margin.top + plotHeight - ((value - yLow) / (yHigh - yLow || 1)) * plotHeight;
  const r = (n) => Math.round(n * 10) / 10;

  const out = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-labelledby="title desc" ${FONT}>`,
    `<title id="title">${escapeXml(title)}</title>`,
    `<desc id="desc">${escapeXml(description ?? `${yLabel} against ${xLabel}`)}</desc>`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="${margin.left}" y="26" font-size="16" font-weight="600" fill="${TEXT}">${escapeXml(title)}</text>`,
  );
  if (description) {
    out.push(
      `<text x="${margin.left}" y="46" font-size="12" fill="${MUTED}">${escapeXml(description)}</text>`,
    );
  }

  // Shaded x ranges, under everything else.
  for (const range of ranges) {
    const from = px(Math.max(xLow, range.from));
    const to = px(Math.min(xHigh, range.to));
    out.push(
      `<rect x="${r(from)}" y="${margin.top}" width="${r(to - from)}" height="${plotHeight}" fill="#9a6700" fill-opacity="0.12"/>`,
      `<text x="${r((from + to) / 2)}" y="${margin.top + 14}" font-size="12" text-anchor="middle" fill="${TEXT}">${escapeXml(range.label)}</text>`,
    );
  }

  // Grid lines and tick labels.
  for (const tick of y.ticks) {
    const at = r(py(tick));
    out.push(
      `<line x1="${margin.left}" y1="${at}" x2="${margin.left + plotWidth}" y2="${at}" stroke="${GRID}" stroke-width="1"/>`,
      `<text x="${margin.left - 8}" y="${at + 4}" font-size="12" text-anchor="end" fill="${TEXT}">${tickLabel(tick, logY ? Math.min(1, tick) : y.step)}</text>`,
    );
  }
  for (const tick of xTicks) {
    const at = r(px(tick));
    out.push(
      `<line x1="${at}" y1="${margin.top + plotHeight}" x2="${at}" y2="${margin.top + plotHeight + 5}" stroke="${TEXT}" stroke-width="1"/>`,
      `<text x="${at}" y="${margin.top + plotHeight + 20}" font-size="12" text-anchor="middle" fill="${TEXT}">${tickLabel(tick, x.step)}</text>`,
    );
  }

  // Horizontal reference lines, labelled at their right end.
  for (const rule of rules) {
    const at = r(py(rule.y));
    out.push(
      `<line x1="${margin.left}" y1="${at}" x2="${margin.left + plotWidth}" y2="${at}" stroke="${MUTED}" stroke-width="1.2" stroke-dasharray="3 3"/>`,
      `<text x="${margin.left + plotWidth - 4}" y="${at - 5}" font-size="12" text-anchor="end" fill="${TEXT}">${escapeXml(rule.label)}</text>`,
    );
  }

  // Axes and their labels.
  const bottom = margin.top + plotHeight;
  out.push(
    `<line x1="${margin.left}" y1="${bottom}" x2="${margin.left + plotWidth}" y2="${bottom}" stroke="${TEXT}" stroke-width="1.2"/>`,
    `<line x1="${margin.left}" y1="${margin.top}" x2="${margin.left}" y2="${bottom}" stroke="${TEXT}" stroke-width="1.2"/>`,
    `<text x="${margin.left + plotWidth / 2}" y="${height - 14}" font-size="13" text-anchor="middle" fill="${TEXT}">${escapeXml(xLabel)}</text>`,
    `<text transform="translate(18 ${margin.top + plotHeight / 2}) rotate(-90)" font-size="13" text-anchor="middle" fill="${TEXT}">${escapeXml(yLabel)}${logY ? ' (log scale)' : ''}</text>`,
  );

  // One polyline per series, then the legend.
  series.forEach((s, i) => {
    const style = STYLES[i % STYLES.length];
    const points = s.points.map(([px_, py_]) => `${r(px(px_))},${r(py(py_))}`).join(' ');
    const dash = style.dash ? ` stroke-dasharray="${style.dash}"` : '';
    out.push(
      `<polyline points="${points}" fill="none" stroke="${style.color}" stroke-width="2" stroke-linejoin="round"${dash}><title>${escapeXml(s.name)}</title></polyline>`,
    );
  });
  const legendX = margin.left + plotWidth + 20;
  series.forEach((s, i) => {
    const style = STYLES[i % STYLES.length];
    const at = margin.top + 8 + i * 22;
    const dash = style.dash ? ` stroke-dasharray="${style.dash}"` : '';
    out.push(
      `<line x1="${legendX}" y1="${at}" x2="${legendX + 24}" y2="${at}" stroke="${style.color}" stroke-width="2.5"${dash}/>`,
      `<text x="${legendX + 30}" y="${at + 4}" font-size="12" fill="${TEXT}">${escapeXml(s.name)}</text>`,
    );
  });

  out.push('</svg>');
  return `${out.join('\n')}\n`;
}
