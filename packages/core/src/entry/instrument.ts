// `@retryline/core/instrument`: for instrumentation (the OpenTelemetry package, the devtools
// extension, log pipelines). The devtools hook, headers added to every attempt, each event's own
// type and the vocabulary its fields use, and the redaction events already went through, for
// anything shown beside them. An application subscribes with `subscribe`, `recordEvents` or
// `logEvents` from `@retryline/core`.
export type { GuardWaitReason, ScheduledDelay } from '../engine/attempt-loop';
export { DEVTOOLS_HOOK, type DevtoolsHook } from '../events/emitter';
export type { EventLogLine } from '../events/log-events';
export type { EventRecorder, RecordingEntry } from '../events/recorder';
export type {
  AttemptEndEvent,
  AttemptOutcome,
  AttemptPhase,
  AttemptStartEvent,
  BreakerStateEvent,
  BudgetEvent,
  ErrorSummary,
  GuardWaitEvent,
  RequestEndEvent,
  RequestOutcome,
  RequestStartEvent,
  RetryParkedEvent,
  RetryReleasedEvent,
  RetryScheduledEvent,
} from '../events/types';
export {
  type AttemptHeadersContext,
  type AttemptHeadersHook,
  addAttemptHeaders,
} from '../http/attempt-headers';
export type {
  FaultQuery,
  FaultStep,
  NetworkErrorFault,
  SlowFault,
  StatusFault,
} from '../http/fault';
export { REDACTED, redactUrl, SENSITIVE_HEADERS } from '../http/redact';
export type { DelayReason } from '../policy/decide';
