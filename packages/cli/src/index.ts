// What a program calls: the command line as a function (`run`), the two simulators with their
// options, results and the storm policies to pass them, and the standalone viewer. The commands'
// flag parsing, formatting and limits are the command line's own and stay out of this index.
export { type RunIo, run } from './run';
export {
  HERD_STRATEGIES,
  type HerdConfig,
  type HerdResult,
  type HerdStrategy,
  type HerdSweep,
  simulateHerd,
  simulateHerds,
} from './simulate/herd';
export {
  axiosRetryDefaultsPolicy,
  kyDefaultsPolicy,
  retrylineWithBreakerPolicy,
  STORM_POLICIES,
} from './simulate/peers';
export {
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
export { type RunningViewer, startViewer, type ViewerOptions } from './view/view-server';
