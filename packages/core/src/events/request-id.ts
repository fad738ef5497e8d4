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

// The ids of the requests in flight in this realm that a caller chose (a `requestId` option, a
// request id header of its own): a caller that gives several concurrent requests one id (an
// incoming X-Request-Id passed on to each call it makes) still gets events that tell them apart.
const claimed = new Set<string>();

/**
 * The id a request's events carry for a caller-chosen `given`: `given` itself, or `given#2`,
 * `given#3` … while an earlier request with that id is still in flight. `release` at its end.
 */
export function claimRequestId(given: string): { readonly id: string; release(): void } {
  let id = given;
  for (let n = 2; claimed.has(id); n++) id = `${given}#${n}`;
  claimed.add(id);
  return { id, release: () => claimed.delete(id) };
}
