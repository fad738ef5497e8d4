import { systemRandom } from '../time/random';

let counter = 0;

/** A fresh id for a logical request: a UUID v4 where `crypto.randomUUID` exists. */
export function createRequestId(): string {
  const crypto = (globalThis as { crypto?: { randomUUID?: () => string } }).crypto;
  if (typeof crypto?.randomUUID === 'function') return crypto.randomUUID();
  counter = (counter + 1) % 0x7fffffff;
  return `rl-${counter.toString(36)}-${Math.floor(systemRandom() * 2 ** 32).toString(36)}`;
}
