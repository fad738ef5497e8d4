export { type RateLimitedOptions, type RateLimitForm, rateLimited } from './rate-limited';
export {
  type AttemptFilter,
  type AttemptRecord,
  type HandlersRecorder,
  type LifeCycleSource,
  type Recorder,
  type RecordOptions,
  recordAttempts,
} from './recorder';
export { isRecorder } from './recorder-brand';
export type { Scope, Script } from './scope';
export {
  EXHAUSTED_HEADER,
  type FlakyOptions,
  failTimes,
  flaky,
  type OutageOptions,
  outage,
  type ScriptOptions,
  type SequenceOptions,
  sequence,
} from './scripts';
export {
  networkError,
  type SlowOptions,
  type StatusInit,
  type Step,
  type StepInfo,
  slow,
  status,
} from './steps';
