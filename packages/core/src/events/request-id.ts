import { systemRandom } from '../time/random';

/**
 * A random UUID v4: `crypto.randomUUID` where it exists (Node, and browsers in secure contexts),
 * else one built from the default random source in the same format.
 */
export function randomUuid(): string {
  const crypto = (globalThis as { crypto?: { randomUUID?: () => string } }).crypto;
  if (typeof crypto?.randomUUID === 'function') return crypto.randomUUID();
  return fallbackUuid();
}

function fallbackUuid(): string {
  const hex = (count: number) =>
    Array.from({ length: count }, () => Math.floor(systemRandom() * 16).toString(16)).join('');
  const variant = (8 + Math.floor(systemRandom() * 4)).toString(16);
  return `${hex(8)}-${hex(4)}-4${hex(3)}-${variant}${hex(3)}-${hex(12)}`;
}

/** A fresh id for a logical request: the same on every attempt. */
export const createRequestId = randomUuid;
