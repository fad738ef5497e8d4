// Turns the raw results in bench/results/*.json into bench/RESULTS.md and the charts in
// bench/charts/*.svg. Every number, fact and ✓/✗ verdict in RESULTS.md is computed here from those
// files; a bench whose file is missing gets a "not measured yet" line instead of its section.
// Run: `node bench/report.mjs` (no build needed; `pnpm bench` runs every bench first, then this).
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { RESULTS_DIR } from './lib/results.mjs';
import { lineChart } from './lib/svg.mjs';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const CHARTS_DIR = fileURLToPath(new URL('./charts/', import.meta.url));
const REPORT_PATH = fileURLToPath(new URL('./RESULTS.md', import.meta.url));

/** Every bench, in the order `pnpm bench` runs them: its result file's name and how to run it alone. */
export const BENCHES = [
  { name: 'size', title: 'Bundle size', script: 'bench/size.mjs' },
  { name: 'decision', title: 'Decision cost', script: 'bench/decision.mjs' },
  { name: 'overhead', title: 'Happy-path overhead', script: 'bench/overhead.mjs' },
  { name: 'cpu-overhead', title: 'CPU per request', script: 'bench/cpu-overhead.mjs' },
  { name: 'soak', title: 'Soak', script: 'bench/soak.mjs', nodeFlags: ['--expose-gc'] },
  { name: 'herd', title: 'Thundering herd', script: 'bench/herd.mjs' },
  { name: 'storm', title: 'Retry storm', script: 'bench/storm.mjs' },
  { name: 'storm-real', title: 'Retry storm on a real server', script: 'bench/storm-real.mjs' },
  { name: 'overload', title: 'Overload (2× capacity)', script: 'bench/overload.mjs' },
  { name: 'balance', title: 'Endpoint balancing', script: 'bench/balance.mjs' },
  { name: 'hedge', title: 'Hedged requests', script: 'bench/hedge.mjs' },
  { name: 'redis-latency', title: 'Redis store latency', script: 'bench/redis-latency.mjs' },
  { name: 'viewer-render', title: 'Viewer render', script: 'bench/viewer-render.mjs' },
];

/** The targets of the performance contract that the report checks measured values against. */
const TARGETS = {
  overheadRatio: 1.03,
  cpuOverheadUs: 10,
  fetchMinGzipBytes: 4096,
  decisionNs: 1000,
  stormIncidentAmplification: 1.2,
  stormRecoveryMs: 2000,
  viewerKeystrokeMs: 100,
  // The closed-loop storm's five measures (Retryline defaults, worst seed).
  closedAmplification: 1.3,
  closedPeak: 1.55,
  closedSuccess: 0.995,
  closedP99Ms: 2500,
  closedRecoveryMs: 500,
  // Hedging at p95 (issue 24): p99 at least this many times lower, extra load within the budget ratio.
  hedgeP99Reduction: 3,
};

/**
 * The closed-loop storm's five measures: how to read each from a policy's row, whether lower is
 * better, the target for Retryline's defaults (worst seed), and how to show a value.
 */
const CLOSED_MEASURES = [
  {
    key: 'windowAmplification',
    title: 'amplification (4 s window)',
    lower: true,
    ok: (v) => v < TARGETS.closedAmplification,
    target: () => `< ${ratio(TARGETS.closedAmplification)}`,
    show: (v) => ratio(v),
  },
  {
    key: 'peakVsSteady',
    title: 'peak arrivals vs steady',
    lower: true,
    ok: (v) => v <= TARGETS.closedPeak,
    target: () => `≤ ${ratio(TARGETS.closedPeak)}`,
    show: (v) => ratio(v),
  },
  {
    key: 'successRate',
    title: 'success',
    lower: false,
    ok: (v) => v >= TARGETS.closedSuccess,
    target: () => `≥ ${percent(TARGETS.closedSuccess)}`,
    show: (v) => percent(v),
  },
  {
    key: 'p99Ms',
    title: 'p99',
    lower: true,
    ok: (v) => v <= TARGETS.closedP99Ms,
    target: () => `≤ ${ms(TARGETS.closedP99Ms, 0)}`,
    show: (v) => ms(v, 0),
  },
  {
    key: 'recoveredAfterMs',
    title: 'recovery after the stall',
    lower: true,
    ok: (v) => v !== null && v <= TARGETS.closedRecoveryMs,
    target: () => `≤ ${ms(TARGETS.closedRecoveryMs, 0)}`,
    show: (v) => (v === null ? 'never' : ms(v, 0)),
  },
];

/** A closed-loop measure's worst value over the seeds: the max, or the min where higher is better. */
const worstOf = (measure, policy) => {
  const metric = policy[measure.key];
  return measure.lower ? metric.max : metric.min;
};

/** Peer and tool versions worth pinning next to the numbers. */
const PEERS = ['axios', 'axios-retry', 'ky', 'cockatiel', 'p-retry', 'fetch-retry', 'esbuild'];

// --- Formatting --------------------------------------------------------------------------------

const number = (value, decimals = 0) =>
  value.toLocaleString('en-US', { minimumFractionDigits: decimals, maximumFractionDigits: decimals });
const bytes = (value) => `${number(value)} B`;
const ms = (value, decimals = 2) => `${number(value, decimals)} ms`;
const ns = (value) => `${number(value, 1)} ns`;
const us = (value) => `${number(value, 1)} µs`;
const plusUs = (value) => `${value >= 0 ? '+' : ''}${us(value)}`;
const nsTarget = `${number(TARGETS.decisionNs)} ns`;
const percent = (value) => `${number(value * 100, 1)} %`;
const verdict = (ok) => (ok ? '✓' : '✗');
const code = (text) => `\`${text}\``;
const date = (iso) => iso.replace('T', ' ').replace(/\.\d+Z$/, ' UTC');

/**
 * A ratio with two decimals — or three when two would print the very threshold it is compared with
 * (1.032 next to "≤ 1.03" must not read as 1.03 and fail).
 */
function ratio(value, threshold) {
  const two = value.toFixed(2);
  if (threshold !== undefined && two === threshold.toFixed(2) && value !== threshold) {
    return `${value.toFixed(3)}×`;
  }
  return `${two}×`;
}

/**
 * A Markdown table, laid out as the repository's formatter (Biome) lays tables out: every column
 * padded to its widest cell (at least 3), right-aligned columns padded on the left.
 */
function table(header, rows, align = header.map(() => 'left')) {
  const cells = [header, ...rows].map((row) =>
    row.map((value) => String(value ?? '').replaceAll('|', '\\|')),
  );
  const width = (text) => [...text].length;
  const widths = header.map((_, i) => Math.max(3, ...cells.map((row) => width(row[i]))));
  const pad = (text, i) => {
    const fill = ' '.repeat(widths[i] - width(text));
    return align[i] === 'right' ? fill + text : text + fill;
  };
  const rule = widths.map((w, i) => (align[i] === 'right' ? `${'-'.repeat(w - 1)}:` : '-'.repeat(w)));
  const line = (row) => `| ${row.join(' | ')} |`;
  const [head, ...body] = cells;
  return [line(head.map(pad)), line(rule), ...body.map((row) => line(row.map(pad)))].join('\n');
}

/** A soak (or any unknown) value as a table cell: numbers with separators, objects as compact JSON. */
function anyCell(value) {
  if (typeof value === 'number') {
    return Number.isInteger(value) ? number(value) : number(value, 2);
  }
  if (value === null || value === undefined) return '—';
  if (typeof value === 'object') return code(JSON.stringify(value));
  return String(value);
}

// --- Inputs ------------------------------------------------------------------------------------

function readResults() {
  const results = {};
  if (!existsSync(RESULTS_DIR)) return results;
  for (const file of readdirSync(RESULTS_DIR)
    .filter((f) => f.endsWith('.json'))
    .sort()) {
    results[file.slice(0, -'.json'.length)] = JSON.parse(readFileSync(`${RESULTS_DIR}${file}`, 'utf8'));
  }
  return results;
}

function readVersion(path) {
  try {
    return JSON.parse(readFileSync(path, 'utf8')).version;
  } catch {
    return undefined;
  }
}

function retrylineVersions() {
  const dir = `${ROOT}packages/`;
  return readdirSync(dir)
    .filter((name) => existsSync(`${dir}${name}/package.json`))
    .map((name) => JSON.parse(readFileSync(`${dir}${name}/package.json`, 'utf8')))
    .filter((pkg) => pkg.name?.startsWith('@retryline/'))
    .map((pkg) => [pkg.name, pkg.version])
    .sort(([a], [b]) => a.localeCompare(b));
}

// --- Charts ------------------------------------------------------------------------------------

// The herd's strategies as a reader knows them (the simulator's names are the jitter options').
const HERD_LABELS = {
  none: 'exponential, no jitter',
  full: 'full jitter',
  equal: 'equal jitter',
  decorrelated: 'decorrelated jitter',
  'no-backoff': 'no backoff',
};

function herdCharts(herd) {
  const strategies = [...new Set(herd.rows.map((row) => row.strategy))];
  const series = (field) =>
    strategies.map((strategy) => ({
      name: HERD_LABELS[strategy] ?? strategy,
      points: herd.rows.filter((row) => row.strategy === strategy).map((row) => [row.clients, row[field]]),
    }));
  return {
    'herd-calls.svg': lineChart({
      title: 'Thundering herd: total calls by number of clients',
      description: 'One versioned row, optimistic concurrency, seed 1; one line per backoff jitter strategy.',
      xLabel: 'clients',
      yLabel: 'total calls (read + write tries)',
      series: series('calls'),
    }),
    'herd-time.svg': lineChart({
      title: 'Thundering herd: time until the last client has written',
      description: 'Virtual time, seed 1; one line per backoff jitter strategy.',
      xLabel: 'clients',
      yLabel: 'completion time (ms)',
      series: series('completionMs'),
      logY: true,
    }),
  };
}

