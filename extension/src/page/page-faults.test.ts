import { seededRandom } from '@retryline/core';
import type { FaultQuery, FaultStep } from '@retryline/core/instrument';
import { describe, expect, it } from 'vitest';
import type { FaultRule } from '../shared/faults';
import { createPageFaults, type FrameLike, MAX_REMEMBERED, optedOutBy } from './page-faults';

const API = 'https://app.example/api/items?page=***';

function query(overrides: Partial<FaultQuery> = {}): FaultQuery {
  return { client: 'fetch', method: 'GET', url: API, attempt: 1, requestId: 'r1', ...overrides };
}

const rule = (overrides: Partial<FaultRule> = {}): FaultRule => ({
  id: 'r',
  url: '/api/',
  steps: [{ step: 'status', status: 503 }, { step: 'status', status: 503 }, { step: 'passthrough' }],
  ...overrides,
});

function faults(options: { random?: () => number; optedOut?: () => boolean } = {}) {
  return createPageFaults({
    random: options.random ?? (() => 0),
    optedOut: options.optedOut ?? (() => false),
    controller: () => new AbortController(),
  });
}

/** A slow step's signal, as the page gives it to core. */
const signalOf = (step: FaultStep | undefined): AbortSignal | undefined =>
  step?.step === 'slow' ? step.signal : undefined;

/** What each attempt of one request gets, from attempt 1 to `attempts`. */
const attempts = (page: ReturnType<typeof faults>, attempts: number, base: Partial<FaultQuery> = {}) =>
  Array.from({ length: attempts }, (_, at) => page.fault(query({ ...base, attempt: at + 1 })));

