import { describe, expect, it } from 'vitest';
import { A, B, base, C, client, everyHedge, settle } from '../../../../test/support/failover-client';
import { CircuitOpenError, InvalidOptionsError } from '../errors';
import type { RetrylineEvent } from '../events/types';
import { retryBudget } from '../guard/retry-budget';
import { memoryStore } from '../guard/store';
import { seededRandom } from '../time/random';
import { virtualClock } from '../time/virtual-clock';
import { ended, failover, hedging, Pool, poolOf, Route, rebase } from './failover';

describe('failover()', () => {
  it.each([
    [[], 'a non-empty array'],
    [['not a url'], 'endpoints[0]'],
    [['ftp://a.example'], 'endpoints[0]'],
    [['https://user:pw@a.example'], 'endpoints[0]'],
    [['https://a.example/?key=secret'], 'endpoints[0]'],
    [['https://a.example#x'], 'endpoints[0]'],
    [[A, `${A}/`], 'distinct'],
    [[{ url: A, weight: 0 }], 'weight'],
    [[{ url: A, weight: Number.NaN }], 'weight'],
  ])('refuses %j with a clear error', (list, says) => {
    expect(() => failover(list as string[])).toThrow(InvalidOptionsError);
    expect(() => failover(list as string[])).toThrow(says);
  });

  it('never puts a credential or query of a bad endpoint in its message', () => {
    expect(() => failover(['ftp://user:hunter2@a.example/?token=t0k3n'])).toThrow(InvalidOptionsError);
    try {
      failover(['ftp://user:hunter2@a.example/?token=t0k3n']);
    } catch (error) {
      expect(String((error as Error).message)).not.toMatch(/hunter2|t0k3n/);
    }
  });

  it('refuses an unknown balance and bad breaker rules', () => {
    expect(() => failover([A], { balance: 'least' as never })).toThrow(/balance/);
    expect(() => failover([A], { breaker: { openMs: -1 } })).toThrow(/breaker.openMs/);
  });

  it('is refused as a plain array, with the way to make one', () => {
    const clock = virtualClock(0);
    const { request } = client(() => 200, clock);
    expect(() => request('GET', '/x', base(clock, { endpoints: [A, B] as never }))).rejects.toThrow(
      /Expected endpoints to be a failover\(\) value/,
    );
  });

  it('fills in the per-endpoint breaker defaults', () => {
    expect(failover([A]).breaker).toMatchObject({ consecutiveFailures: 3, openMs: 5000, halfOpenCalls: 1 });
    expect(failover([A], { breaker: { openMs: 100 } }).breaker.openMs).toBe(100);
  });
});

describe('hedging()', () => {
  it.each([-1, Number.NaN, Number.POSITIVE_INFINITY, 'p99', undefined])('refuses delay %s', (delay) => {
    expect(() => hedging({ delay: delay as number })).toThrow(InvalidOptionsError);
  });

  it('takes a number as the delay', () => {
    expect(hedging(50)).toMatchObject({ kind: 'hedging', delay: 50, fallback: undefined });
    expect(hedging({ delay: 'p95', fallback: 20 })).toMatchObject({ delay: 'p95', fallback: 20 });
  });
});

describe('rebase', () => {
  const list = failover([A, `${B}/v2`]).endpoints ?? [];
  const b = list[1] as (typeof list)[number];
  it.each([
    ['/items/1', `${B}/v2/items/1`],
    ['items/1', `${B}/v2/items/1`],
    ['?page=2', `${B}/v2?page=2`],
    ['', `${B}/v2`],
    [`${A}/items?x=1`, `${B}/v2/items?x=1`],
    [`${B}/v2/items`, `${B}/v2/items`],
  ])('moves %s onto the picked endpoint', (url, moved) => {
    expect(rebase(url, list, b)).toBe(moved);
  });

  it.each([
    'https://elsewhere.example/items',
    `${A}.evil.example/items`,
    `${B}/v22/items`,
    '//a.api.example/items',
  ])('leaves %s alone', (url) => {
    expect(rebase(url, list, b)).toBeUndefined();
  });
});

