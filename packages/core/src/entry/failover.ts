// `@retryline/core/failover`: one service behind several base URLs (`endpoints: failover([...])`),
// and hedged requests (`hedge: hedging({ delay: 'p95' })`). A subpath of its own, so the root stays
// small and only a client that imports these carries them. Re-exported by @retryline/fetch,
// @retryline/axios and @retryline/ky.
export {
  type Balance,
  type EndpointSpec,
  type Failover,
  type FailoverOptions,
  failover,
  type Hedging,
  type HedgingOptions,
  hedging,
} from '../http/failover';
