import { seededRandom } from '@retryline/core';
import { describe, expect, it } from 'vitest';
import { compileFilter, filterRows, MAX_QUERY_LENGTH } from './filter';
import { hasTerm, retryTerms, toggleTerm, waitedMs, wildcardMatcher } from './filter-terms';
import { ev, gateScenario, injectedScenario, scenario } from './fixtures';
import { foldTimeline } from './timeline';

// r1: GET, 503 then a TypeError then 200, after a Retry-After wait, a backoff and a limiter hold.
// r2: POST refused by the breaker. r3: GET 404, not retryable.
const rows = [...foldTimeline(scenario()).rows, ...foldTimeline(gateScenario()).rows];
const ids = (text: string) => filterRows(rows, { text }).rows.map((r) => r.requestId);

describe('filter terms', () => {
  it.each([
    ['backoff', ['r1', 'g1', 'g2', 'g3', 'g4']],
    ['retry-after', ['r1']],
    ['limiter', ['r1']],
    ['breaker', ['r2']],
    ['parked', ['g1', 'g2', 'g3', 'g4']],
    ['retried', ['r1', 'g1', 'g2', 'g3', 'g4']],
    ['pacing', []],
  ])('finds the requests that went through %j', (text, expected) => {
    expect(ids(text)).toEqual(expected);
  });

  it('finds a request pacing held, and one pacing refused, by "pacing", and neither by "limiter"', () => {
    const API = 'https://api.example';
    const paced = foldTimeline([
      ev('p1', { type: 'request-start', t: 0, client: 'fetch', method: 'GET', url: `${API}/held` }),
      ev('p1', { type: 'guard-wait', t: 1000, attempt: 1, guard: 'pacing', key: API, waited: 1000 }),
      ev('p1', { type: 'attempt-start', t: 1000, attempt: 1 }),
      ev('p1', {
        type: 'attempt-end',
        t: 1010,
        attempt: 1,
        phase: 'response',
        status: 200,
        outcome: 'success',
        duration: 10,
      }),
      ev('p1', {
        type: 'request-end',
        t: 1010,
        outcome: 'success',
        attempts: 1,
        totalDelay: 0,
        duration: 1010,
      }),
      ev('p2', { type: 'request-start', t: 0, client: 'fetch', method: 'GET', url: `${API}/refused` }),
      ev('p2', {
        type: 'request-end',
        t: 0,
        outcome: 'quota-spent',
        attempts: 0,
        totalDelay: 0,
        duration: 0,
      }),
    ]).rows;
    const find = (text: string) => filterRows(paced, { text }).rows.map((r) => r.requestId);
    expect(find('pacing')).toEqual(['p1', 'p2']);
    expect(find('limiter')).toEqual([]);
    expect(find('is:refused')).toEqual(['p2']);
  });

  it.each([
    ['is:retried', ['r1', 'g1', 'g2', 'g3', 'g4']],
    ['-is:retried', ['r2', 'r3']],
    ['is:failed', ['r2', 'r3', 'g4']],
    ['is:refused', ['r2', 'g4']],
    ['is:waited', ['r1', 'g1', 'g2', 'g3', 'g4']],
    ['status:503', ['r1', 'g1', 'g2', 'g3', 'g4']],
    ['status:4xx', ['r3']],
    ['status:404,503', ['r1', 'r3', 'g1', 'g2', 'g3', 'g4']],
    ['status:503 -parked', ['r1']],
    ['outcome:not-retryable,breaker-open', ['r2', 'r3']],
    ['method:post', ['r2']],
    ['client:ky', ['r3']],
    ['-backoff', ['r2', 'r3']],
    ['GET -retried', ['r3']],
    ['is:failed -is:refused', ['r3']],
    ['"api.example/pay"', ['r2']],
    ['https://cdn.example', ['r3']],
  ])('reads %j', (text, expected) => {
    expect(ids(text)).toEqual(expected);
  });

  it.each([
    ['is:maybe', /Unknown is:maybe/],
    ['status:abc', /Expected status:NNN/],
    ['outcome:fine', /Unknown outcome fine/],
  ])('explains a term it cannot read (%j) and then narrows nothing', (text, error) => {
    const filter = compileFilter({ text });
    expect(filter.error).toMatch(error);
    expect(ids(text)).toHaveLength(rows.length);
  });

  it.each(['is:__proto__', 'is:constructor', 'is:hasownproperty'])(
    'reads %j as an unknown word, not as what every object has',
    (text) => {
      expect(() => ids(text)).not.toThrow();
      expect(compileFilter({ text }).error).toMatch(/^Unknown is:/);
      expect(ids(text)).toHaveLength(rows.length);
    },
  );

  it('toggles a chip’s term in the query, keeping the rest', () => {
    expect(toggleTerm('', 'is:retried')).toBe('is:retried');
    expect(toggleTerm('GET is:retried', 'is:retried')).toBe('GET');
    expect(toggleTerm('GET', 'is:failed')).toBe('GET is:failed');
    expect(hasTerm('GET is:failed', 'is:failed')).toBe(true);
    expect(hasTerm('GET is:failedx', 'is:failed')).toBe(false);
  });

  it('names what a request went through and sums its waits', () => {
    const r1 = rows[0];
    if (!r1) throw new Error('no row');
    expect(retryTerms(r1)).toEqual(['retry-after', 'backoff', 'limiter', 'retried']);
    const sum = r1.waits.reduce((s, w) => s + w.delay, 0) + r1.guardWaits.reduce((s, w) => s + w.waited, 0);
    expect(sum).toBeGreaterThan(0);
    expect(waitedMs(r1)).toBe(sum);
  });
});

