export { MAX_SCHEDULE_RETRIES } from './commands/schedule';
export { formatDuration, formatMinutes } from './format-duration';
export { type Cell, formatTable } from './format-table';
export { parseDuration } from './parse-duration';
export { type CommandIo, type RunIo, run } from './run';
export { UsageError } from './usage-error';