describe('picking', () => {
  const route = (value: ReturnType<typeof failover>, pool = new Pool(memoryStore())) =>
    new Route(value, pool, { method: 'GET', url: '/x' }, seededRandom(3), (() => {}) as never, 'GET /x');
  const picks = async (r: Route, n: number, now = () => 0) => {
    const out: string[] = [];
    for (let i = 0; i < n; i++) out.push((await r.pick(new Set(), now, {})).endpoint.base);
    return out;
  };

  it('round robin takes the endpoints in turn', async () => {
    expect(await picks(route(failover([A, B, C], { balance: 'round-robin' })), 6)).toEqual([
      A,
      B,
      C,
      A,
      B,
      C,
    ]);
  });

  it('weighted takes them in turn by weight, spread out', async () => {
    const r = route(failover([{ url: A, weight: 3 }, B], { balance: 'weighted' }));
    const got = await picks(r, 8);
    expect(got.filter((x) => x === A)).toHaveLength(6);
    // Smooth: every four picks in a row hold three of A's and one of B's, never B's twice running.
    for (let i = 0; i + 4 <= got.length; i++)
      expect(got.slice(i, i + 4).filter((x) => x === A)).toHaveLength(3);
  });

  it('two choices takes the less loaded of the two it draws', async () => {
    const pool = new Pool(memoryStore());
    const r = route(failover([A, B]), pool);
    pool.of(A).outstanding = 5;
    expect(await picks(r, 10)).toEqual(Array(10).fill(B));
    // Latency counts too: B answers 10× slower than A.
    pool.of(A).outstanding = 0;
    ended(pool.of(A), 10, true);
    ended(pool.of(B), 100, true);
    pool.of(A).outstanding = 1;
    pool.of(B).outstanding = 1;
    expect(await picks(r, 10)).toEqual(Array(10).fill(A));
  });

  it('prefers an endpoint the request has not tried', async () => {
    const r = route(failover([A, B], { balance: 'round-robin' }));
    for (let i = 0; i < 4; i++) expect((await r.pick(new Set([A]), () => 0, {})).endpoint.base).toBe(B);
    // All tried: any of them, rather than none.
    expect([A, B]).toContain((await r.pick(new Set([A, B]), () => 0, {})).endpoint.base);
  });

  it('ejects an endpoint while its breaker is open, then lets one probe through', async () => {
    let now = 0;
    const pool = new Pool(memoryStore());
    const value = failover([A, B], {
      balance: 'round-robin',
      breaker: { consecutiveFailures: 2, openMs: 1000 },
    });
    const r = route(value, pool);
    const a = await r.pick(new Set(), () => now, {});
    expect(a.endpoint.base).toBe(A);
    await r.record(a, 'failure', now);
    await r.record(a, 'failure', now);
    expect(await picks(r, 6, () => now)).toEqual(Array(6).fill(B));
    now = 1000;
    const after = await picks(r, 4, () => now);
    // One probe to A; while it is out, A is refused and the rest go to B.
    expect(after.filter((x) => x === A)).toHaveLength(1);
    const probe = { ...a };
    await r.record(probe, 'success', now);
    expect((await picks(r, 4, () => now)).filter((x) => x === A)).toHaveLength(2);
  });

  it('refuses the attempt, nothing sent, when every endpoint is ejected', async () => {
    const pool = new Pool(memoryStore());
    const value = failover([A], { breaker: { consecutiveFailures: 1, openMs: 500 } });
    const r = route(value, pool);
    const a = await r.pick(new Set(), () => 0, {});
    await r.record(a, 'failure', 0);
    const refusal = r.pick(new Set(), () => 10, { attempts: 1, totalDelay: 0, cause: undefined });
    await expect(refusal).rejects.toBeInstanceOf(CircuitOpenError);
    await expect(refusal).rejects.toMatchObject({ retryAt: 500 });
  });

  it('keeps the p95 of the last 100 answers', () => {
    const stats = new Pool(memoryStore()).of(A);
    for (let i = 1; i <= 100; i++) ended(stats, i, true);
    expect(stats.p95).toBe(95);
    // A failure is no latency sample, but makes the endpoint look slower.
    const before = stats.ewma;
    ended(stats, 1, false);
    expect(stats.count).toBe(100);
    expect(stats.ewma).toBeGreaterThan(before);
  });
});