function stormChart(scenario) {
  const { stallAt, stallMs } = scenario.server;
  // Before the stall every policy sends each request once, so their lines lie on top of each other.
  const before = scenario.policies.map((p) =>
    JSON.stringify(p.timeline.filter((b) => b.t < stallAt).map((b) => b.sent)),
  );
  const overlap = before.every((line) => line === before[0])
    ? ' Before it, every policy sends the same and the lines coincide.'
    : '';
  return lineChart({
    title: `Retry storm, ${scenario.title}: attempts reaching the server`,
    description: `Attempts per 100 ms, seed 1; the stall shaded.${overlap}`,
    rules: [{ y: capacityPer100ms(scenario.server), label: 'what the server can serve' }],
    xLabel: 'time (s)',
    yLabel: 'attempts per 100 ms',
    series: scenario.policies.map((policy) => ({
      name: policy.policy,
      points: policy.timeline.map((bucket) => [bucket.t / 1000, bucket.sent]),
    })),
    ranges: [
      { from: stallAt / 1000, to: (stallAt + stallMs) / 1000, label: `${number(stallMs / 1000)} s stall` },
    ],
  });
}

const capacityPer100ms = ({ workers, serviceMs }) => (workers / serviceMs) * 100;

/** Scenario (a)'s chart keeps the plain name; any other scenario's is named after it. */
const stormChartFile = (scenario) =>
  scenario.id === 'timeouts-only' ? 'storm-load.svg' : `storm-${scenario.id}.svg`;

/** The closed-loop storm's chart: the one the README shows. */
const CLOSED_LOOP_CHART = 'storm-closed-loop.svg';

/**
 * The closed-loop policies grouped by their seed-1 timeline: policies whose attempts per bucket are
 * the same draw one line, named after the first.
 */
function closedLoopGroups(closed) {
  const groups = [];
  for (const policy of closed.policies.filter((p) => p.sentPerBucketSeed1)) {
    const key = JSON.stringify(policy.sentPerBucketSeed1);
    const group = groups.find((g) => g.key === key);
    if (group) group.names.push(policy.policy);
    else groups.push({ key, names: [policy.policy], sent: policy.sentPerBucketSeed1 });
  }
  return groups;
}

/** How long before the stall and after its end the closed-loop chart shows. */
const CLOSED_CHART_BEFORE_MS = 2_000;
const CLOSED_CHART_AFTER_MS = 4_000;

function closedLoopChart(closed) {
  const { stallAt, stallMs, clients } = closed.server;
  const from = stallAt - CLOSED_CHART_BEFORE_MS;
  const to = stallAt + stallMs + CLOSED_CHART_AFTER_MS;
  const groups = closedLoopGroups(closed);
  const alike = groups.some((g) => g.names.length > 1)
    ? ' "(+n alike)": as many other policies draw the same line.'
    : '';
  return lineChart({
    title: `Retry storm, closed loop (${number(clients)} clients): attempts reaching the server`,
    description: `Attempts per ${ms(closed.bucketMs, 0)}, seed 1, ${number(from / 1000)}–${number(to / 1000)} s; the stall shaded.${alike}`,
    rules: [{ y: capacityPer100ms(closed.server), label: 'what the server can serve' }],
    xLabel: 'time (s)',
    yLabel: `attempts per ${ms(closed.bucketMs, 0)}`,
    series: groups.map((group) => ({
      name: group.names.length > 1 ? `${group.names[0]} (+${group.names.length - 1} alike)` : group.names[0],
      points: group.sent
        .map((sent, i) => [(i * closed.bucketMs) / 1000, sent])
        .filter(([t]) => t * 1000 >= from && t * 1000 < to),
    })),
    ranges: [
      { from: stallAt / 1000, to: (stallAt + stallMs) / 1000, label: `${number(stallMs / 1000)} s stall` },
    ],
  });
}

// --- Sections ----------------------------------------------------------------------------------

function overheadSection(result) {
  const rows = result.rows;
  const checked = rows.filter(isAdapterRow);
  const lines = [
    `Median and 99th-percentile latency of one GET on loopback (${number(result.rounds)} interleaved rounds × ${number(result.perRound)} requests per variant), and the median's ratio to the same client without retries. Target: each Retryline adapter ≤ ${ratio(TARGETS.overheadRatio)} its bare client.`,
    '',
    table(
      ['variant', 'compared with', 'median', 'p99', 'ratio to bare', `≤ ${ratio(TARGETS.overheadRatio)}`],
      rows.map((row) => [
        row.variant,
        row.baseline ?? '—',
        ms(row.medianMs, 3),
        ms(row.p99Ms, 2),
        row.baseline ? ratio(row.ratioToBare, TARGETS.overheadRatio) : '—',
        checked.includes(row) ? verdict(row.ratioToBare <= TARGETS.overheadRatio) : '',
      ]),
      ['left', 'left', 'right', 'right', 'right', 'left'],
    ),
    '',
  ];
  for (const row of checked) {
    const base = rows.find((r) => r.variant === row.baseline);
    if (!base) continue;
    lines.push(
      `- ${row.variant}'s median is ${ratio(row.ratioToBare, TARGETS.overheadRatio)} ${base.variant}'s (${ms(row.medianMs, 3)} against ${ms(base.medianMs, 3)}, ${number((row.medianMs - base.medianMs) * 1000)} µs more per request).`,
    );
  }
  return lines;
}

// The CPU target: per request over the bare client ≤ +10 µs for fetch and ky; for axios, whose
// peer axios-retry is measured in the same run, no more than what axios-retry adds.
const CPU_PEER = { '@retryline/axios': 'axios + axios-retry' };

/** A Retryline adapter's CPU delta against its target: the absolute one, or its peer's delta. */
function cpuCheck(result, row) {
  const peer = result.rows.find((r) => r.variant === CPU_PEER[row.variant]);
  if (peer?.cpuDeltaUs) {
    return {
      target: `≤ ${peer.variant}'s (${plusUs(peer.cpuDeltaUs.median)})`,
      ok: row.cpuDeltaUs.median <= peer.cpuDeltaUs.median,
      peer,
    };
  }
  return { target: `≤ ${plusUs(TARGETS.cpuOverheadUs)}`, ok: row.cpuDeltaUs.median <= TARGETS.cpuOverheadUs };
}

const spreadText = ({ p25, p75 }) => `${plusUs(p25)} … ${plusUs(p75)}`;
const intervalText = ({ ci95 }) => (ci95 ? `${plusUs(ci95[0])} … ${plusUs(ci95[1])}` : '—');

/** Whether a median's 95 % interval lies on one side of `limit` (the run tells them apart) or not. */
const resolved = ({ ci95 }, limit) => !ci95 || ci95[0] > limit || ci95[1] <= limit;

function cpuOverheadSection(result) {
  const rows = result.rows;
  const floor = result.noiseFloor;
  const checked = rows.filter((row) => isAdapterRow(row) && row.cpuDeltaUs);
  const lines = [
    `CPU time (user + system) the client process spends on one sequential GET on loopback, reading the body, with the server in a child process (${number(result.rounds)} interleaved rounds × ${number(result.perRound)} requests per variant${result.slice ? `, in slices of ${number(result.slice)} taken in turn` : ''}). Δ is the median over rounds of a variant's CPU per request minus its bare client's in the same round; the 95 % interval of that median is a bootstrap over the rounds, and the 25th–75th percentiles show how much one round's Δ varies. The A/A pair (bare fetch against a copy of itself) is the noise floor; the main thread's Δ (Linux, without V8's helper threads) is context. Target: @retryline/fetch and @retryline/ky ≤ ${plusUs(TARGETS.cpuOverheadUs)}, @retryline/axios no more than axios-retry adds. Latency is context, not checked.`,
    '',
    table(
      [
        'variant',
        'compared with',
        'CPU per request',
        'Δ CPU',
        '95 % interval',
        'one round p25 … p75',
        'Δ main thread',
        'latency',
        'Δ latency',
        'target',
        '',
      ],
      rows.map((row) => {
        const check = checked.includes(row) ? cpuCheck(result, row) : undefined;
        return [
          row.variant,
          row.baseline ?? '—',
          us(row.cpuUsPerRequest.median),
          row.cpuDeltaUs ? plusUs(row.cpuDeltaUs.median) : '—',
          row.cpuDeltaUs ? intervalText(row.cpuDeltaUs) : '—',
          row.cpuDeltaUs ? spreadText(row.cpuDeltaUs) : '—',
          row.mainThreadDeltaUs ? plusUs(row.mainThreadDeltaUs.median) : '—',
          us(row.wallMedianUs),
          row.wallDeltaUs === null ? '—' : plusUs(row.wallDeltaUs),
          check?.target ?? (row.variant === floor?.variant ? 'noise floor (A/A)' : ''),
          check ? verdict(check.ok) : '',
        ];
      }),
      ['left', 'left', 'right', 'right', 'right', 'right', 'right', 'right', 'right', 'left', 'left'],
    ),
    '',
  ];
  if (floor) {
    lines.push(
      `- Noise floor: ${floor.variant} against ${floor.baseline}, the same code in another slot, differs by ${plusUs(floor.cpuDeltaUs.median)} (95 % interval ${intervalText(floor.cpuDeltaUs)}; one round's Δ ${spreadText(floor.cpuDeltaUs)}${floor.mainThreadDeltaUs ? `; main thread ${plusUs(floor.mainThreadDeltaUs.median)}` : ''}). A median Δ closer to a target than that interval's half-width is not resolved by this run.`,
    );
  }
  for (const row of checked) {
    const check = cpuCheck(result, row);
    const base = rows.find((r) => r.variant === row.baseline);
    const limit = check.peer ? check.peer.cpuDeltaUs.median : TARGETS.cpuOverheadUs;
    const against = check.peer ? `, ${check.peer.variant} ${plusUs(check.peer.cpuDeltaUs.median)}` : '';
    lines.push(
      `- ${row.variant} adds ${plusUs(row.cpuDeltaUs.median)} (95 % interval ${intervalText(row.cpuDeltaUs)}) of CPU per request to ${row.baseline}${base ? `'s ${us(base.cpuUsPerRequest.median)}` : ''}${against}; target ${check.target}: ${verdict(check.ok)}${resolved(row.cpuDeltaUs, limit) ? '' : ', but the interval straddles the target, so this run does not settle it'}.`,
    );
  }
  for (const pair of result.versus ?? []) {
    const side = resolved(pair.cpuDeltaUs, 0)
      ? `the interval lies ${pair.cpuDeltaUs.ci95?.[0] > 0 ? 'above' : 'at or below'} zero`
      : 'the interval straddles zero';
    lines.push(
      `- Round by round, ${pair.variant} minus ${pair.against}: ${plusUs(pair.cpuDeltaUs.median)} (95 % interval ${intervalText(pair.cpuDeltaUs)}: ${side}${pair.mainThreadDeltaUs ? `; main thread ${plusUs(pair.mainThreadDeltaUs.median)}` : ''}).`,
    );
  }
  if (result.loadAverage1m) {
    lines.push(
      `- Load average (1 min) ${number(result.loadAverage1m.before, 2)} before the run and ${number(result.loadAverage1m.after, 2)} after, on ${number(result.machine?.cores ?? 0)} cores; the run took ${number(result.seconds ?? 0)} s.`,
    );
  }
  return lines;
}

