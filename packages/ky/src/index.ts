// The application API of @retryline/core (guards, stores, errors, events, retry info …), so an app
// imports one package.
export * from '@retryline/core';
export { getRetryInfo } from './retry-info';
export { type KyRequestRetryOptions, type KyRetryOptions, retryline } from './retryline';
