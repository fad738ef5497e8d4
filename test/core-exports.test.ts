// Every name @retryline/core exports, entry by entry, written out: adding, moving or dropping one
// fails here, so each export is a decision and not an accident. The root is what an application
// author uses and stays small (≤ 70 names, values and types together); adapter authors, store
// authors, instrumentation and the provider presets have a subpath each. Values are read from the
// modules themselves; types from the TypeScript compiler's view of each entry file, so a type
// re-exported by mistake counts as much as a function.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as axiosAdapter from '@retryline/axios';
import * as root from '@retryline/core';
import * as adapter from '@retryline/core/adapter';
import * as failoverEntry from '@retryline/core/failover';
import * as instrument from '@retryline/core/instrument';
import * as presets from '@retryline/core/presets';
import * as store from '@retryline/core/store';
import * as fetchAdapter from '@retryline/fetch';
import * as kyAdapter from '@retryline/ky';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

interface Entry {
  /** The subpath in package.json `exports`. */
  readonly subpath: string;
  /** The entry's source file, relative to packages/core. */
  readonly source: string;
  readonly module: Record<string, unknown>;
  readonly values: readonly string[];
  readonly types: readonly string[];
}

const ENTRIES: readonly Entry[] = [
  {
    subpath: '.',
    source: './src/index.ts',
    module: root,
    values: [
      // Retrying any operation, and previewing or computing delays.
      'retry',
      'createRetry',
      'RETRY',
      'backoffSchedule',
      'computeDelay',
      'parseRetryHint',
      // Guards as values, and where their state lives.
      'retryBudget',
      'circuitBreaker',
      'rateLimiter',
      'bulkhead',
      'pacing',
      'recoveryGate',
      'adaptiveThrottle',
      'memoryStore',
      // The event stream.
      'subscribe',
      'recordEvents',
      'logEvents',
      'eventLogger',
      // Time and randomness for tests.
      'virtualClock',
      'seededRandom',
      // Errors.
      'RetrylineError',
      'AttemptTimeoutError',
      'BodyNotReplayableError',
      'BulkheadRejectedError',
      'CircuitOpenError',
      'DeadlineExceededError',
      'InvalidOptionsError',
      'RateLimitedError',
      'RetriesExhaustedError',
      'RetryAfterTooLongError',
      'RetryBudgetExhaustedError',
      'RetryLaterError',
      'ThrottledError',
      'isRetrylineError',
    ],
    types: [
      'RetryOptions',
      'AttemptContext',
      'BoundRetry',
      'HttpRetryOptions',
      'HttpOutcome',
      'RetryInfo',
      'StoppedBy',
      'PolicyOptions',
      'BackoffStrategy',
      'JitterType',
      'Schedule',
      'ScheduleOptions',
      'RetryHint',
      'RetrylineEvent',
      'RetrylineEventListener',
      'Recording',
      'EventLogger',
      'RetryBudget',
      'RetryBudgetValueOptions',
      'CircuitBreaker',
      'CircuitBreakerOptions',
      'RateLimiter',
      'RateLimiterOptions',
      'Bulkhead',
      'BulkheadValueOptions',
      'Pacing',
      'PacingOptions',
      'RecoveryGate',
      'RecoveryGateValueOptions',
      'AdaptiveThrottle',
      'AdaptiveThrottleOptions',
      'Store',
      'MemoryStore',
      'Clock',
      'Random',
      'VirtualClock',
    ],
  },
  {
    subpath: './adapter',
    source: './src/entry/adapter.ts',
    module: adapter,
    values: [
      // The request engine.
      'runHttpRequest',
      'prepareHttpOptions',
      'resolveHttpOptions',
      'requestRetryOptions',
      // The retrying fetch the fetch-based adapters (fetch, ky) are built on.
      'retryingFetch',
      // Judging a failure, and the steps the engine takes after one.
      'classifyTransportError',
      'isRetryableByDefault',
      'IDEMPOTENT_METHODS',
      'RETRYABLE_STATUSES',
      'decide',
      'initialState',
      'quotaSpentUntil',
      // Retry info kept with what a request ended with.
      'keepRetryInfo',
      'retryInfoOf',
      // Requests and headers.
      'encodeFormData',
      'headerValue',
      // Options: defaults, limits, merging and validation messages.
      'DEFAULTS',
      'MAX_DELAY_LIMIT',
      'mergeOptions',
      'normalizePolicy',
      'invalid',
      'describeValue',
      'systemClock',
      'systemRandom',
    ],
    types: [
      'HttpExchange',
      'HttpAttempt',
      // What an exchange's inject answers with (a fault the DevTools panel injects).
      'FaultAnswer',
      'PreparedHttpOptions',
      'ResolvedHttpOptions',
      'HeadersLike',
      'HeaderSource',
      'BackoffConfig',
      'JitterConfig',
      'OnMaxDelay',
      'ResolvedPolicy',
      'RetrylineErrorName',
    ],
  },
  {
    subpath: './store',
    source: './src/entry/store.ts',
    module: store,
    values: [
      'localStore',
      'GATE_DEFAULTS',
      'normalizeGate',
      'gateInit',
      'gateAdmit',
      'gateRecord',
      'BREAKER_DEFAULTS',
      'normalizeBreaker',
      'initialBreakerState',
      'breakerAdmit',
      'breakerRecord',
      'BUDGET_DEFAULTS',
      'BUDGET_BUCKETS',
      'normalizeBudget',
      'budgetInit',
      'budgetRecordRequest',
      'budgetTryRetry',
      'normalizeBucket',
      'bucketInit',
      'bucketTake',
      'normalizeBulkhead',
      'bulkheadInit',
      'bulkheadAcquire',
      'bulkheadRelease',
    ],
    types: [
      'StoreAnswer',
      'GuardStore',
      'RecoveryGateConfig',
      'GateState',
      'GateVerdict',
      'BreakerConfig',
      'BreakerState',
      'BreakerStateName',
      'BreakerAdmission',
      'BreakerOutcome',
      'BreakerRecord',
      'BreakerTransition',
      'RetryBudgetConfig',
      'BudgetState',
      'BudgetRecord',
      'BudgetDecision',
      'TokenBucketConfig',
      'BucketState',
      'BulkheadConfig',
      'BulkheadState',
      'BulkheadAcquire',
    ],
  },
  {
    subpath: './instrument',
    source: './src/entry/instrument.ts',
    module: instrument,
    values: ['DEVTOOLS_HOOK', 'addAttemptHeaders', 'redactUrl', 'REDACTED', 'SENSITIVE_HEADERS'],
    types: [
      'DevtoolsHook',
      // What the devtools hook is asked before each attempt, and the fault steps it may answer.
      'FaultQuery',
      'FaultStep',
      'StatusFault',
      'NetworkErrorFault',
      'SlowFault',
      'AttemptHeadersHook',
      'AttemptHeadersContext',
      'RequestStartEvent',
      'AttemptStartEvent',
      'AttemptEndEvent',
      'RetryScheduledEvent',
      'RequestEndEvent',
      'BreakerStateEvent',
      'BudgetEvent',
      'GuardWaitEvent',
      'RetryParkedEvent',
      'RetryReleasedEvent',
      'RequestOutcome',
      'AttemptOutcome',
      'AttemptPhase',
      'ErrorSummary',
      'DelayReason',
      'GuardWaitReason',
      'ScheduledDelay',
      'RecordingEntry',
      'EventRecorder',
      'EventLogLine',
    ],
  },
  {
    subpath: './presets',
    source: './src/entry/presets.ts',
    module: presets,
    values: [
      // Ready options for the APIs people call most, as one object and each on its own.
      'presets',
      'stripePreset',
      'githubPreset',
      'awsPreset',
      'googleCloudPreset',
      'openaiPreset',
    ],
    types: ['StripePresetOptions'],
  },
  {
    subpath: './failover',
    source: './src/entry/failover.ts',
    module: failoverEntry,
    // Several base URLs for one service, and hedged requests: values a client imports when it wants them.
    values: ['failover', 'hedging'],
    types: ['Balance', 'EndpointSpec', 'Failover', 'FailoverOptions', 'Hedging', 'HedgingOptions'],
  },
];