function sizeSection(result) {
  const rows = result.rows;
  const fetchRow = rows.find((row) => row.name.startsWith('@retryline/fetch'));
  const lines = [
    `Minified and min+gzip bytes of what an application ships after bundling and tree-shaking, next to the peer libraries. Target: @retryline/fetch ≤ ${bytes(TARGETS.fetchMinGzipBytes)} min+gzip; the budget column is the repository's own size budget.`,
    '',
    table(
      ['entry point', 'kind', 'minified', 'min+gzip', 'budget', 'within budget', 'note'],
      rows.map((row) => [
        row.name,
        row.kind,
        bytes(row.minBytes),
        bytes(row.gzipBytes),
        row.budgetBytes == null ? '—' : bytes(row.budgetBytes),
        row.budgetBytes == null ? '' : verdict(row.gzipBytes <= row.budgetBytes),
        row.note ?? '',
      ]),
      ['left', 'left', 'right', 'right', 'right', 'left', 'left'],
    ),
    '',
  ];
  if (fetchRow) {
    lines.push(
      `- ${fetchRow.name} is ${bytes(fetchRow.gzipBytes)} min+gzip, ${ratio(fetchRow.gzipBytes / TARGETS.fetchMinGzipBytes)} the ${bytes(TARGETS.fetchMinGzipBytes)} target: ${verdict(fetchRow.gzipBytes <= TARGETS.fetchMinGzipBytes)}.`,
    );
  }
  const peers = rows.filter((row) => row.kind === 'peer');
  if (peers.length > 0) {
    const smallest = peers.reduce((a, b) => (b.gzipBytes < a.gzipBytes ? b : a));
    const largest = peers.reduce((a, b) => (b.gzipBytes > a.gzipBytes ? b : a));
    lines.push(
      `- The peers range from ${bytes(smallest.gzipBytes)} (${smallest.name}) to ${bytes(largest.gzipBytes)} (${largest.name}) min+gzip.`,
    );
  }
  // The breakdown is a list of modules, or an object holding one; either way, the largest first.
  const breakdown = result.breakdown;
  const modules = Array.isArray(breakdown) ? breakdown : breakdown?.modules;
  if (Array.isArray(modules) && modules.length > 0) {
    const top = [...modules].sort((a, b) => b.bytes - a.bytes).slice(0, 12);
    const total = modules.reduce((sum, m) => sum + m.bytes, 0);
    lines.push(
      '',
      `Where ${breakdown?.name ?? '@retryline/fetch'}'s minified bytes come from (the ${top.length} largest of ${modules.length} modules, ${bytes(total)} in all):`,
      '',
      table(
        ['module', 'minified', 'share'],
        top.map((m) => [code(m.path), bytes(m.bytes), percent(m.bytes / total)]),
        ['left', 'right', 'right'],
      ),
    );
  }
  return lines;
}

// Rows that measure the harness or per-request (not per-attempt) work are shown for context only.
// The performance contract's overhead target is for the adapters as they ship; a variant with
// something added (tracing) is shown for its cost, not checked.
const isAdapterRow = (row) => row.variant.startsWith('@retryline/') && !row.variant.includes('+');

const isContextRow = (operation) => /^empty loop|^per request|^per client/i.test(operation);

function decisionSection(result) {
  const rows = result.rows;
  const hasRange = rows.some((row) => row.minNs !== undefined && row.maxNs !== undefined);
  const header = [
    'operation',
    'ns per call',
    ...(hasRange ? ['fastest run', 'slowest run'] : []),
    `< ${nsTarget}`,
  ];
  const lines = [
    `Nanoseconds per call of Retryline's per-attempt decision on the built core (median over ${number(result.runs ?? 0)} runs${result.iterationsPerRun ? ` of ${number(result.iterationsPerRun)} calls` : ''}). Target: < ${nsTarget} per decision; rows for the harness itself and for per-request work are context, not checked.`,
    '',
    table(
      header,
      rows.map((row) => [
        row.operation,
        ns(row.nsPerCall),
        ...(hasRange
          ? [row.minNs === undefined ? '—' : ns(row.minNs), row.maxNs === undefined ? '—' : ns(row.maxNs)]
          : []),
        isContextRow(row.operation) ? 'context' : verdict(row.nsPerCall < TARGETS.decisionNs),
      ]),
      header.map((_, i) => (i === 0 || i === header.length - 1 ? 'left' : 'right')),
    ),
    '',
  ];
  const checked = rows.filter((row) => !isContextRow(row.operation));
  const under = checked.filter((row) => row.nsPerCall < TARGETS.decisionNs);
  if (checked.length > 0) {
    const slowest = checked.reduce((a, b) => (b.nsPerCall > a.nsPerCall ? b : a));
    lines.push(
      `- ${under.length} of ${checked.length} per-attempt operations take under ${nsTarget}; the slowest is “${slowest.operation}” at ${ns(slowest.nsPerCall)}.`,
    );
  }
  if (result.note) lines.push(`- Method: ${result.note}`);
  return lines;
}

const RESERVED = new Set(['name', 'measuredAt', 'machine', 'command', 'rows']);

function soakSection(result) {
  const rows = Array.isArray(result.rows) ? result.rows : [];
  const keys = [...new Set(rows.flatMap((row) => Object.keys(row)))];
  const lines = [];
  const settings = Object.entries(result).filter(
    ([key, value]) => !RESERVED.has(key) && (typeof value !== 'object' || value === null),
  );
  if (settings.length > 0) {
    lines.push(settings.map(([key, value]) => `${code(key)}: ${anyCell(value)}`).join(' · '), '');
  }
  if (rows.length > 0) {
    // One column per row (its first field names it, e.g. the adapter) and one line per other field:
    // soak rows carry many fields and few rows, so this reads better than one wide line per row.
    const [label, ...fields] = keys;
    lines.push(
      table(
        [label, ...rows.map((row) => anyCell(row[label]))],
        fields.map((field) => [code(field), ...rows.map((row) => anyCell(row[field]))]),
        ['left', ...rows.map(() => 'right')],
      ),
    );
  } else {
    lines.push('_The soak result has no rows._');
  }
  for (const [key, value] of Object.entries(result)) {
    if (RESERVED.has(key) || typeof value !== 'object' || value === null) continue;
    lines.push('', `${code(key)}: ${code(JSON.stringify(value))}`);
  }
  return lines;
}

function herdSection(herd) {
  const strategies = [...new Set(herd.rows.map((row) => row.strategy))];
  const counts = [...new Set(herd.rows.map((row) => row.clients))];
  const at = (clients, strategy) => herd.rows.find((r) => r.clients === clients && r.strategy === strategy);
  const focus = counts.includes(100) ? 100 : counts.at(-1);
  const full = at(focus, 'full');
  const { seed1, min, max, bySeed } = herd.ratioAt100;
  const seeds = bySeed?.map((s) => s.seed) ?? [];
  const lines = [
    "Marc Brooker's thundering herd in virtual time: N clients start together and contend for one versioned row with optimistic concurrency (read, then a conditional write; a conflict backs off with Retryline's `computeDelay` and tries again). Seed 1 unless stated.",
    '',
    `At ${focus} clients:`,
    '',
    table(
      ['strategy', 'total calls', 'calls vs full jitter', 'completion time'],
      strategies.map((strategy) => {
        const row = at(focus, strategy);
        return [
          strategy,
          number(row.calls),
          full ? ratio(row.calls / full.calls) : '—',
          ms(row.completionMs, 0),
        ];
      }),
      ['left', 'right', 'right', 'right'],
    ),
    '',
  ];
  const none = at(focus, 'none');
  if (none && full) {
    lines.push(
      `- No jitter uses ${ratio(seed1)} the calls of full jitter at 100 clients (seed 1; ${ratio(min)}–${ratio(max)} over seeds ${seeds[0]}–${seeds.at(-1)}).`,
    );
  }
  const rowsAtFocus = strategies.map((strategy) => at(focus, strategy));
  const fewest = rowsAtFocus.reduce((a, b) => (b.calls < a.calls ? b : a));
  const fastest = rowsAtFocus.reduce((a, b) => (b.completionMs < a.completionMs ? b : a));
  lines.push(`- Fewest calls at ${focus} clients: ${fewest.strategy} (${number(fewest.calls)}).`);
  lines.push(
    `- First to finish at ${focus} clients: ${fastest.strategy} (${ms(fastest.completionMs, 0)}), with ${full ? ratio(fastest.calls / full.calls) : number(fastest.calls)}${full ? ' the calls of full jitter' : ' calls'}.`,
  );
  lines.push(
    '',
    'Total calls by number of clients:',
    '',
    table(
      ['clients', ...strategies],
      counts.map((clients) => [number(clients), ...strategies.map((s) => number(at(clients, s).calls))]),
      ['right', ...strategies.map(() => 'right')],
    ),
    '',
    '![Total calls by number of clients, one line per strategy](charts/herd-calls.svg)',
    '',
    '![Completion time by number of clients, one line per strategy, log scale](charts/herd-time.svg)',
  );
  return lines;
}

/** "seed 1 (min–max)" for one storm metric; `null` (no recovery within the run) reads "not within the run". */
function stormCell(metric, format) {
  const show = (value) => (value === null ? 'not within the run' : format(value));
  if (metric.min === metric.seed1 && metric.max === metric.seed1) return show(metric.seed1);
  return `${show(metric.seed1)} (${show(metric.min)}–${show(metric.max)})`;
}