describe('failover through the engine', () => {
  it('retries on another endpoint, with one idempotency key, and names the endpoint in events', async () => {
    const clock = virtualClock(0);
    const { sends, request } = client((b) => (b === A ? 'refuse' : b === B ? 503 : 200), clock);
    const events: RetrylineEvent[] = [];
    const options = base(clock, {
      endpoints: failover([A, B, C], { balance: 'round-robin' }),
      idempotencyKey: { header: 'Idempotency-Key' },
      retries: 3,
      onEvent: (event) => events.push(event),
    });
    const { response } = await settle(clock, request('POST', '/charges', options));
    expect(response.from).toBe(C);
    expect(sends.map((s) => new URL(s.url).origin)).toEqual([A, B, C]);
    const keys = new Set(sends.map((s) => s.attempt.headers['Idempotency-Key']));
    expect(keys.size).toBe(1);
    const starts = events.filter((e) => e.type === 'attempt-start');
    expect(starts.map((e) => (e as { endpoint?: string }).endpoint)).toEqual([A, B, C]);
    const ends = events.filter((e) => e.type === 'attempt-end');
    expect(ends.map((e) => (e as { endpoint?: string }).endpoint)).toEqual([A, B, C]);
  });

  it('leaves a URL to another origin alone, with no endpoint in its events', async () => {
    const clock = virtualClock(0);
    const { sends, request } = client(() => 200, clock);
    const events: RetrylineEvent[] = [];
    const options = base(clock, { endpoints: failover([A, B]), onEvent: (event) => events.push(event) });
    await settle(clock, request('GET', 'https://other.example/x', options));
    expect(sends.map((s) => s.url)).toEqual(['https://other.example/x']);
    expect(sends[0]?.attempt.url).toBeUndefined();
    expect(events.some((e) => 'endpoint' in e)).toBe(false);
  });

  it('a function gives the endpoints per request, and a bad list fails before anything is sent', async () => {
    const clock = virtualClock(0);
    const { sends, request } = client(() => 200, clock);
    const options = base(clock, {
      endpoints: failover(({ url }) => (url.startsWith('/eu') ? [B] : [A])),
    });
    await settle(clock, request('GET', '/eu/x', options));
    await settle(clock, request('GET', '/us/x', options));
    expect(sends.map((s) => s.url)).toEqual([`${B}/eu/x`, `${A}/us/x`]);
    const bad = base(clock, { endpoints: failover(() => ['nope']) });
    await expect(request('GET', '/x', bad)).rejects.toBeInstanceOf(InvalidOptionsError);
    expect(sends).toHaveLength(2);
  });

  it('two clients given one store share the endpoints’ breakers', async () => {
    const clock = virtualClock(0);
    const store = memoryStore();
    const { counts, request } = client((b) => (b === A ? 'refuse' : 200), clock);
    const value = failover([A, B], {
      balance: 'round-robin',
      breaker: { consecutiveFailures: 1, openMs: 60_000 },
    });
    await settle(clock, request('GET', '/x', base(clock, { endpoints: value, store })));
    expect(counts.get(A)).toBe(1);
    for (let i = 0; i < 5; i++)
      await settle(clock, request('GET', '/x', base(clock, { endpoints: value, store })));
    expect(counts.get(A)).toBe(1);
    // Another store: its own breakers, so it tries A once for itself.
    await settle(clock, request('GET', '/x', base(clock, { endpoints: value, store: memoryStore() })));
    expect(counts.get(A)).toBe(2);
  });
});