const coreDir = fileURLToPath(new URL('../packages/core/', import.meta.url));
const sorted = (names: Iterable<string>) => [...names].sort();

/** Every name each entry file exports, types included, as the TypeScript compiler sees them. */
function compiledExports(): Map<string, string[]> {
  const files = ENTRIES.map((entry) => fileURLToPath(new URL(entry.source, `file://${coreDir}`)));
  const program = ts.createProgram(files, {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.Preserve,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    types: [],
    lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
  });
  const checker = program.getTypeChecker();
  const names = new Map<string, string[]>();
  ENTRIES.forEach((entry, i) => {
    const file = program.getSourceFile(files[i] as string);
    const symbol = file && checker.getSymbolAtLocation(file);
    if (!symbol) throw new Error(`cannot read the exports of ${entry.source}`);
    names.set(entry.subpath, sorted(checker.getExportsOfModule(symbol).map((s) => s.name)));
  });
  return names;
}

describe('@retryline/core exports', () => {
  const compiled = compiledExports();

  it.each(ENTRIES)('$subpath exports exactly its listed values', (entry) => {
    expect(sorted(Object.keys(entry.module))).toEqual(sorted(entry.values));
  });

  it.each(ENTRIES)('$subpath exports exactly its listed values and types', (entry) => {
    expect(compiled.get(entry.subpath)).toEqual(sorted([...entry.values, ...entry.types]));
  });

  it('the root stays a small front door: at most 70 names, values and types together', () => {
    const [front] = ENTRIES;
    expect((front?.values.length ?? 0) + (front?.types.length ?? 0)).toBeLessThanOrEqual(70);
  });

  it('exports each name from one entry only', () => {
    const all = ENTRIES.flatMap((entry) => [...entry.values, ...entry.types]);
    expect(all.filter((name, i) => all.indexOf(name) !== i)).toEqual([]);
  });

  it.each([
    ['@retryline/fetch', fetchAdapter],
    ['@retryline/axios', axiosAdapter],
    ['@retryline/ky', kyAdapter],
  ] as const)('%s re-exports every value of the root, so an app imports one package', (_name, adapter) => {
    const module = adapter as Record<string, unknown>;
    for (const name of Object.keys(root))
      expect(module[name], name).toBe((root as Record<string, unknown>)[name]);
  });

  it.each([
    ['@retryline/fetch', fetchAdapter],
    ['@retryline/axios', axiosAdapter],
    ['@retryline/ky', kyAdapter],
  ] as const)('%s re-exports `presets`, and no preset function on its own', (_name, adapter) => {
    const module = adapter as Record<string, unknown>;
    expect(module.presets).toBe(presets.presets);
    for (const name of Object.keys(presets).filter((name) => name !== 'presets'))
      expect(module[name], name).toBeUndefined();
  });

  it.each([
    ['@retryline/fetch', fetchAdapter],
    ['@retryline/axios', axiosAdapter],
    ['@retryline/ky', kyAdapter],
  ] as const)('%s re-exports `failover` and `hedging`', (_name, adapter) => {
    const module = adapter as Record<string, unknown>;
    expect(module.failover).toBe(failoverEntry.failover);
    expect(module.hedging).toBe(failoverEntry.hedging);
  });

  it('lists each entry in package.json exports, with the same conditions as the root', () => {
    const manifest = JSON.parse(readFileSync(`${coreDir}package.json`, 'utf8')) as {
      exports: Record<string, unknown>;
    };
    expect(Object.keys(manifest.exports)).toEqual([
      ...ENTRIES.map((entry) => entry.subpath),
      './package.json',
    ]);
    for (const entry of ENTRIES) {
      const name = entry.subpath === '.' ? 'index' : entry.subpath.slice(2);
      expect(manifest.exports[entry.subpath], entry.subpath).toEqual({
        '@retryline/source': entry.source,
        import: { types: `./dist/${name}.d.ts`, default: `./dist/${name}.js` },
        require: { types: `./dist/${name}.d.cts`, default: `./dist/${name}.cjs` },
      });
    }
  });
});