/** Retryline defaults against the storm targets, worst case over all seeds. */
function stormVerdicts(policy) {
  const amplification = policy.incidentAmplification.max;
  const recovery = policy.recoveredAfterMs.max;
  return {
    amplification: amplification < TARGETS.stormIncidentAmplification,
    recovery: recovery !== null && recovery <= TARGETS.stormRecoveryMs,
  };
}

function stormSection(storm) {
  const tail =
    storm.incidentTailMs === undefined ? 'some seconds' : `${number(storm.incidentTailMs / 1000)} s`;
  const lines = [
    `${describeServer(storm.scenarios[0].server)} Each policy sees the same arrivals. Incident amplification is attempts per first attempt of the requests that arrived during the stall and the ${tail} after it; recovery is how long after the stall's end the backlog cleared (every request a worker starts had waited under a quarter of the timeout). Each cell: seed 1, then (min–max) over all seeds when they differ. Targets for Retryline defaults (worst seed): incident amplification < ${ratio(TARGETS.stormIncidentAmplification)}, recovery ≤ ${ms(TARGETS.stormRecoveryMs, 0)}.`,
  ];
  storm.scenarios.forEach((scenario, index) => {
    const letter = String.fromCharCode(97 + index);
    const chart = stormChartFile(scenario);
    const seeds = scenario.seeds;
    lines.push(
      '',
      `### (${letter}) ${scenario.title}`,
      '',
      `${scenario.server.queueLimit == null ? 'Unbounded queue.' : `The server answers 503 at once while ${number(scenario.server.queueLimit)} requests are queued (${ms((scenario.server.queueLimit / scenario.server.workers) * scenario.server.serviceMs, 0)} of work).`} Seeds ${seeds.from}–${seeds.to}.`,
      '',
      table(
        [
          'policy',
          'incident amplification',
          'recovery after stall',
          'success rate',
          'wasted work',
          'peak queue',
          'seed 1 failures',
        ],
        scenario.policies.map((policy) => {
          const isDefault = policy.policy === 'Retryline defaults';
          const checks = isDefault ? stormVerdicts(policy) : undefined;
          return [
            policy.policy,
            `${stormCell(policy.incidentAmplification, (v) => ratio(v, checks && TARGETS.stormIncidentAmplification))}${checks ? ` ${verdict(checks.amplification)}` : ''}`,
            `${stormCell(policy.recoveredAfterMs, (v) => ms(v, 0))}${checks ? ` ${verdict(checks.recovery)}` : ''}`,
            stormCell(policy.successRate, percent),
            stormCell(policy.wasted, number),
            stormCell(policy.peakQueue, number),
            Object.entries(policy.failuresSeed1 ?? {})
              .map(([kind, count]) => `${kind} ${number(count)}`)
              .join(', ') || '—',
          ];
        }),
        ['left', 'right', 'right', 'right', 'right', 'right', 'left'],
      ),
      '',
      ...stormFacts(scenario),
      '',
      `![Attempts reaching the server per 100 ms, one line per policy, ${scenario.title}](charts/${chart})`,
    );
  });
  if (storm.openHealthy) lines.push('', ...openHealthyLines(storm.openHealthy, storm.scenarios[0]?.seeds));
  if (storm.closedLoop) lines.push(...closedLoopLines(storm.closedLoop));
  return lines;
}

/** The open loop without a stall: every request should succeed; the policies whose requests did not. */
function openHealthyLines(healthy, seeds) {
  const failing = healthy.policies.filter((p) => p.failed.max > 0);
  const range = seeds ? `seeds ${seeds.from}–${seeds.to}` : 'every seed';
  if (failing.length === 0) {
    return [`Without the stall (the server of (a), ${range}), every request of every policy succeeds.`];
  }
  const facts = failing.map((p) => {
    const kinds = Object.entries(p.failuresSeed1 ?? {})
      .map(([kind, count]) => `${kind} ${number(count)}`)
      .join(', ');
    return `- ${p.policy}: ${stormCell(p.failed, number)} of its ${stormCell(p.logicalRequests, number)} requests failed (seed 1: ${kinds || 'none'}).`;
  });
  const others = healthy.policies.filter((p) => p.failed.max === 0).map((p) => p.policy);
  return [
    `Without the stall (the server of (a), ${range}; seed 1, then (min–max)), ${others.length > 0 ? `every request of ${others.join(', ')} succeeds; not so:` : 'requests fail:'}`,
    '',
    ...facts,
  ];
}

/** The closed-loop storm: the issue's five measures, the peers beside Retryline, and the lower bounds. */
function closedLoopLines(closed) {
  const { server } = closed;
  const capacity = (server.workers / server.serviceMs) * 1000;
  const defaults = closed.policies.find((p) => p.policy === 'Retryline defaults');
  const lines = [
    '',
    `### (${String.fromCharCode(97 + 2)}) ${closed.title}`,
    '',
    `${number(server.clients)} clients in a closed loop: each sends a request, waits for it to settle (retries included), thinks for an exponential time of mean ${ms(server.thinkMs, 0)} and sends the next, so about 60 % of the capacity of ${number(server.workers)} workers at ${ms(server.serviceMs, 0)} a request (${number(capacity)} req/s). The server stalls for ${number(server.stallMs / 1000)} s at t = ${number(server.stallAt / 1000)} s, every attempt times out after ${ms(server.timeoutMs, 0)}, and abandoned requests are still served. Amplification: attempts per request of the requests whose first attempt reached the server in the ${number(closed.windowMs / 1000)} s from the stall's start; peak: the most attempts in ${ms(closed.bucketMs, 0)} from the stall on over the steady mean before it; success and p99 over every request; recovery as above. Seeds ${closed.seeds.from}–${closed.seeds.to}; each cell seed 1, then (min–max).`,
    '',
    table(
      ['policy', ...CLOSED_MEASURES.map((m) => m.title), 'wasted work'],
      closed.policies.map((policy) => [
        policy.policy,
        ...CLOSED_MEASURES.map((m) => {
          const cell = stormCell(policy[m.key], m.show);
          return policy === defaults ? `${cell} ${verdict(m.ok(worstOf(m, policy)))}` : cell;
        }),
        stormCell(policy.wasted, number),
      ]),
      ['left', ...CLOSED_MEASURES.map(() => 'right'), 'right'],
    ),
    '',
  ];
  if (defaults) {
    lines.push(
      `- Targets for Retryline defaults, worst seed: ${CLOSED_MEASURES.map((m) => `${m.title} ${m.target()} (${m.show(worstOf(m, defaults))} ${verdict(m.ok(worstOf(m, defaults)))})`).join('; ')}.`,
    );
    // Peers whose requests mostly fail are not better for sending less or failing sooner: the
    // comparison is with the peers that get the stalled requests through too.
    const peers = closed.policies.filter(
      (p) => !p.policy.startsWith('Retryline') && p.successRate.seed1 >= TARGETS.closedSuccess,
    );
    const ahead = CLOSED_MEASURES.map((m) => {
      const mine = defaults[m.key].seed1 ?? Number.POSITIVE_INFINITY;
      const better = peers.filter((p) => {
        const theirs = p[m.key].seed1 ?? Number.POSITIVE_INFINITY;
        return m.lower ? theirs < mine : theirs > mine;
      });
      return better.length === 0
        ? `${m.title}: no peer ahead`
        : `${m.title}: behind ${better.map((p) => `${p.policy} (${m.show(p[m.key].seed1)})`).join(', ')}`;
    });
    lines.push(
      `- Against the peers that reach ${percent(TARGETS.closedSuccess)} success too (${peers.map((p) => p.policy).join(', ')}), seed 1: ${ahead.join('; ')}.`,
    );
    if (defaults.amplificationBound) {
      lines.push(
        `- The limit this scenario allows, with Retryline's arrivals: amplification ≥ ${ratio(defaults.amplificationBound.seed1)} (a first attempt sent before the stall's last ${ms(server.timeoutMs - server.serviceMs, 0)} times out before any worker can start it, so its request needs one more attempt) and p99 ≥ ${ms(defaults.p99BoundMs.seed1, 0)} (nothing is served during the stall, so a request started in it waits at least until it ends); Retryline's defaults reach ${ratio(defaults.windowAmplification.seed1)} and ${ms(defaults.p99Ms.seed1, 0)}.`,
      );
    }
    lines.push(...closedThrottleFacts(closed, defaults));
  }
  if (closed.policies.some((p) => p.sentPerBucketSeed1)) {
    const alike = closedLoopGroups(closed).filter((g) => g.names.length > 1);
    lines.push(
      '',
      `![Attempts reaching the server per ${ms(closed.bucketMs, 0)} around the stall, closed loop, one line per policy](charts/${CLOSED_LOOP_CHART})`,
    );
    if (alike.length > 0) {
      lines.push(
        '',
        `Drawn as one line (the same attempts in every ${ms(closed.bucketMs, 0)}, seed 1): ${alike.map((g) => g.names.join(', ')).join('; ')}.`,
      );
    }
  }
  return lines;
}

/**
 * Retryline with adaptive throttling in the closed loop, beside Retryline's defaults, and what it
 * does on the same loop without a stall (`closed.healthy`).
 */
function closedThrottleFacts(closed, defaults) {
  const throttled = closed.policies.find((p) => p.policy === 'Retryline + throttle');
  if (!throttled) return [];
  const figures = (p) => CLOSED_MEASURES.map((m) => `${m.title} ${m.show(p[m.key].seed1)}`).join(', ');
  const lines = [
    `- Retryline + throttle (\`adaptiveThrottle()\` on top of the defaults), seed 1: ${figures(throttled)}; Retryline's defaults: ${figures(defaults)}.`,
  ];
  const refused = throttled.failuresSeed1?.ThrottledError ?? 0;
  lines.push(
    refused > 0
      ? `- Its ${number(refused)} requests that failed with ThrottledError (seed 1) were refused during the stall. The throttle is for sustained overload: see [Overload](#overload-2-capacity).`
      : '- It refuses nothing here: its counts cover two minutes, and the seconds of successes before the stall outweigh the failures in it (it refuses only once requests pass k = 2 × accepts). The throttle is for sustained overload: see [Overload](#overload-2-capacity).',
  );
  return lines;
}

