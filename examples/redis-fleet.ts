import { circuitBreaker, retryBudget, retryFetch } from '@retryline/fetch';
import { redisStore } from '@retryline/redis';
import { Redis } from 'ioredis';

// One Redis for the fleet: every process that uses the same prefix shares one breaker, one retry
// budget, one limiter, one bulkhead and one pacing per origin.
const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');

const store = redisStore(redis, {
  prefix: 'retryline:checkout',
  // Redis silent for 250 ms or gone: each process guards from its own memory until Redis answers
  // again (failOpen: false refuses requests with StoreUnavailableError instead).
  failOpen: true,
  timeoutMs: 250,
  // Once when an outage starts ('store-unavailable'), once when Redis answers again ('store-recovered').
  onEvent: (event) => console.warn(`[retryline] ${event.type}`, event),
});

// Guard values with no store of their own keep their state in the client's store: here, Redis.
export const api = retryFetch(fetch, {
  store,
  budget: retryBudget({ ratio: 0.1, windowMs: 10_000, minPerSecond: 10 }),
  breaker: circuitBreaker({ consecutiveFailures: 5, openMs: 30_000 }),
});
