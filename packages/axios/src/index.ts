// The application API of @retryline/core (guards, stores, errors, events, retry info …), so an app
// imports one package.
export * from '@retryline/core';
// Several base URLs for one service, and hedged requests: `endpoints: failover([...])`, `hedge: hedging(…)`.
export {
  type Failover,
  type FailoverOptions,
  failover,
  type Hedging,
  type HedgingOptions,
  hedging,
} from '@retryline/core/failover';
// Ready options for Stripe, GitHub, AWS, Google Cloud and OpenAI: `attachRetry(api, presets.github())`.
export { presets } from '@retryline/core/presets';
export { type AxiosRetryOptions, attachRetry, getRetryInfo } from './attach-retry';