function describeServer({ workers, serviceMs, ratePerSecond, timeoutMs, stallAt, stallMs, durationMs }) {
  const capacity = (workers / serviceMs) * 1000;
  return `The server: ${number(workers)} workers at ${ms(serviceMs, 0)} a request serve ${number(capacity)} req/s, and ${number(ratePerSecond)} req/s arrive for ${number(durationMs / 1000)} s whatever happens (${percent(ratePerSecond / capacity)} utilisation). The database behind it stalls for ${number(stallMs / 1000)} s at t = ${number(stallAt / 1000)} s; every attempt times out after ${ms(timeoutMs, 0)}, and the server still serves abandoned requests (wasted work).`;
}

function stormFacts(scenario) {
  const facts = [];
  const byName = (name) => scenario.policies.find((p) => p.policy === name);
  const defaults = byName('Retryline defaults');
  if (defaults) {
    const { amplification, recovery } = stormVerdicts(defaults);
    const worstRecovery = defaults.recoveredAfterMs.max;
    facts.push(
      `- Retryline defaults: incident amplification at most ${ratio(defaults.incidentAmplification.max, TARGETS.stormIncidentAmplification)} over all seeds (target < ${ratio(TARGETS.stormIncidentAmplification)}: ${verdict(amplification)}); the backlog cleared ${worstRecovery === null ? 'not within the run for at least one seed' : `at most ${ms(worstRecovery, 0)} after the stall`} (target ≤ ${ms(TARGETS.stormRecoveryMs, 0)}: ${verdict(recovery)}).`,
    );
  }
  for (const policy of scenario.policies) {
    if (policy.recoveredAfterMs.seed1 === null) {
      facts.push(
        `- ${policy.policy}: the backlog never cleared before arrivals stopped (seed 1); ${ratio(policy.incidentAmplification.seed1)} attempts per request during the incident, ${percent(policy.successRate.seed1)} of requests succeeded.`,
      );
    }
  }
  for (const policy of scenario.policies) {
    const failures = Object.entries(policy.failuresSeed1 ?? {});
    const [kind, count] = failures.reduce((a, b) => (b[1] > a[1] ? b : a), ['', 0]);
    const total = policy.timeline.reduce((sum, b) => sum + b.sent, 0);
    const stallEnd = scenario.server.stallAt + scenario.server.stallMs;
    const sentAfter = policy.timeline.filter((b) => b.t >= stallEnd).reduce((sum, b) => sum + b.sent, 0);
    if (kind === 'CircuitOpenError' && sentAfter === 0 && total > 0) {
      facts.push(
        `- ${policy.policy}: the breaker opened during the stall and let no attempt through from the stall's end until arrivals stopped (seed 1: ${number(count)} requests failed fast with ${kind}).`,
      );
    }
  }
  return facts;
}

/** The closed-loop storm on a loopback server in real time, through each adapter and the peers' code. */
function stormRealSection(result) {
  const s = result.scenario;
  const lines = [
    `The closed-loop storm above, on a real server: a child process on 127.0.0.1 with a FIFO queue in front of ${number(s.workers)} workers holding a request ${ms(s.serviceMs, 0)} each (${number(s.capacityPerSecond)} req/s), stalled for ${number(s.stallMs / 1000)} s at t = ${number(s.stallAt / 1000)} s, and ${number(s.clients)} closed-loop clients (think time Exp(${ms(s.thinkMs, 0)}), seed ${s.seed}) in this process for ${number(s.durationMs / 1000)} s, one run per policy, each through the library's real code with a ${ms(s.timeoutMs, 0)} per-attempt timeout. The measures are the simulator's; real time adds noise (timers, two processes on ${number(result.machine.cores)} cores): steady load is the share of capacity the clients actually offered, and a client that needs more CPU per request offers less.`,
    '',
    table(
      [
        'policy',
        'steady load',
        ...CLOSED_MEASURES.map((m) => m.title),
        'peak bucket at (retries in it)',
        'wasted work',
        'CPU µs / attempt',
      ],
      result.policies.map((policy) => {
        const mine = policy.policy.startsWith('@retryline');
        return [
          policy.policy,
          percent(policy.steadyLoad),
          ...CLOSED_MEASURES.map(
            (m) => `${m.show(policy[m.key])}${mine ? ` ${verdict(m.ok(policy[m.key]))}` : ''}`,
          ),
          `${number(policy.peakAtMs / 1000, 1)} s (${number(policy.peakRetries)} of ${number(policy.peakPerBucket)})`,
          number(policy.wasted),
          number(policy.clientCpuUsPerAttempt),
        ];
      }),
      ['left', 'right', ...CLOSED_MEASURES.map(() => 'right'), 'right', 'right', 'right'],
    ),
    '',
    `- Targets for Retryline's defaults through each adapter: ${CLOSED_MEASURES.map((m) => `${m.title} ${m.target()}`).join(', ')}. Peak arrivals is the noisiest measure: the largest of about a hundred 100 ms buckets against their mean, which puts even the runs without retries at 1.2–1.5×; the peak bucket's time and how many of its attempts were retries say whether retries made it (the stall ends at ${number((s.stallAt + s.stallMs) / 1000)} s).`,
  ];
  return lines;
}

// --- Endpoints and hedging ---------------------------------------------------------------------

const maybeMs = (value, decimals = 2) => (value === null || value === undefined ? '—' : ms(value, decimals));
const signedMs = (value) =>
  Number.isFinite(value) ? `${value >= 0 ? '+' : '−'}${ms(Math.abs(value), 2)}` : '—';
const maybePercent = (value) => (Number.isFinite(value) ? percent(value) : '—');
const maybeRatio = (value) => (Number.isFinite(value) ? ratio(value) : '—');

/**
 * How quiet the machine was: the client process's CPU and event-loop delay over the measured rounds,
 * the servers' timer lateness and the load average. A client near a full core, or a loop running
 * tens of ms late, puts its own queue into every latency above.
 */
function noiseLine(result) {
  const lateness = Object.values(result.serverTimerLatenessMs);
  const client = result.client
    ? `This process used ${maybePercent(result.client.cpuShareOfOneCore)} of a core over the measured rounds and its event loop ran late by ${ms(result.client.loopDelayMs.p99, 1)} at p99 (${ms(result.client.loopDelayMs.max, 1)} at most); `
    : '';
  return `- ${client}server timers ran late by ${ms(Math.max(...lateness.map((l) => l.p99)), 1)} at p99 (${ms(Math.max(...lateness.map((l) => l.max)), 1)} at most); load average (1 min) ${number(result.loadAverage1m.before, 2)} before, ${number(result.loadAverage1m.after, 2)} after, on ${number(result.machine.cores)} cores.`;
}

function balanceSection(result) {
  const s = result.setup;
  const rows = result.rows;
  const lines = [
    `Three loopback endpoints in a child process, \`a\` and \`b\` answering after ${ms(s.baseMs, 0)} and \`slow\` after ${ms(s.baseMs * s.slowFactor, 0)} (each ± ${number(s.spread * 100)} %, a timer per request: no errors, no capacity limit), and one \`retryFetch(fetch, { endpoints: failover([a, b, slow], { balance }) })\` client per row sending \`GET /ok\` through ${number(s.lanes)} lanes (${number(s.lanes)} requests always outstanding). ${number(s.rounds)} interleaved rounds × ${number(s.perRound)} requests per row, after ${number(s.warmUp)} warm-up requests each; seed ${s.seed}. Latency is from the call to the body read; the shares are counted by the servers. The two two-choices rows are identical clients (A/A): their difference is the noise floor. Context, no target.`,
    '',
    table(
      [
        'balance',
        'p50',
        'p95',
        'p99',
        'p99.9',
        "slow endpoint's share",
        'share per round (min … max)',
        'a / b',
        'attempts per request',
      ],
      rows.map((row) => [
        row.variant,
        maybeMs(row.latencyMs.p50),
        maybeMs(row.latencyMs.p95),
        maybeMs(row.latencyMs.p99),
        maybeMs(row.latencyMs.p999),
        maybePercent(row.share.slow),
        `${maybePercent(row.slowShareRounds.min)} … ${maybePercent(row.slowShareRounds.max)}`,
        `${maybePercent(row.share.a)} / ${maybePercent(row.share.b)}`,
        number(row.attemptsPerRequest, 3),
      ]),
      ['left', 'right', 'right', 'right', 'right', 'right', 'right', 'right', 'right'],
    ),
    '',
  ];
  const byId = (id) => rows.find((row) => row.id === id);
  const [mine, copy, robin] = ['two-choices', 'two-choices-copy', 'round-robin'].map(byId);
  if (mine && copy) {
    lines.push(
      `- Noise floor (A/A): the copy differs by ${['p50', 'p95', 'p99'].map((q) => `${signedMs(copy.latencyMs[q] - mine.latencyMs[q])} at ${q}`).join(', ')}, and by ${(copy.share.slow - mine.share.slow) >= 0 ? '+' : '−'}${number(Math.abs(copy.share.slow - mine.share.slow) * 100, 1)} points in the slow endpoint's share.`,
    );
  }
  if (mine && robin) {
    lines.push(
      `- two-choices sends the slow endpoint ${maybePercent(mine.share.slow)} of requests against round-robin's ${maybePercent(robin.share.slow)}; p95 ${maybeMs(mine.latencyMs.p95)} against ${maybeMs(robin.latencyMs.p95)}, p99 ${maybeMs(mine.latencyMs.p99)} against ${maybeMs(robin.latencyMs.p99)}.`,
    );
  }
  const retried = rows.filter((row) => row.attemptsPerRequest > 1);
  const failed = rows.filter((row) => Object.keys(row.errors ?? {}).length > 0);
  if (retried.length > 0 || failed.length > 0) {
    lines.push(
      `- Not every request went through on its first attempt: ${[
        ...retried.map((row) => `${row.variant} ${number(row.attemptsPerRequest, 3)} attempts per request`),
        ...failed.map(
          (row) =>
            `${row.variant} failed ${Object.entries(row.errors)
              .map(([name, n]) => `${number(n)} × ${name}`)
              .join(', ')}`,
        ),
      ].join('; ')}.`,
    );
  }
  lines.push(noiseLine(result));
  return lines;
}

/** A hedged row against its target: p99 at least TARGETS.hedgeP99Reduction× lower, extra load ≤ the budget ratio. */
const hedgeOk = (row, ratioLimit) =>
  row.p99Reduction >= TARGETS.hedgeP99Reduction && row.extraLoad <= ratioLimit;

