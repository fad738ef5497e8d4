import { attachRetry } from '@retryline/axios';
import { presets, retryFetch } from '@retryline/fetch';
import { retryline } from '@retryline/ky';
import axios from 'axios';
import ky from 'ky';

// A preset is a plain options object, written from the provider's own documentation.
export const stripe = retryFetch(fetch, presets.stripe()); // Idempotency-Key on every POST
export const github = retryFetch(fetch, { ...presets.github(), maxRetryAfter: 15 * 60_000 }); // wait out a reset
export const openai = ky.create({ prefixUrl: 'https://api.openai.com/v1', ...retryline(presets.openai()) });

export const storage = axios.create({ baseURL: 'https://storage.googleapis.com' });
attachRetry(storage, presets.googleCloud());

export const dynamodb = (signedFetch: typeof fetch) => retryFetch(signedFetch, presets.aws());
