import type {} from '@retryline/axios';
import axios, { type AxiosError } from 'axios';
import type { AxiosRetry as OriginalAxiosRetry, IAxiosRetryConfig as OriginalConfig } from 'axios-retry';
import { expectTypeOf } from 'vitest';
import axiosRetry, { type AxiosRetryCompatReturn, type IAxiosRetryConfig, isNetworkError } from './compat';

// Drop-in: wherever axios-retry's default export is expected, the compat one fits.
expectTypeOf(axiosRetry).toExtend<OriginalAxiosRetry>();
const asOriginal: OriginalAxiosRetry = axiosRetry;
expectTypeOf(asOriginal).toBeFunction();
// An options object written for axios-retry is accepted as it is.
expectTypeOf<OriginalConfig>().toExtend<IAxiosRetryConfig>();
expectTypeOf(axiosRetry(axios, { retries: 3 })).toEqualTypeOf<AxiosRetryCompatReturn>();
expectTypeOf(axiosRetry(axios.create()).requestInterceptorId).toBeNumber();

// The helpers are there, with axios-retry's signatures (and noDelay, which its README names).
expectTypeOf(axiosRetry.exponentialDelay).toBeCallableWith(2, undefined, 500);
expectTypeOf(axiosRetry.linearDelay(500)).returns.toBeNumber();
expectTypeOf(axiosRetry.noDelay).returns.toBeNumber();
expectTypeOf(axiosRetry.namespace).toEqualTypeOf<'axios-retry'>();

// Retryline options ride under `retryline`, except those axios-retry has its own name for.
axiosRetry(axios, { retryline: { onEvent: () => {}, deadline: 5000, idempotencyKey: true } });
// @ts-expect-error retries is axios-retry's option, not retryline's
axiosRetry(axios, { retryline: { retries: 5 } });

// Per request: axios-retry's key, typed.
axios.get('/items', { 'axios-retry': { retries: 0 } });
axios.get('/items', {
  'axios-retry': { retryCondition: async (error: AxiosError) => error.response?.status === 503 },
});
// @ts-expect-error retries is a number
axios.get('/items', { 'axios-retry': { retries: 'x' } });

// Per request: Retryline's own key (from @retryline/axios).
axios.get('/items', { retry: { retries: 3 } });
axios.get('/items', { retry: false });
// @ts-expect-error retries is a number
axios.get('/items', { retry: { retries: 'x' } });

// As axios-retry's, isNetworkError takes anything a catch clause holds.
expectTypeOf(isNetworkError).toBeCallableWith(undefined as unknown);

// An instance of another copy of axios is taken: here axios's CommonJS declarations, which
// TypeScript holds unrelated to the ES module ones this package is typed with.
type OtherCopy = typeof import('axios', { with: { 'resolution-mode': 'require' }});
declare const otherStatic: OtherCopy;
const otherInstance = otherStatic.create();
expectTypeOf(axiosRetry(otherInstance).detach).toBeFunction();
expectTypeOf(axiosRetry(otherStatic, { retries: 1 }).responseInterceptorId).toBeNumber();
