/**
 * The instrumentation scope Retryline's tracer and meter are named with. The version is the
 * package's own, read from package.json when the package is built (the bundler inlines the one
 * field), so a release that bumps the version (`changeset version`) cannot ship the previous one.
 */
import { version } from '../package.json';

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
export const SCOPE_VERSION: string = version;
