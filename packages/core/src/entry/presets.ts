// `@retryline/core/presets`: ready options for the APIs people call most (Stripe, GitHub, AWS,
// Google Cloud, OpenAI), each a plain `HttpRetryOptions` that cites its provider's documentation.
// Re-exported as `presets` by @retryline/fetch, @retryline/axios and @retryline/ky.
export { awsPreset } from '../presets/aws';
export { githubPreset } from '../presets/github';
export { googleCloudPreset } from '../presets/google-cloud';
export { openaiPreset } from '../presets/openai';
export { presets } from '../presets/presets';
export { type StripePresetOptions, stripePreset } from '../presets/stripe';
