/**
 * The instrumentation scope Retryline's tracer and meter are named with. The version is the
 * package's own; a test keeps it equal to package.json.
 */

/**
 * The instrumentation scope's name: the package that records the telemetry. Views and exporters
 * can select Retryline's instruments by it.
 *
 * @example
 * ```ts
 * const view = { meterName: SCOPE_NAME, instrumentName: 'retryline.wait.duration' };
 * ```
 */
export const SCOPE_NAME = '@retryline/otel';

/**
 * The instrumentation scope's version: this package's version.
 *
 * @example
 * ```ts
 * const tracer = trace.getTracer(SCOPE_NAME, SCOPE_VERSION); // the tracer instrument() records with
 * ```
 */
export const SCOPE_VERSION = '0.1.0';
