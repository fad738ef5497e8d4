export { MAX_SCHEDULE_RETRIES } from './commands/schedule';
export {
  herdCommand,
  SIMULATE_SUBCOMMANDS,
  type SimulateSubcommand,
  simulateCommand,
} from './commands/simulate';
export { MAX_STORM_RATE, stormCommand } from './commands/simulate-storm';
export { formatDuration, formatMinutes } from './format-duration';
export { type Cell, formatTable } from './format-table';
export { parseDuration } from './parse-duration';
export { type CommandIo, type RunIo, run } from './run';
export {
  HERD_DEFAULTS,
  HERD_STRATEGIES,
  type HerdConfig,
  type HerdResult,
  type HerdStrategy,
  type HerdSweep,
  herdPolicyOptions,
  MAX_HERD_CLIENTS,
  simulateHerd,
  simulateHerds,
} from './simulate/herd';
export {
  axiosRetryDefaultsPolicy,
  IMMEDIATE_RETRIES,
  kyDefaultsPolicy,
  retrylineWithBreakerPolicy,
  STORM_POLICIES,
} from './simulate/peers';
export {
  BUCKET_MS,
  defaultGuardsPolicy,
  guardsOffPolicy,
  INCIDENT_TAIL_MS,
  immediateRetryPolicy,
  STORM_DEFAULTS,
  type StormBucket,
  type StormConfig,
  type StormPolicy,
  type StormReport,
  type StormScenario,
  type StormSendContext,
  type StormSender,
  simulateStorm,
  simulateStorms,
} from './simulate/storm';
export { UsageError } from './usage-error';
export { parseRecording, type RunningViewer, startViewer, type ViewerOptions } from './view/view-server';
