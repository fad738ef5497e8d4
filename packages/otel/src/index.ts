/**
 * @retryline/otel: OpenTelemetry traces and metrics for Retryline's HTTP requests, built on core's
 * event stream and attempt-header hook, with only @opentelemetry/api at run time.
 */

export { type InstrumentOptions, instrument } from './instrument';
export { BREAKER_STATE_VALUES } from './metrics';
export { SCOPE_NAME, SCOPE_VERSION } from './version';
