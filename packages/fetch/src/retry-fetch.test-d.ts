import { expectTypeOf } from 'vitest';
import { type RetryFetch, retryFetch } from './retry-fetch';

const client = retryFetch(fetch, { retries: 3 });

// A retryFetch is a fetch: it can stand wherever fetch is expected.
expectTypeOf(client).toMatchTypeOf<typeof fetch>();
expectTypeOf(client('https://api.example/x')).toEqualTypeOf<Promise<Response>>();
const takesFetch = (f: typeof fetch) => f;
takesFetch(client);

// init.retry: per-request options, or false to fail fast.
client('https://api.example/x', { retry: { retries: 5, idempotencyKey: true } });
client('https://api.example/x', { method: 'POST', body: 'x', retry: false });
client('https://api.example/x', { retry: 0 }); // a number of retries, as the option retry takes
expectTypeOf<RetryFetch>().parameter(1).toMatchTypeOf<{ retry?: unknown } | undefined>();

// @ts-expect-error retries is a number
client('https://api.example/x', { retry: { retries: 'five' } });
// @ts-expect-error retry is options, false or a number, not true
client('https://api.example/x', { retry: true });
// @ts-expect-error unknown jitter
retryFetch(fetch, { jitter: 'sometimes' });
