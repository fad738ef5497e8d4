export { MAX_SCHEDULE_RETRIES } from './commands/schedule';
export { formatDuration, formatMinutes } from './format-duration';
export { type Cell, formatTable } from './format-table';
export { parseDuration } from './parse-duration';
export { type CommandIo, type RunIo, run } from './run';
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
