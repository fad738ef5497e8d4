import { invalid } from './normalize';
import type { BackoffContext, ResolvedBackoff } from './options';

/**
 * The backoff before retry `n` for one of the four strategies, before any cap or jitter.
 * May be `Infinity` for large n; the caller caps it. Never NaN or negative.
 */
export function backoffDelay(backoff: ResolvedBackoff, n: number, context: BackoffContext): number {
  switch (backoff.strategy) {
    case 'constant':
      return backoff.base;
    case 'linear':
      return backoff.base + backoff.step * n;
    case 'polynomial':
      // 0 · Infinity is NaN; a zero base is a zero delay however large n grows.
      return backoff.base === 0 ? 0 : backoff.base * n ** backoff.exponent;
    case 'exponential':
      return backoff.base === 0 ? 0 : backoff.base * backoff.factor ** n;
    case 'custom': {
      const delay = backoff.fn(n, context);
      if (typeof delay !== 'number' || Number.isNaN(delay) || delay < 0) {
        throw invalid('the backoff function', 'returning a number of milliseconds ≥ 0', delay, 'backoff');
      }
      return delay;
    }
  }
}
