import type { DelayReason, GuardWaitReason } from '@retryline/core/instrument';
import ky, { type HTTPError, type Options, type ResponsePromise } from 'ky';
import { expectTypeOf } from 'vitest';
import { getRetryInfo, type RetryInfo } from './index';
import { type KyRequestRetryOptions, retryline } from './retryline';

// Type-checked by `pnpm typecheck`, never run: nothing here sends a request.
declare const url: string;

// retryline() returns ky's own options type, for ky.create() and .extend().
expectTypeOf(retryline).returns.toEqualTypeOf<Options>();
const api = ky.create(retryline({ retries: 2, idempotencyKey: true, timeout: 5_000, deadline: 20_000 }));

export function perRequest() {
  // The `retryline` request option comes from ky's Options, augmented by this package.
  expectTypeOf(api.get(url, { retryline: { retries: 3 } })).toEqualTypeOf<ResponsePromise<unknown>>();
  expectTypeOf(api.get(url, { retryline: false })).toEqualTypeOf<ResponsePromise<unknown>>();
  api.post(url, { json: { sku: 1 }, retryline: { idempotencyKey: true, deadline: 10_000 } });
  api.extend({ retryline: { retries: 5 } });
  expectTypeOf<Options['retryline']>().toEqualTypeOf<KyRequestRetryOptions | false | undefined>();

  // @ts-expect-error retries is a number
  api.get(url, { retryline: { retries: 'x' } });
  // @ts-expect-error `true` is not an option: omit `retryline` for the client's options
  api.get(url, { retryline: true });
  // @ts-expect-error the fetch is chosen once, in retryline()
  api.get(url, { retryline: { fetch } });
}

export function clientOptions() {
  retryline();
  retryline({ fetch, backoff: { strategy: 'constant', base: 20 }, jitter: 'none' });
  // @ts-expect-error 'fulll' is not a jitter
  retryline({ jitter: 'fulll' });
  // @ts-expect-error the client is always 'ky'
  retryline({ client: 'other' });
}

export function retryInfo(error: unknown, httpError: HTTPError, response: Response) {
  expectTypeOf(getRetryInfo(error)).toEqualTypeOf<RetryInfo | undefined>();
  expectTypeOf(getRetryInfo(httpError)?.attempts).toEqualTypeOf<number | undefined>();
  expectTypeOf(getRetryInfo(response)?.delays[0]?.reason).toEqualTypeOf<
    DelayReason | GuardWaitReason | undefined
  >();
}