describe('the page’s fault rules', () => {
  it('answer attempt n of a request with step n, the last one past the end; passthrough is no fault', () => {
    const page = faults();
    expect(page.set({ rules: [rule()] })).toBe(true);
    expect(attempts(page, 4)).toEqual([
      { step: 'status', status: 503 },
      { step: 'status', status: 503 },
      undefined,
      undefined,
    ]);
  });

  it('count each request by itself: a second request starts the sequence again', () => {
    const page = faults();
    page.set({ rules: [rule()] });
    expect(page.fault(query({ requestId: 'a', attempt: 3 }))).toBeUndefined();
    expect(page.fault(query({ requestId: 'b', attempt: 1 }))).toEqual({ step: 'status', status: 503 });
  });

  it('match with the panel’s filter syntax, on the request as its row shows it, and the method', () => {
    const page = faults();
    page.set({
      rules: [
        rule({ id: 'post', url: '/api/orders', method: 'post', steps: [{ step: 'networkError' }] }),
        rule({ id: 'regex', url: 're:/items\\?', steps: [{ step: 'status', status: 500 }] }),
        rule({ id: 'ky', url: 'client:ky -/health', steps: [{ step: 'status', status: 502 }] }),
      ],
    });
    expect(page.fault(query({ method: 'POST', url: 'https://app.example/api/orders' }))).toEqual({
      step: 'networkError',
    });
    expect(page.fault(query({ requestId: 'r2', url: 'https://app.example/api/orders' }))).toBeUndefined();
    expect(page.fault(query({ requestId: 'r3' }))).toEqual({ step: 'status', status: 500 });
    expect(page.fault(query({ requestId: 'r4', client: 'ky', url: 'https://app.example/x' }))).toEqual({
      step: 'status',
      status: 502,
    });
    expect(
      page.fault(query({ requestId: 'r5', client: 'ky', url: 'https://app.example/health' })),
    ).toBeUndefined();
    expect(
      page.fault(query({ requestId: 'r6', client: 'axios', url: 'https://app.example/x' })),
    ).toBeUndefined();
  });

  it('match a * in a rule’s URL as any run of characters: /api/* is any URL holding /api/', () => {
    const page = faults();
    page.set({
      rules: [
        rule({ id: 'items', url: '/api/*/items', steps: [{ step: 'status', status: 502 }] }),
        rule({ id: 'api', url: '/api/*', steps: [{ step: 'status', status: 503 }] }),
        rule({ id: 'cdn', url: '*.example.com -/health', steps: [{ step: 'networkError' }] }),
      ],
    });
    const answer = (requestId: string, url: string) => page.fault(query({ requestId, url }));
    expect(answer('a', 'http://127.0.0.1:5000/api/v2/items?x=***')).toEqual({ step: 'status', status: 502 });
    expect(answer('b', 'https://app.example/api/x')).toEqual({ step: 'status', status: 503 });
    expect(answer('c', 'https://app.example/api/')).toEqual({ step: 'status', status: 503 });
    expect(answer('d', 'https://app.example/apix')).toBeUndefined();
    expect(answer('e', 'https://app.example/api')).toBeUndefined();
    expect(answer('f', 'https://cdn.example.com/app.js')).toEqual({ step: 'networkError' });
    expect(answer('g', 'https://cdn.example.com/health')).toBeUndefined();
    expect(answer('h', 'https://example.com/app.js')).toBeUndefined();
  });

  it('try rules in order: the first that matches and is drawn is the request’s', () => {
    const page = faults();
    page.set({
      rules: [
        rule({ id: 'off', enabled: false, steps: [{ step: 'status', status: 500 }] }),
        rule({ id: 'first', steps: [{ step: 'status', status: 502 }] }),
        rule({ id: 'second', steps: [{ step: 'status', status: 504 }] }),
      ],
    });
    expect(page.fault(query())).toEqual({ step: 'status', status: 502 });
  });

  it('draw a probability once per request: a request takes the whole sequence, or none of it', () => {
    const draws = [0.9, 0.1];
    const page = faults({ random: () => draws.shift() ?? 1 });
    page.set({ rules: [rule({ probability: 0.5 })] });
    // Drawn 0.9: not this one, for any of its attempts.
    expect(attempts(page, 3, { requestId: 'missed' })).toEqual([undefined, undefined, undefined]);
    // Drawn 0.1: all of its sequence.
    expect(attempts(page, 3, { requestId: 'taken' })).toEqual([
      { step: 'status', status: 503 },
      { step: 'status', status: 503 },
      undefined,
    ]);
    expect(draws).toEqual([]);
  });

  it('let a request missed by one rule’s draw be taken by the next', () => {
    const draws = [0.9];
    const page = faults({ random: () => draws.shift() ?? 0 });
    page.set({
      rules: [
        rule({ id: 'rare', probability: 0.1, steps: [{ step: 'status', status: 500 }] }),
        rule({ id: 'always', steps: [{ step: 'networkError' }] }),
      ],
    });
    expect(page.fault(query())).toEqual({ step: 'networkError' });
  });

  it('draw from the set’s seed, so a session replays: the same seed, the same requests faulted', () => {
    const run = () => {
      const page = faults({ random: () => 0 });
      page.set({ rules: [rule({ probability: 0.3, steps: [{ step: 'status', status: 503 }] })], seed: 42 });
      return Array.from({ length: 20 }, (_, n) => page.fault(query({ requestId: `r${n}` })) !== undefined);
    };
    const random = seededRandom(42);
    const expected = Array.from({ length: 20 }, () => random() < 0.3);
    expect(run()).toEqual(expected);
    expect(run()).toEqual(expected);
    expect(expected.filter(Boolean).length).toBeGreaterThan(0);
    expect(expected.filter((taken) => !taken).length).toBeGreaterThan(0);
  });

  it('keep a request’s draw when the same rules come again (the panel reconnecting), and draw anew for new rules', () => {
    const draws = [0.1, 0.9];
    const page = faults({ random: () => draws.shift() ?? 0 });
    const set = { rules: [rule({ probability: 0.5 })] };
    page.set(set);
    expect(page.fault(query())).toBeDefined();
    page.set(JSON.parse(JSON.stringify(set)));
    expect(page.fault(query({ attempt: 2 }))).toEqual({ step: 'status', status: 503 });
    page.set({ rules: [rule({ probability: 0.5, id: 'new' })] });
    expect(page.fault(query({ attempt: 2 }))).toBeUndefined();
  });

  it('forget a request once it ended, and never remember more than a bounded number', () => {
    let draws = 0;
    const page = faults({
      random: () => {
        draws += 1;
        return 0;
      },
    });
    page.set({ rules: [rule({ probability: 0.5 })] });
    page.fault(query());
    page.fault(query({ attempt: 2 }));
    expect(draws).toBe(1);
    page.ended('r1');
    page.fault(query());
    expect(draws).toBe(2);
    for (let n = 0; n < MAX_REMEMBERED + 10; n += 1) page.fault(query({ requestId: `many-${n}` }));
    // The oldest were forgotten: asked again, it is drawn again.
    const before = draws;
    page.fault(query({ requestId: 'many-0', attempt: 2 }));
    expect(draws).toBe(before + 1);
    page.fault(query({ requestId: `many-${MAX_REMEMBERED + 9}`, attempt: 2 }));
    expect(draws).toBe(before + 1);
  });

  it('apply nothing on a page that opted out, whenever it did', () => {
    let optedOut = false;
    const page = faults({ optedOut: () => optedOut });
    page.set({ rules: [rule()] });
    expect(page.fault(query())).toBeDefined();
    optedOut = true;
    expect(page.fault(query({ attempt: 2 }))).toBeUndefined();
  });

  it('take an empty set as "no rules", and refuse a set that does not check, keeping the old one', () => {
    const page = faults();
    page.set({ rules: [rule()] });
    expect(page.set({ rules: [{ id: 'bad', url: '/x', steps: [{ step: 'status', status: 42 }] }] })).toBe(
      false,
    );
    expect(page.active()).toBe(1);
    expect(page.set('rules')).toBe(false);
    expect(page.set({ rules: [] })).toBe(true);
    expect(page.active()).toBe(0);
    expect(page.fault(query())).toBeUndefined();
  });

  it('turn a slow step that passes through into a wait before the real send', () => {
    const page = faults();
    page.set({
      rules: [rule({ steps: [{ step: 'slow', ms: 2000, answer: { step: 'passthrough' } } as never] })],
    });
    expect(page.fault(query())).toEqual({ step: 'slow', ms: 2000, signal: expect.any(AbortSignal) });
  });

  it('end the waits of slow steps in progress when the set is replaced or removed, not when it comes again', () => {
    const page = faults();
    const slow = { rules: [rule({ steps: [{ step: 'slow', ms: 600_000 }] })] };
    page.set(slow);
    const first = signalOf(page.fault(query()));
    expect(first?.aborted).toBe(false);
    // One controller per set: every wait under it ends with it.
    expect(signalOf(page.fault(query({ requestId: 'r2' })))).toBe(first);
    // The panel reconnecting sends the same rules: the waits go on.
    page.set(slow);
    expect(first?.aborted).toBe(false);
    page.set({ rules: [rule({ steps: [{ step: 'slow', ms: 1000 }] })] });
    expect(first?.aborted).toBe(true);
    const second = signalOf(page.fault(query()));
    expect(second?.aborted).toBe(false);
    page.set({ rules: [] });
    expect(second?.aborted).toBe(true);
  });

  it('end the waits of slow steps in progress when stopped (the panel went), and give later ones a live signal', () => {
    const page = faults();
    page.set({ rules: [rule({ steps: [{ step: 'slow', ms: 600_000 }] })] });
    const waiting = signalOf(page.fault(query()));
    page.stop();
    expect(waiting?.aborted).toBe(true);
    expect(signalOf(page.fault(query({ requestId: 'r2' })))?.aborted).toBe(false);
  });
});