function hedgeSection(result) {
  const s = result.setup;
  const rows = result.rows;
  const lines = [
    `Two loopback servers in a child process answering after ${ms(s.baseMs, 0)} (± ${number(s.spread * 100)} %), except exactly 1 in every ${number(Math.round(1 / s.tailShare))} requests of a row, wherever they go (a seeded random place in each run of ${number(Math.round(1 / s.tailShare))}) after ${ms(s.tailMs, 0)}; one \`retryFetch\` client per row (no hedge, or \`hedge: hedging({ delay: 'p95' })\`; one URL, or \`endpoints: failover([a, b])\`, whose hedge goes to the other endpoint) sending \`GET …/ok\` through ${number(s.lanes)} lanes, ${number(s.rounds)} interleaved rounds × ${number(s.perRound)} requests per row, after ${number(s.warmUp)} warm-up requests each (so the p95 is learned); seed ${s.seed}. Quantiles are nearest rank (\`sorted[⌊q·n⌋]\`); "over ½ tail" is the share of requests slower than ${ms(s.tailMs / 2, 0)}. Extra load is the servers' arrivals ÷ the client's requests − 1; hedges, wins and budget refusals are the client's events; "hedge after" is how long after its primary attempt a hedge started (the learned p95, plus timer lateness). Target: p99 at least ${number(TARGETS.hedgeP99Reduction)}× lower than without a hedge, extra load ≤ the retry budget's ratio (${number(s.budgetRatio, 1)}).`,
    '',
    table(
      [
        'variant',
        'p50',
        'p95',
        'p99',
        'p99.9',
        'over ½ tail',
        'extra load',
        'hedges',
        'won by the hedge',
        'budget refused',
        'hedge after (p50)',
        'p99 vs no hedge',
        '',
      ],
      rows.map((row) => [
        row.variant,
        maybeMs(row.latencyMs.p50),
        maybeMs(row.latencyMs.p95),
        maybeMs(row.latencyMs.p99),
        maybeMs(row.latencyMs.p999),
        maybePercent(row.slowerThanHalfTail),
        maybePercent(row.extraLoad),
        row.hedge ? `${number(row.events.hedges)} (${maybePercent(row.events.hedgeShare)})` : '—',
        row.hedge ? number(row.events.answeredByHedge) : '—',
        row.hedge ? number(row.events.budgetRefused) : '—',
        row.hedgeDelayMs ? ms(row.hedgeDelayMs.p50, 2) : '—',
        row.baseline ? `${maybeRatio(row.p99Reduction)} lower` : '',
        row.baseline ? verdict(hedgeOk(row, s.budgetRatio)) : '',
      ]),
      [
        'left',
        'right',
        'right',
        'right',
        'right',
        'right',
        'right',
        'right',
        'right',
        'right',
        'right',
        'right',
        'left',
      ],
    ),
    '',
  ];
  const byId = (id) => rows.find((row) => row.id === id);
  const [none, copy] = ['none', 'none-copy'].map(byId);
  if (none && copy) {
    lines.push(
      `- Noise floor (A/A, no hedge): the copy differs by ${['p50', 'p95', 'p99', 'p999'].map((q) => `${signedMs(copy.latencyMs[q] - none.latencyMs[q])} at ${q === 'p999' ? 'p99.9' : q}`).join(', ')}.`,
    );
  }
  for (const row of rows.filter((r) => r.baseline)) {
    const base = byId(row.baseline);
    lines.push(
      `- ${row.variant}: p99 ${maybeMs(row.latencyMs.p99)} against ${maybeMs(base.latencyMs.p99)} without (${maybeRatio(row.p99Reduction)} lower; target ≥ ${number(TARGETS.hedgeP99Reduction)}×), extra load ${maybePercent(row.extraLoad)} against the budget ratio ${maybePercent(s.budgetRatio)}: ${verdict(hedgeOk(row, s.budgetRatio))}. ${number(row.events.hedges)} hedges for ${number(row.events.requests)} requests, ${number(row.events.hedgesCancelled)} of them cancelled; ${number(row.events.budgetRefused)} refused by the budget.`,
    );
  }
  for (const row of rows.filter((r) => r.hedge && r.byClass)) {
    const { notHedged, primaryWon, hedgeWon } = row.byClass;
    const show = (c) =>
      c.n > 0 ? `${number(c.n)} (p50 ${ms(c.p50, 1)}, p95 ${ms(c.p95, 1)}, max ${ms(c.max, 1)})` : 'none';
    lines.push(
      `- ${row.variant}, request by request: not hedged ${show(notHedged)}; hedged, answered by the primary ${show(primaryWon)}; answered by the hedge ${show(hedgeWon)}.`,
    );
  }
  const c = result.connections;
  if (c) {
    const end = c.afterSettle;
    const open = Object.values(end.servers).reduce((sum, x) => sum + x.open, 0);
    const busy = Object.values(end.servers).reduce((sum, x) => sum + x.busy, 0);
    const inFlight = Object.values(end.servers).reduce((sum, x) => sum + x.inFlight, 0);
    const accepted = Object.values(end.servers).reduce((sum, x) => sum + x.accepted, 0);
    const abandoned = rows.reduce((sum, row) => sum + row.server.abandoned, 0);
    lines.push(
      `- Cancelled attempts free their connections: ${verdict(c.freed)}. ${ms(c.settleMs, 0)} after the last request, the servers have ${number(inFlight)} requests in flight and ${number(busy)} busy connections of ${number(open)} open (the client holds ${number(end.clientOpenConnections)}), and undici has ${number(end.undiciUnfinished)} requests unfinished of ${number(end.undici.created)} created (${number(end.undici.errored)} ended by an abort or error). The servers saw ${number(abandoned)} requests abandoned before their answer and accepted ${number(accepted)} connections in all: an aborted fetch closes its connection, so each cancelled attempt still waiting costs a new one.`,
    );
  }
  lines.push(noiseLine(result));
  return lines;
}

function redisSection(result) {
  const modes = Object.entries(result.perRequest ?? {});
  const lines = [
    `What redisStore() adds to each guarded attempt, on loopback against a local redis-server (${result.what ?? 'ms per request'}); ${number(result.requestsPerMode ?? 0)} requests per mode, interleaved in rounds.`,
    '',
    table(
      ['store', 'median per request', 'p99 per request', 'added median', 'added p99'],
      modes.map(([mode, summary]) => {
        const added = result.addedPerAttempt?.[mode];
        return [
          mode === 'none' ? 'no guards' : mode,
          ms(summary.median, 3),
          ms(summary.p99, 3),
          added ? ms(added.median, 3) : '—',
          added ? ms(added.p99, 3) : '—',
        ];
      }),
      ['left', 'right', 'right', 'right', 'right'],
    ),
  ];
  const trip = result.redisScriptRoundTrip;
  const added = result.addedPerAttempt?.redisStore;
  if (trip) {
    lines.push(
      '',
      `- One breaker-admission script round trip to Redis: median ${ms(trip.median, 3)}, p99 ${ms(trip.p99, 3)} (${number(trip.n)} calls).`,
    );
  }
  if (added) {
    lines.push(`- redisStore() adds ${ms(added.median, 3)} to the median guarded attempt over no guards.`);
  }
  return lines;
}

function viewerSection(result) {
  const keystroke = result.filterKeystrokeMs ?? {};
  const ok = keystroke.max < TARGETS.viewerKeystrokeMs;
  return [
    `The standalone viewer (the devtools panel as a page) in headless Chromium ${result.chromium ?? ''}, loaded with ${number(result.requests)} requests × ${number(result.attemptsPerRequest)} attempts. Target (bench/viewer-render.mjs): each filter keystroke under ${ms(TARGETS.viewerKeystrokeMs, 0)}.`,
    '',
    table(
      ['measure', 'value', ''],
      [
        ['time to first render', ms(result.firstRenderMs, 0), ''],
        ['row elements in the DOM (virtualised list)', number(result.rowElementsInDom), ''],
        [
          'filter keystroke, median',
          ms(keystroke.median, 1),
          verdict(keystroke.median < TARGETS.viewerKeystrokeMs),
        ],
        ['filter keystroke, slowest', ms(keystroke.max, 1), verdict(ok)],
        ['rows matching the filter', number(result.rowsAfterFilter), ''],
      ],
      ['left', 'right', 'left'],
    ),
    '',
    `- The slowest keystroke took ${ms(keystroke.max, 1)}: ${ok ? 'under' : 'not under'} the ${ms(TARGETS.viewerKeystrokeMs, 0)} target.`,
  ];
}

/** A per-second rate as a cell: `181.9/s`. */
const perSecond = (value) => `${number(value, 1)}/s`;
/** A ratio with three decimals, for ratios close to each other: `1.116×`. */
const ratio3 = (value) => `${value.toFixed(3)}×`;
/** A number with no more decimals than it needs (at most 2): `2`, `1.5`. */
const plain = (value) => number(value, Number.isInteger(value) ? 0 : Number.isInteger(value * 10) ? 1 : 2);