describe('hedging through the engine', () => {
  it('sends a second copy when the attempt is late, takes its answer and cancels the first', async () => {
    const clock = virtualClock(0);
    const { sends, request } = client((_b, n) => (n === 1 ? 'hang' : { after: 5, status: 200 }), clock);
    const events: RetrylineEvent[] = [];
    const options = base(clock, {
      budget: everyHedge(),
      hedge: hedging(50),
      onEvent: (event) => events.push(event),
    });
    const { response } = await settle(clock, request('GET', `${A}/x`, options));
    expect(response.status).toBe(200);
    expect(sends).toHaveLength(2);
    expect(sends[0]?.aborted()).toBe(true);
    expect(sends[1]?.aborted()).toBe(false);
    const hedges = events.filter((e) => (e as { hedge?: true }).hedge);
    expect(hedges.map((e) => e.type)).toEqual(['attempt-start', 'attempt-end']);
    expect(hedges.every((e) => (e as { attempt?: number }).attempt === 1)).toBe(true);
    expect(events.find((e) => e.type === 'attempt-end' && !(e as { hedge?: true }).hedge)).toMatchObject({
      answeredBy: 'hedge',
    });
    // It went out at the hedge delay, not before.
    expect(events.find((e) => e.type === 'attempt-start' && (e as { hedge?: true }).hedge)?.t).toBe(50);
  });

  it('sends no copy of an attempt that answers in time, and cancels the hedge that lost', async () => {
    const clock = virtualClock(0);
    const late = client((_b, n) => (n === 1 ? { after: 80, status: 200 } : 'hang'), clock);
    const events: RetrylineEvent[] = [];
    const options = base(clock, {
      budget: everyHedge(),
      hedge: hedging(50),
      onEvent: (event) => events.push(event),
    });
    await settle(clock, late.request('GET', `${A}/x`, options));
    expect(late.sends).toHaveLength(2);
    expect(late.sends[1]?.aborted()).toBe(true);
    await Promise.resolve();
    const hedgeEnd = events.find((e) => e.type === 'attempt-end' && (e as { hedge?: true }).hedge);
    expect(hedgeEnd).toMatchObject({ outcome: 'aborted' });

    const quick = client(() => ({ after: 10, status: 200 }), clock);
    await settle(
      clock,
      quick.request('GET', `${A}/x`, base(clock, { budget: everyHedge(), hedge: hedging(50) })),
    );
    expect(quick.sends).toHaveLength(1);
  });

  it('sends the hedge to another endpoint', async () => {
    const clock = virtualClock(0);
    const { sends, request } = client((b) => (b === A ? 'hang' : 200), clock);
    const options = base(clock, {
      endpoints: failover([A, B], { balance: 'round-robin' }),
      hedge: hedging(20),
      budget: everyHedge(),
    });
    const { response } = await settle(clock, request('GET', '/x', options));
    expect(response.from).toBe(B);
    expect(sends.map((s) => new URL(s.url).origin)).toEqual([A, B]);
  });

  it('never hedges a POST, even keyed', async () => {
    const clock = virtualClock(0);
    const { sends, request } = client(() => ({ after: 100, status: 200 }), clock);
    const options = base(clock, {
      budget: everyHedge(),
      hedge: hedging(10),
      idempotencyKey: { header: 'Idempotency-Key' },
    });
    await settle(clock, request('POST', `${A}/x`, options));
    expect(sends).toHaveLength(1);
  });

  it('charges each hedge to the retry budget, within its ratio (its floor is for retries, not hedges)', async () => {
    const clock = virtualClock(0);
    const { sends, request } = client(() => ({ after: 100, status: 200 }), clock);
    // Half as many retries as requests, and a floor of 10 a second that hedges do not get.
    const budget = retryBudget({ ratio: 0.5, minPerSecond: 10, windowMs: 10_000 });
    const events: RetrylineEvent[] = [];
    const options = base(clock, { hedge: hedging(10), budget, onEvent: (event) => events.push(event) });
    for (let i = 0; i < 4; i++) await settle(clock, request('GET', `${A}/x`, options));
    // retries + 1 ≤ 0.5 × requests: the 2nd and the 4th request may hedge.
    expect(events.filter((e) => e.type === 'budget').map((e) => (e as { allowed: boolean }).allowed)).toEqual(
      [false, true, false, true],
    );
    const hedges = events.filter((e) => e.type === 'attempt-start' && (e as { hedge?: true }).hedge);
    expect(hedges).toHaveLength(2);
    expect(sends).toHaveLength(6);
  });

  it("waits for an endpoint's p95 (20 answers) before hedging at it, or its fallback", async () => {
    const clock = virtualClock(0);
    const { sends, request } = client(() => ({ after: 40, status: 200 }), clock);
    const store = memoryStore();
    const p95 = base(clock, { budget: everyHedge(), hedge: hedging({ delay: 'p95' }), store });
    for (let i = 0; i < 20; i++) await settle(clock, request('GET', `${A}/x`, p95));
    expect(sends).toHaveLength(20);
    // Learned: every answer took 40 ms, so a 40 ms answer is not late (the hedge would go at 40).
    const slow = client(() => ({ after: 100, status: 200 }), clock);
    await settle(clock, slow.request('GET', `${A}/x`, p95));
    expect(slow.sends).toHaveLength(2);
    const fresh = client(() => ({ after: 100, status: 200 }), clock);
    const fallback = base(clock, { budget: everyHedge(), hedge: hedging({ delay: 'p95', fallback: 30 }) });
    await settle(clock, fresh.request('GET', `${A}/x`, fallback));
    expect(fresh.sends).toHaveLength(2);
  });

  it('counts an attempt its hedge beat in its endpoint’s latencies, as long as it ran', async () => {
    const clock = virtualClock(0);
    const store = memoryStore();
    const options = base(clock, { budget: everyHedge(), hedge: hedging({ delay: 'p95' }), store });
    // 20 answers at 10 ms: the p95 is 10 ms.
    const quick = client(() => ({ after: 10, status: 200 }), clock);
    for (let i = 0; i < 20; i++) await settle(clock, quick.request('GET', `${A}/x`, options));
    const stats = poolOf(store).stats.get(A);
    expect(stats?.p95).toBe(10);
    // Then the endpoint stalls: every attempt is beaten by its hedge, 5 ms after the hedge went.
    const stalled = client((_b, n) => (n % 2 === 1 ? 'hang' : { after: 5, status: 200 }), clock);
    for (let i = 0; i < 20; i++) await settle(clock, stalled.request('GET', `${A}/x`, options));
    // The cancelled attempts ran 15 ms or more (each at the hedge delay + 5): the p95 sees the
    // tail and moves up, rather than staying on the fast answers the hedges brought.
    expect(stats?.p95).toBeGreaterThanOrEqual(15);
    expect(Math.min(...(stats?.samples.slice(-10) ?? []).filter((ms) => ms > 5))).toBeGreaterThanOrEqual(15);
  });

  it('per request, `hedge: false` turns it off', async () => {
    const clock = virtualClock(0);
    const { sends, request } = client(() => ({ after: 100, status: 200 }), clock);
    await settle(clock, request('GET', `${A}/x`, base(clock, { hedge: false })));
    expect(sends).toHaveLength(1);
  });
});