describe('optedOutBy', () => {
  type Meta = { getAttribute(name: string): string | null };
  /** A window whose document has the opt-out meta with `content` (none for `null`), framed in `parent`. */
  const frame = (content: string | null, parent?: FrameLike): FrameLike => {
    const self: { document: FrameLike['document']; parent: FrameLike } = {
      document: {
        querySelector: (selector: string): Meta | null => {
          expect(selector).toBe('meta[name="retryline-faults" i]');
          return content === null ? null : { getAttribute: (name) => (name === 'content' ? content : null) };
        },
      },
      parent: undefined as unknown as FrameLike,
    };
    self.parent = parent ?? self;
    return self;
  };
  /** A window of another origin: reading its document throws, as a browser's cross-origin WindowProxy does. */
  const foreign = (parent?: FrameLike): FrameLike => {
    const self = {
      get document(): never {
        throw new DOMException(
          'Blocked a frame with origin from accessing a cross-origin frame.',
          'SecurityError',
        );
      },
      parent: undefined as unknown as FrameLike,
    };
    self.parent = parent ?? self;
    return self;
  };

  it.each([
    ['off', true],
    [' OFF ', true],
    ['on', false],
    ['', false],
  ])('reads content="%s" as opted out: %s', (content, expected) => {
    expect(optedOutBy(frame(content))()).toBe(expected);
  });

  it('reads a page without the meta element as not opted out', () => {
    expect(optedOutBy(frame(null))()).toBe(false);
  });

  it('takes the opt-out of a same-origin ancestor, up to the top, for a frame without the meta', () => {
    const shell = frame('off');
    expect(optedOutBy(frame(null, shell))()).toBe(true);
    expect(optedOutBy(frame(null, frame(null, shell)))()).toBe(true);
    expect(optedOutBy(frame(null, frame('on', frame(null))))()).toBe(false);
  });

  it('passes over an ancestor of another origin, whose document cannot be read', () => {
    expect(optedOutBy(frame(null, foreign()))()).toBe(false);
    // The app's shell frames a widget of another origin, which frames one of the app's pages.
    expect(optedOutBy(frame(null, foreign(frame('off'))))()).toBe(true);
  });

  it('ends on a parent chain that never reaches a top window', () => {
    const a = frame(null);
    const b = frame(null, a);
    (a as { parent: FrameLike }).parent = b;
    expect(optedOutBy(a)()).toBe(false);
  });
});
