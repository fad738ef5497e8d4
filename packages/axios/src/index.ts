// The application API of @retryline/core (guards, stores, errors, events, retry info …), so an app
// imports one package.
export * from '@retryline/core';
export { type AxiosRetryOptions, attachRetry, getRetryInfo } from './attach-retry';
