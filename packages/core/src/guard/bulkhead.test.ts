import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidOptionsError } from '../errors';
import {
  type BulkheadState,
  bulkheadAcquire,
  bulkheadInit,
  bulkheadIsEmpty,
  bulkheadRelease,
  normalizeBulkhead,
} from './bulkhead';

/** Acquires for each holder in turn, returning each result and the final state. */
function acquireAll(
  holders: readonly string[],
  maxConcurrent: number,
  maxQueue: number,
  from = bulkheadInit(),
) {
  const config = normalizeBulkhead({ maxConcurrent, maxQueue });
  let state: BulkheadState = from;
  const results: string[] = [];
  for (const holder of holders) {
    const acquired = bulkheadAcquire(state, config, holder);
    state = acquired.state;
    results.push(acquired.result);
  }
  return { state, results, config };
}

describe('bulkhead', () => {
  it('gives maxConcurrent places, queues maxQueue more, and rejects the rest', () => {
    const { state, results } = acquireAll(['a', 'b', 'c', 'd', 'e'], 2, 2);
    expect(results).toEqual(['acquired', 'acquired', 'queued', 'queued', 'rejected']);
    expect(state).toEqual({ active: ['a', 'b'], queue: ['c', 'd'] });
  });

  it('hands a freed place to the oldest waiter, not to a newcomer (first come, first served)', () => {
    const { state, config } = acquireAll(['a', 'b', 'c'], 1, 5);
    const freed = bulkheadRelease(state, 'a');
    // A newcomer finds the place free, but b and c queued before it.
    expect(bulkheadAcquire(freed, config, 'z').result).toBe('queued');
    // c is not first in line either; b is.
    expect(bulkheadAcquire(freed, config, 'c')).toMatchObject({ result: 'queued', position: 1 });
    const b = bulkheadAcquire(freed, config, 'b');
    expect(b).toMatchObject({ result: 'acquired', state: { active: ['b'], queue: ['c'] } });
  });

  it('lets a later waiter in when enough places are free for everyone ahead of it', () => {
    const { state, config } = acquireAll(['a', 'b', 'c', 'd'], 2, 5);
    const freed = bulkheadRelease(bulkheadRelease(state, 'a'), 'b');
    // Two places, one waiter (c) ahead of d: d need not wait for c to come back.
    expect(bulkheadAcquire(freed, config, 'd')).toMatchObject({
      result: 'acquired',
      state: { active: ['d'], queue: ['c'] },
    });
  });

  it('is idempotent for a holder that asks again', () => {
    const { state, config } = acquireAll(['a', 'b'], 1, 1);
    expect(bulkheadAcquire(state, config, 'a')).toEqual({ result: 'acquired', state });
    expect(bulkheadAcquire(state, config, 'b')).toEqual({ result: 'queued', state, position: 0 });
  });

  it('releases a waiter that gave up, and ignores unknown holders', () => {
    const { state } = acquireAll(['a', 'b'], 1, 1);
    expect(bulkheadRelease(state, 'b')).toEqual({ active: ['a'], queue: [] });
    expect(bulkheadRelease(state, 'nobody')).toEqual(state);
    expect(bulkheadIsEmpty(bulkheadRelease(bulkheadRelease(state, 'a'), 'b'))).toBe(true);
  });

  it('refuses at once by default (maxQueue 0), and accepts an unbounded queue', () => {
    expect(normalizeBulkhead({ maxConcurrent: 3 })).toEqual({ maxConcurrent: 3, maxQueue: 0 });
    expect(acquireAll(['a', 'b'], 1, 0).results).toEqual(['acquired', 'rejected']);
    const unbounded = acquireAll(
      Array.from({ length: 1000 }, (_, i) => `h${i}`),
      1,
      Number.POSITIVE_INFINITY,
    );
    expect(unbounded.state.queue).toHaveLength(999);
  });

  it.each([
    [{ maxConcurrent: 0 }, 'Expected bulkhead.maxConcurrent to be a positive integer, got 0'],
    [{ maxConcurrent: 1.5 }, 'Expected bulkhead.maxConcurrent to be a positive integer, got 1.5'],
    [
      { maxConcurrent: Number.POSITIVE_INFINITY },
      'Expected bulkhead.maxConcurrent to be a positive integer, got Infinity',
    ],
    [
      { maxConcurrent: 2, maxQueue: -1 },
      'Expected bulkhead.maxQueue to be a non-negative integer or Infinity, got -1',
    ],
    [
      { maxConcurrent: 2, maxQueue: Number.NaN },
      'Expected bulkhead.maxQueue to be a non-negative integer or Infinity, got NaN',
    ],
  ])('rejects %o with a clear message', (options, message) => {
    const call = () => normalizeBulkhead(options);
    expect(call).toThrow(InvalidOptionsError);
    expect(call).toThrow(message);
  });

  it('keeps its invariants under any sequence of acquires and releases (fast-check)', () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant('acquire' as const), holder: fc.integer({ min: 0, max: 9 }) }),
      fc.record({ kind: fc.constant('release' as const), holder: fc.integer({ min: 0, max: 9 }) }),
    );
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 0, max: 4 }),
        fc.array(op, { maxLength: 60 }),
        (maxConcurrent, maxQueue, ops) => {
          const config = normalizeBulkhead({ maxConcurrent, maxQueue });
          let state = bulkheadInit();
          for (const { kind, holder } of ops) {
            const id = `h${holder}`;
            const before = state;
            if (kind === 'release') {
              state = bulkheadRelease(state, id);
            } else {
              const result = bulkheadAcquire(state, config, id);
              state = result.state;
              // Rejected only when every place and queue slot is taken, and then nothing changes.
              if (result.result === 'rejected') {
                expect(maxConcurrent - before.active.length).toBeLessThanOrEqual(before.queue.length);
                expect(before.queue.length).toBe(maxQueue);
                expect(state).toBe(before);
              }
              if (result.result === 'acquired') expect(state.active).toContain(id);
            }
            expect(state.active.length).toBeLessThanOrEqual(maxConcurrent);
            expect(state.queue.length).toBeLessThanOrEqual(maxQueue);
            expect(new Set([...state.active, ...state.queue]).size).toBe(
              state.active.length + state.queue.length,
            );
            // Same JSON after a round trip: a shared store may keep it as a string.
            expect(JSON.parse(JSON.stringify(state))).toEqual(state);
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});
