export type { RedisClient } from './connection';
export { isStoreUnavailableError, StoreUnavailableError } from './errors';
export type {
  RedisStoreEvent,
  StoreOperation,
  StoreRecoveredEvent,
  StoreUnavailableEvent,
} from './events';
export { type RedisStore, type RedisStoreOptions, redisStore } from './redis-store';