/** The overload experiment: a server at 2× capacity, with and without adaptive throttling. */
function overloadSection(result) {
  const s = result.scenario;
  const rejectMs = s.rejectShare * s.serviceMs;
  const share = `${plain(s.rejectShare * 100)} %`;
  const byName = (name) => result.policies.find((p) => p.policy === name);
  const defaults = byName('Retryline defaults');
  const throttled = byName('Retryline + throttle');
  const none = byName('no retries');
  const noTimeouts = result.policies.every((p) => p.wasted.max === 0);
  const lines = [
    `A server of ${number(s.workers)} workers at ${ms(s.serviceMs, 0)} a request (${number(result.capacityPerSecond)} req/s) behind a queue of ${number(s.queueLimit)}: an attempt that finds the queue full gets a 503 at once, and **each 503 costs a worker ${share} of a request's time** (${ms(rejectMs, 0)}), paid before the next queued request starts. Why a cost at all: rejecting is work too (reading the request, deciding, writing the answer), so a server that rejects half of what it is sent spends part of its capacity saying no — the point of the SRE book's chapter [Handling Overload](https://sre.google/sre-book/handling-overload/). Why ${share}: an order of magnitude cheaper than the work it turns away, neither free nor as dear as serving; the variants below run 0 % and 25 % too.`,
    '',
    `${number(result.capacityPerSecond * s.offeredLoad)} req/s arrive (${plain(s.offeredLoad)}× capacity) as a Poisson process, dealt in turn to ${number(s.clients)} client processes, each with its own Retryline client and guards. Open loop: users keep coming whatever the server answers, so the offered load stays at ${plain(s.offeredLoad)}× whatever the clients do (a closed loop would lower its own offer as responses slow and raise it as fast 503s come back). Every attempt times out after ${ms(s.timeoutMs, 0)}${noTimeouts ? `, and none did (no served request had been given up on): at most ${number(s.queueLimit)} requests wait ahead of any, so every failure is a 503` : ''}. ${number(s.warmUpMs / 1000)} s of warm-up (the throttles' counts start empty), then ${number(s.durationMs / 1000)} s measured. Goodput: 2xx responses the clients received per second of the window; success and latency: of the requests that arrived in it (a request refused by its client settles at once). Seeds ${result.seeds.from}–${result.seeds.to}; each cell seed 1, then (min–max).`,
    '',
    table(
      [
        'policy',
        'goodput',
        'rejected at server',
        'rejected per s',
        'attempts sent',
        'refused by client',
        'success',
        'p99',
        'p99 of successes',
        'seed 1 failures',
      ],
      result.policies.map((p) => [
        p.policy,
        stormCell(p.goodputPerSecond, perSecond),
        stormCell(p.rejected, number),
        stormCell(p.rejectedPerSecond, perSecond),
        stormCell(p.attempts, number),
        stormCell(p.refused, number),
        stormCell(p.successRate, percent),
        stormCell(p.p99Ms, (v) => ms(v, 0)),
        stormCell(p.successP99Ms, (v) => ms(v, 0)),
        Object.entries(p.failuresSeed1 ?? {})
          .map(([kind, count]) => `${kind} ${number(count)}`)
          .join(', ') || '—',
      ]),
      ['left', 'right', 'right', 'right', 'right', 'right', 'right', 'right', 'right', 'left'],
    ),
    '',
  ];
  if (defaults && throttled) {
    const check = overloadCheck(result);
    lines.push(
      `- **With adaptive throttling, ${ratio3(check.goodput.min)}–${ratio3(check.goodput.max)} the goodput of Retryline's defaults, with ${ratio3(check.rejected.min)}–${ratio3(check.rejected.max)} the 503s at the server** (each seed against itself): ${verdict(check.ok)} the claim "at least as much goodput, fewer rejected at the server". The throttle sends ${number(throttled.attempts.seed1 / ((throttled.goodputPerSecond.seed1 * s.durationMs) / 1000), 2)} attempts per success (seed 1; \`adaptiveThrottle()\`'s k is 2) and refuses the rest before sending them (${number(throttled.refused.seed1)}, of which ${number(throttled.refusedFirst.seed1)} first attempts, failing with ThrottledError); the defaults send every first attempt and the retries their budget and gate allow (${number(defaults.attempts.seed1 / defaults.logicalRequests.seed1, 2)} attempts per request).`,
    );
    const beside = none
      ? `, ${percent(none.rejectWorkShare.seed1)} without retries (${perSecond(none.goodputPerSecond.seed1)} goodput${none.goodputPerSecond.seed1 > defaults.goodputPerSecond.seed1 && throttled.goodputPerSecond.seed1 > none.goodputPerSecond.seed1 ? ": the defaults' retries cost goodput here; the throttle wins it back and more, since it refuses first attempts too" : ''})`
      : '';
    lines.push(
      `- Where the capacity goes: served requests and rejections share the workers' time (${ms(s.serviceMs, 0)} a request served, ${ms(rejectMs, 0)} a rejection); rejections took ${percent(defaults.rejectWorkShare.seed1)} of it with the defaults, ${percent(throttled.rejectWorkShare.seed1)} with the throttle${beside}.`,
    );
    // The gate parks a retry at most maxParkMs (5 s by default): a p99 near that is its waiting.
    if (defaults.p99Ms.seed1 >= 4_000 && defaults.p99Ms.seed1 > 2 * throttled.p99Ms.seed1) {
      lines.push(
        `- Latency: the defaults' p99 of ${ms(defaults.p99Ms.seed1, 0)} is the recovery gate's: with the origin answering 503 to about every other attempt, it parks retries, each up to its \`maxParkMs\` (5 s), before handing back the last response or sending once more; the throttle refuses most of those retries at once (p99 ${ms(throttled.p99Ms.seed1, 0)}).`,
      );
    }
  }
  if (result.variants?.length > 0) lines.push('', ...overloadVariantLines(result));
  return lines;
}

/** Per seed, Retryline + throttle against Retryline's defaults: goodput and 503 ratios, and the verdict. */
function overloadCheck(result) {
  const seeds = result.throttleVsDefaults ?? [];
  const goodputs = seeds.map((seed) => seed.goodputRatio);
  const rejecteds = seeds.map((seed) => seed.rejectedRatio);
  return {
    goodput: { min: Math.min(...goodputs), max: Math.max(...goodputs) },
    rejected: { min: Math.min(...rejecteds), max: Math.max(...rejecteds) },
    ok: seeds.length > 0 && goodputs.every((r) => r >= 1) && rejecteds.every((r) => r < 1),
  };
}

/** The overload's variants: seed 1 with one setting changed at a time. */
function overloadVariantLines(result) {
  const row = (title, command, policies) => {
    const get = (name) => policies.find((p) => p.policy === name);
    const [none, plain, throttled] = ['no retries', 'Retryline defaults', 'Retryline + throttle'].map(get);
    const show = (p, key, format) => (p ? format(p[key]) : '—');
    return [
      title,
      command,
      show(none, 'goodputPerSecond', perSecond),
      show(plain, 'goodputPerSecond', perSecond),
      show(throttled, 'goodputPerSecond', perSecond),
      show(plain, 'rejectedPerSecond', perSecond),
      show(throttled, 'rejectedPerSecond', perSecond),
      show(plain, 'p99Ms', (v) => ms(v, 0)),
      show(throttled, 'p99Ms', (v) => ms(v, 0)),
    ];
  };
  const seed1 = result.policies.map((p) =>
    Object.fromEntries(Object.entries(p).map(([key, value]) => [key, value?.seed1 ?? value])),
  );
  const notes = [];
  const variantsBehind = result.variants.filter((v) => {
    const get = (name) => v.policies.find((p) => p.policy === name)?.goodputPerSecond;
    return get('Retryline + throttle') < get('no retries');
  });
  if (variantsBehind.length > 0) {
    notes.push(
      `- No retries at all gets more through than the throttle with ${variantsBehind.map((v) => v.title).join(', ')}: the throttle lets its clients send up to k = 2 attempts per accepted one, which at that load is more than the first attempts alone that clients without retries send.`,
    );
  }
  const variantsLost = result.variants.filter((v) => {
    const get = (name) => v.policies.find((p) => p.policy === name);
    const [throttle, defaults] = [get('Retryline + throttle'), get('Retryline defaults')];
    return (
      throttle.goodputPerSecond < defaults.goodputPerSecond ||
      throttle.rejectedPerSecond >= defaults.rejectedPerSecond
    );
  });
  notes.unshift(
    variantsLost.length === 0
      ? "- In every variant the throttle's goodput is at least the defaults', with fewer 503s at the server."
      : `- Not so with ${variantsLost.map((v) => v.title).join(', ')}: there the throttle's goodput is below the defaults', or its 503s are not fewer.`,
  );
  notes.unshift('');
  return [
    'How far the result rests on the choices above: seed 1 with one setting changed at a time.',
    '',
    table(
      [
        'variant',
        'command',
        'goodput, no retries',
        'goodput, defaults',
        'goodput, throttle',
        '503s, defaults',
        '503s, throttle',
        'p99, defaults',
        'p99, throttle',
      ],
      [
        row('as above', code('pnpm retryline simulate overload --seed 1'), seed1),
        ...result.variants.map((v) => row(v.title, code(v.command), v.policies)),
      ],
      ['left', 'left', 'right', 'right', 'right', 'right', 'right', 'right', 'right'],
    ),
    ...notes,
  ];
}

const SECTIONS = {
  overhead: overheadSection,
  'cpu-overhead': cpuOverheadSection,
  size: sizeSection,
  decision: decisionSection,
  soak: soakSection,
  herd: herdSection,
  storm: stormSection,
  'storm-real': stormRealSection,
  overload: overloadSection,
  balance: balanceSection,
  hedge: hedgeSection,
  'redis-latency': redisSection,
  'viewer-render': viewerSection,
};
/** The report's order: the contract's figures first, then the simulations, then the integrations. */
const ORDER = [
  'overhead',
  'cpu-overhead',
  'size',
  'decision',
  'soak',
  'herd',
  'storm',
  'storm-real',
  'overload',
  'balance',
  'hedge',
  'redis-latency',
  'viewer-render',
];

// --- Summary -----------------------------------------------------------------------------------