describe('injected faults in the filter', () => {
  // f1: two of its three attempts injected; f2: sent as usual. r1–r3: no fault at all.
  const all = [...foldTimeline(injectedScenario()).rows, ...foldTimeline(scenario()).rows];
  const found = (text: string) => filterRows(all, { text }).rows.map((r) => r.requestId);

  it.each([
    ['is:injected', ['f1']],
    ['-is:injected', ['f2', 'r1', 'r2', 'r3']],
    ['injected', ['f1']],
    ['-injected', ['f2', 'r1', 'r2', 'r3']],
    ['injected status:503', ['f1']],
  ])('reads %j', (text, expected) => {
    expect(found(text)).toEqual(expected);
  });

  it('names injection among what a request went through', () => {
    const [f1, f2] = all;
    expect(f1 && retryTerms(f1)).toEqual(['backoff', 'backoff', 'retried', 'injected']);
    expect(f2 && retryTerms(f2)).toEqual([]);
  });
});

describe('a * in a word', () => {
  const LOOPBACK = 'http://127.0.0.1:5000';
  const urls = {
    orders: `${LOOPBACK}/api/orders?x=*`,
    items: `${LOOPBACK}/api/v2/items`,
    bare: `${LOOPBACK}/api/items`,
    apix: `${LOOPBACK}/apix`,
    cdn: 'https://cdn.example.com/app.js',
    apex: 'https://example.com/',
  };
  const rows = foldTimeline(
    Object.entries(urls).map(([id, url]) =>
      ev(id, { type: 'request-start', t: 1, client: 'fetch', method: 'GET', url }),
    ),
  ).rows;
  const found = (text: string) => filterRows(rows, { text }).rows.map((r) => r.requestId);

  it.each([
    // Parts "/api/" then "": any URL holding "/api/".
    ['/api/*', ['orders', 'items', 'bare']],
    ['/api/*/items', ['items']],
    ['*.example.com', ['cdn']],
    ['127.0.0.1:*/api/*?x=', ['orders']],
    // Unanchored, as a plain word is, and case-insensitive.
    ['api*items', ['items', 'bare']],
    ['/API/*/Items', ['items']],
    // Stars in a row are one star; a word of stars alone matches anything.
    ['/api/**/items', ['items']],
    ['*', ['orders', 'items', 'bare', 'apix', 'cdn', 'apex']],
  ])('%j finds %j', (text, expected) => {
    expect(found(text)).toEqual(expected);
  });

  it('is turned around by -, as any term', () => {
    expect(found('-/api/*')).toEqual(['apix', 'cdn', 'apex']);
    expect(found('-*.example.com GET')).toEqual(['orders', 'items', 'bare', 'apix', 'apex']);
    expect(found('-*')).toEqual([]);
  });

  it('leaves a word without one a plain substring', () => {
    expect(found('/api/')).toEqual(['orders', 'items', 'bare']);
    // The row's masked query holds a literal "*", which a plain word finds as it is.
    expect(found('x=*')).toEqual(['orders']);
  });

  it('matches within one field of the row, never across two', () => {
    // The method (GET) and the URL are fields of their own: no URL here holds "get" before "/api".
    expect(found('get*/api')).toEqual([]);
    expect(found('g*t')).toEqual(['orders', 'items', 'bare', 'apix', 'cdn', 'apex']);
    expect(wildcardMatcher('a*b')('xa\nab')).toBe(true);
    expect(wildcardMatcher('a*b')('xa\nb')).toBe(false);
    expect(wildcardMatcher('a*b*c')('abx\nac\nabc')).toBe(true);
  });

  it('agrees with a reference regular expression on random words and texts', () => {
    const random = seededRandom(20_250_101);
    const pick = (alphabet: string, length: number) =>
      Array.from({ length }, () => alphabet[Math.floor(random() * alphabet.length)]).join('');
    for (let run = 0; run < 2000; run++) {
      const word = pick('ab*', 1 + Math.floor(random() * 6));
      const text = pick('ab\n', Math.floor(random() * 12));
      // `*` as any run of characters but a line break (one field), unanchored (the alphabet has no
      // other character a regular expression reads as syntax).
      const reference = new RegExp(word.split('*').join('[^\\n]*'));
      expect([word, text, wildcardMatcher(word)(text)]).toEqual([word, text, reference.test(text)]);
    }
  });

  it('finishes on hostile input: a 100,000-character URL and a word of 1,000 stars', () => {
    const long = `https://api.example/${'a'.repeat(100_000)}`;
    expect(wildcardMatcher('*a'.repeat(1000))(long)).toBe(true);
    expect(wildcardMatcher(`${'*a'.repeat(999)}*b`)(long)).toBe(false);
    expect(wildcardMatcher(`*${'a'.repeat(500)}b*`)(long)).toBe(false);
    // Through the filter box, whose longest query is 1,000 characters.
    const [row] = foldTimeline([
      ev('long', { type: 'request-start', t: 1, client: 'fetch', method: 'GET', url: long }),
    ]).rows;
    if (!row) throw new Error('fixture');
    const word = '*a'.repeat(MAX_QUERY_LENGTH / 2);
    expect(compileFilter({ text: word }).test(row)).toBe(true);
    expect(compileFilter({ text: `${'*a'.repeat(MAX_QUERY_LENGTH / 2 - 1)}*b` }).test(row)).toBe(false);
    expect(compileFilter({ text: `-${word.slice(1)}` }).test(row)).toBe(false);
  });
});
