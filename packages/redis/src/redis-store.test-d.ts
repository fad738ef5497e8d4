import type { Store } from '@retryline/core';
import { Cluster, Redis } from 'ioredis';
import { expectTypeOf } from 'vitest';
import { type RedisStore, type RedisStoreEvent, redisStore, type StoreUnavailableError } from './index';

// Type-checked by `pnpm typecheck`, never run: nothing here connects.

// Any ioredis client: a Redis (either reply mapping) or a Cluster.
expectTypeOf(redisStore(new Redis())).toEqualTypeOf<RedisStore>();
expectTypeOf(redisStore(new Redis({ replyMapping: 'resp3' }))).toEqualTypeOf<RedisStore>();
expectTypeOf(redisStore(new Cluster([{ host: '127.0.0.1', port: 7000 }]))).toEqualTypeOf<RedisStore>();
// It is a Store: what every guard option takes.
expectTypeOf<RedisStore>().toExtend<Store>();

redisStore(new Redis(), {
  prefix: 'retryline:prod',
  clock: 'caller',
  failOpen: false,
  timeoutMs: 100,
  onEvent(event) {
    expectTypeOf(event).toEqualTypeOf<RedisStoreEvent>();
    if (event.type === 'store-unavailable') expectTypeOf(event.operation).toBeString();
    else expectTypeOf(event.downtime).toBeNumber();
  },
});

// @ts-expect-error the clock is 'redis' or 'caller'
redisStore(new Redis(), { clock: 'local' });
// @ts-expect-error not an ioredis client
redisStore({ get: () => undefined });

declare const error: StoreUnavailableError;
expectTypeOf(error.key).toBeString();