function summaryRows(results) {
  const rows = [];
  const missing = (name) => ['—', `not measured yet (${runCommand(name)})`, ''];
  const overhead = results.overhead;
  if (overhead) {
    for (const row of overhead.rows.filter(isAdapterRow)) {
      rows.push([
        `${row.variant} overhead ≤ ${ratio(TARGETS.overheadRatio)} its bare client (median)`,
        ratio(row.ratioToBare, TARGETS.overheadRatio),
        verdict(row.ratioToBare <= TARGETS.overheadRatio),
      ]);
    }
  } else rows.push([`adapter overhead ≤ ${ratio(TARGETS.overheadRatio)}`, ...missing('overhead').slice(1)]);
  const cpu = results['cpu-overhead'];
  if (cpu) {
    const floor = cpu.noiseFloor?.cpuDeltaUs;
    const noise = floor ? `; A/A noise floor ${plusUs(floor.median)} (${intervalText(floor)})` : '';
    for (const row of cpu.rows.filter((r) => isAdapterRow(r) && r.cpuDeltaUs)) {
      const check = cpuCheck(cpu, row);
      rows.push([
        `${row.variant} CPU per request over ${row.baseline} ${check.peer ? `≤ ${check.peer.variant}'s` : `≤ ${plusUs(TARGETS.cpuOverheadUs)}`} (median over rounds)`,
        `${plusUs(row.cpuDeltaUs.median)} (${intervalText(row.cpuDeltaUs)})${check.peer ? ` against ${plusUs(check.peer.cpuDeltaUs.median)}` : ''}${noise}`,
        verdict(check.ok),
      ]);
    }
  } else {
    rows.push([
      `adapter CPU per request ≤ ${plusUs(TARGETS.cpuOverheadUs)} (axios: ≤ axios-retry's)`,
      ...missing('cpu-overhead').slice(1),
    ]);
  }
  const fetchRow = results.size?.rows.find((row) => row.name.startsWith('@retryline/fetch'));
  rows.push(
    fetchRow
      ? [
          `@retryline/fetch ≤ ${bytes(TARGETS.fetchMinGzipBytes)} min+gzip`,
          bytes(fetchRow.gzipBytes),
          verdict(fetchRow.gzipBytes <= TARGETS.fetchMinGzipBytes),
        ]
      : [`@retryline/fetch ≤ ${bytes(TARGETS.fetchMinGzipBytes)} min+gzip`, ...missing('size').slice(1)],
  );
  const decisions = results.decision?.rows.filter((row) => !isContextRow(row.operation));
  if (decisions && decisions.length > 0) {
    const slowest = decisions.reduce((a, b) => (b.nsPerCall > a.nsPerCall ? b : a));
    rows.push([
      `per-attempt decision < ${nsTarget} (slowest operation)`,
      `${ns(slowest.nsPerCall)} (“${slowest.operation}”)`,
      verdict(slowest.nsPerCall < TARGETS.decisionNs),
    ]);
  } else rows.push([`per-attempt decision < ${nsTarget}`, ...missing('decision').slice(1)]);
  if (results.storm) {
    for (const scenario of results.storm.scenarios) {
      const defaults = scenario.policies.find((p) => p.policy === 'Retryline defaults');
      if (!defaults) continue;
      const checks = stormVerdicts(defaults);
      const recovery = defaults.recoveredAfterMs.max;
      rows.push(
        [
          `storm (${scenario.title}): Retryline defaults' incident amplification < ${ratio(TARGETS.stormIncidentAmplification)} (worst seed)`,
          ratio(defaults.incidentAmplification.max, TARGETS.stormIncidentAmplification),
          verdict(checks.amplification),
        ],
        [
          `storm (${scenario.title}): Retryline defaults recover ≤ ${ms(TARGETS.stormRecoveryMs, 0)} after the stall (worst seed)`,
          recovery === null ? 'not within the run' : ms(recovery, 0),
          verdict(checks.recovery),
        ],
      );
      // The peer comparison: better than every peer's defaults on both counts (seed 1), or not.
      const peers = scenario.policies.filter((p) => /axios-retry|ky|immediate/.test(p.policy));
      const recoveredBy = (p) => p.recoveredAfterMs.seed1 ?? Number.POSITIVE_INFINITY;
      const behind = peers.filter(
        (p) =>
          p.incidentAmplification.seed1 <= defaults.incidentAmplification.seed1 ||
          recoveredBy(p) <= recoveredBy(defaults),
      );
      rows.push([
        `storm (${scenario.title}): Retryline defaults beat every peer's defaults on both amplification and recovery (seed 1)`,
        behind.length === 0
          ? 'ahead of every peer on both'
          : `not ahead of ${behind.map((p) => `${p.policy} (${ratio(p.incidentAmplification.seed1)}, ${p.recoveredAfterMs.seed1 === null ? 'never' : ms(p.recoveredAfterMs.seed1, 0)})`).join('; ')}`,
        verdict(behind.length === 0),
      ]);
    }
  } else rows.push(['storm: incident amplification and recovery', ...missing('storm').slice(1)]);
  const closedDefaults = results.storm?.closedLoop?.policies.find((p) => p.policy === 'Retryline defaults');
  if (closedDefaults) {
    for (const m of CLOSED_MEASURES) {
      const worst = worstOf(m, closedDefaults);
      rows.push([
        `storm (closed loop): Retryline defaults' ${m.title} ${m.target()} (worst seed)`,
        m.show(worst),
        verdict(m.ok(worst)),
      ]);
    }
  }
  if (results.overload?.throttleVsDefaults) {
    const check = overloadCheck(results.overload);
    rows.push([
      `overload (${plain(results.overload.scenario.offeredLoad)}× capacity): Retryline + throttle's goodput ≥ Retryline defaults', with fewer 503s at the server (every seed)`,
      `${ratio3(check.goodput.min)}–${ratio3(check.goodput.max)} the goodput, ${ratio3(check.rejected.min)}–${ratio3(check.rejected.max)} the 503s`,
      verdict(check.ok),
    ]);
  }
  const hedge = results.hedge;
  for (const row of hedge?.rows.filter((r) => r.baseline) ?? []) {
    rows.push([
      `hedge at p95 (${row.variant}): p99 ≥ ${number(TARGETS.hedgeP99Reduction)}× lower than without, extra load ≤ the budget ratio (${maybePercent(hedge.setup.budgetRatio)})`,
      `${maybeRatio(row.p99Reduction)} lower, ${maybePercent(row.extraLoad)} extra`,
      verdict(hedgeOk(row, hedge.setup.budgetRatio)),
    ]);
  }
  const real = results['storm-real']?.policies.filter((p) => p.policy.startsWith('@retryline'));
  for (const policy of real ?? []) {
    const missed = CLOSED_MEASURES.filter((m) => !m.ok(policy[m.key]));
    rows.push([
      `storm on a real server: ${policy.policy} meets the five closed-loop targets`,
      CLOSED_MEASURES.map((m) => m.show(policy[m.key])).join(', '),
      verdict(missed.length === 0),
    ]);
  }
  return rows;
}

const runCommand = (name) => {
  const bench = BENCHES.find((b) => b.name === name);
  return `run ${code(`node ${[...(bench.nodeFlags ?? []), bench.script].join(' ')}`)} or ${code(`node bench/run.mjs ${name}`)}`;
};

// --- The report --------------------------------------------------------------------------------

export function writeReport() {
  const results = readResults();
  const problems = [];
  const out = [
    '<!-- generated by `pnpm bench` (bench/report.mjs) from bench/results/*.json — do not edit by hand -->',
    '',
    '# Retryline benchmark results',
    '',
    '> Generated by `pnpm bench` — do not edit by hand. Every number below is read from `bench/results/*.json`; every ✓/✗ is computed from it.',
    '',
  ];

  // Machine(s): one table when every result comes from the same machine, else one row per machine.
  const measured = ORDER.filter((name) => results[name]);
  const machines = new Map();
  for (const name of measured) {
    const key = JSON.stringify(results[name].machine ?? {});
    machines.set(key, [...(machines.get(key) ?? []), name]);
  }
  out.push('## Machine and versions', '');
  if (machines.size > 0) {
    out.push(
      table(
        ['OS', 'CPU', 'cores', 'memory', 'Node', 'benches'],
        [...machines].map(([key, names]) => {
          const m = JSON.parse(key);
          return [
            m.os,
            m.cpu,
            m.cores,
            m.memoryGiB === undefined ? '' : `${m.memoryGiB} GiB`,
            m.node,
            names.join(', '),
          ];
        }),
      ),
      '',
    );
  }
  const versions = [
    ...retrylineVersions(),
    ...PEERS.map((name) => [name, readVersion(`${ROOT}node_modules/${name}/package.json`)]).filter(
      ([, v]) => v,
    ),
  ];
  out.push(
    `Packages: ${versions.map(([name, version]) => `${name} ${version}`).join(', ')}.`,
    '',
    '## How to regenerate',
    '',
    'One command builds the packages, runs every bench and rewrites this file and the charts:',
    '',
    '```sh',
    'pnpm bench',
    '```',
    '',
    '`node bench/run.mjs <name…>` runs some of the benches (then this report); `node bench/run.mjs --report-only` only rewrites the report from the existing results. Each bench also runs alone:',
    '',
    table(
      ['bench', 'command', 'result', 'measured'],
      BENCHES.map((bench) => [
        bench.title,
        code(results[bench.name]?.command ?? `node ${[...(bench.nodeFlags ?? []), bench.script].join(' ')}`),
        code(`bench/results/${bench.name}.json`),
        results[bench.name]?.measuredAt ? date(results[bench.name].measuredAt) : 'not yet',
      ]),
    ),
    '',
    '## Against the performance contract',
    '',
    table(['target', 'measured', ''], summaryRows(results)),
  );

  for (const name of ORDER) {
    const bench = BENCHES.find((b) => b.name === name);
    out.push('', `## ${bench.title}`, '');
    const result = results[name];
    if (!result) {
      out.push(`_Not measured yet — ${runCommand(name)}._`);
      continue;
    }
    try {
      out.push(...SECTIONS[name](result));
    } catch (error) {
      problems.push(`${name}: ${error.message}`);
      out.push(`_Could not render bench/results/${name}.json: ${error.message}._`);
    }
    out.push('', `<sub>${code(result.command ?? bench.script)} · measured ${date(result.measuredAt)}</sub>`);
  }

  // Charts: only for results that exist, so a missing bench leaves its last charts as they were.
  mkdirSync(CHARTS_DIR, { recursive: true });
  const charts = {};
  try {
    if (results.herd) Object.assign(charts, herdCharts(results.herd));
    for (const scenario of results.storm?.scenarios ?? [])
      charts[stormChartFile(scenario)] = stormChart(scenario);
    if (results.storm?.closedLoop?.policies.some((p) => p.sentPerBucketSeed1))
      charts[CLOSED_LOOP_CHART] = closedLoopChart(results.storm.closedLoop);
  } catch (error) {
    problems.push(`charts: ${error.message}`);
  }
  for (const [file, svg] of Object.entries(charts)) writeFileSync(`${CHARTS_DIR}${file}`, svg);

  writeFileSync(REPORT_PATH, `${out.join('\n')}\n`);
  return { path: REPORT_PATH, charts: Object.keys(charts), problems };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { path, charts, problems } = writeReport();
  console.log(`written ${path}${charts.length > 0 ? ` and bench/charts/{${charts.join(',')}}` : ''}`);
  for (const problem of problems) console.error(`report: ${problem}`);
  if (problems.length > 0) process.exitCode = 1;
}
