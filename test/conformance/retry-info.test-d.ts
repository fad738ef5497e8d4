import { type RetryInfo as AxiosRetryInfo, getRetryInfo as axiosRetryInfo } from '@retryline/axios';
import type { RetryInfo, StoppedBy } from '@retryline/core';
import type { RequestOutcome, ScheduledDelay } from '@retryline/core/instrument';
import { type RetryInfo as FetchRetryInfo, getRetryInfo as fetchRetryInfo } from '@retryline/fetch';
import { type RetryInfo as KyRetryInfo, getRetryInfo as kyRetryInfo } from '@retryline/ky';
import { expectTypeOf } from 'vitest';

// Type-checked by `tsc -p tsconfig.json`, never run. One retry-info type for every adapter, for
// every argument (a response, the client's error, a Retryline error, an abort reason): no Partial,
// no union of two shapes.

for (const getRetryInfo of [fetchRetryInfo, axiosRetryInfo, kyRetryInfo]) {
  expectTypeOf(getRetryInfo).parameters.toEqualTypeOf<[unknown]>();
  expectTypeOf(getRetryInfo).returns.toEqualTypeOf<RetryInfo | undefined>();
}
expectTypeOf<FetchRetryInfo>().toEqualTypeOf<RetryInfo>();
expectTypeOf<AxiosRetryInfo>().toEqualTypeOf<RetryInfo>();
expectTypeOf<KyRetryInfo>().toEqualTypeOf<RetryInfo>();

// Every field is there once there is an info; only why it stopped and when to come back are optional.
expectTypeOf<RetryInfo>().toEqualTypeOf<{
  readonly requestId: string;
  readonly attempts: number;
  readonly totalDelay: number;
  readonly delays: readonly ScheduledDelay[];
  readonly outcome: RequestOutcome;
  readonly stoppedBy?: StoppedBy;
  readonly retryAt?: number;
}>();
// The outcome covers a success and every way a request ends, aborts included.
expectTypeOf<'success' | 'aborted' | 'exhausted' | 'budget-exhausted'>().toMatchTypeOf<
  RetryInfo['outcome']
>();
