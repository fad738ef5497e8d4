import { describe, expect, it } from 'vitest';
import {
  compileFilter,
  FILTER_HELP,
  filterChoices,
  filterRows,
  parseTextQuery,
  REGEX_PREFIX,
  searchText,
} from './filter';
import { API, ev, manyRequests, scenario } from './fixtures';
import { foldTimeline } from './timeline';

const rows = foldTimeline(scenario()).rows;
const ids = (criteria: Parameters<typeof filterRows>[1]) =>
  filterRows(rows, criteria).rows.map((r) => r.requestId);

describe('text filter', () => {
  it('matches nothing out when empty', () => {
    expect(ids({ text: '' })).toEqual(['r1', 'r2', 'r3']);
    expect(ids({ text: '   ' })).toEqual(['r1', 'r2', 'r3']);
    expect(compileFilter({ text: '' }).active).toBe(false);
  });

  it.each([
    ['post', ['r2']], // method, case-insensitive
    ['cdn.example', ['r3']], // url
    ['404', ['r3']], // final status
    ['503', ['r1']], // an earlier attempt's status
    ['breaker-open', ['r2']], // outcome
    ['axios', ['r2']], // client
    ['circuitopenerror', ['r2']], // the request's error name
    ['TypeError', ['r1']], // an attempt's error name
    ['/orders', ['r1']], // a path is a substring, not a regex
    ['/api/v1', []], // not a regex: `v1` is not a set of flags
    ['/orders/', []], // and one with a trailing slash too
    ['nothing-like-this', []],
  ])('finds %j in %j', (text, expected) => {
    expect(ids({ text })).toEqual(expected);
  });

  it('reads re:pattern as a regular expression, whose ^ and $ match each field', () => {
    expect(ids({ text: 're:^(GET|POST)$' })).toEqual(['r1', 'r2', 'r3']);
    expect(ids({ text: 're:\\/pay$' })).toEqual(['r2']);
    expect(ids({ text: 're:^5\\d\\d$' })).toEqual(['r1']);
    expect(ids({ text: 'RE: ^404$' })).toEqual(['r3']);
    expect(ids({ text: 're:' })).toEqual(['r1', 'r2', 'r3']);
  });

  it('is case-insensitive, as the substring search is', () => {
    expect(ids({ text: 're:^post$' })).toEqual(['r2']);
  });

  it.each([
    // Paths that /pattern/flags read as a regex: /api/ with flags "ids", or /v2/ with the bad flags "sms".
    '/api/ids',
    '/v2/sms',
    '/orders/',
    '/a.b/',
  ])('filters %j as text: it looks like a URL path', (text) => {
    expect(parseTextQuery(text)).toEqual({ kind: 'substring', needle: text });
    const row = foldTimeline([
      ev('x', { type: 'request-start', t: 1, client: 'fetch', method: 'GET', url: `${API}${text}x` }),
      ev('y', { type: 'request-start', t: 1, client: 'fetch', method: 'GET', url: `${API}/api/other` }),
    ]).rows;
    expect(filterRows(row, { text }).rows.map((r) => r.requestId)).toEqual(['x']);
  });

  it('matches a regex again and again (no stateful g or y)', () => {
    expect(ids({ text: 're:example' })).toEqual(['r1', 'r2', 'r3']);
  });

  it('reports an invalid regex and then filters nothing, without throwing', () => {
    const result = filterRows(rows, { text: 're:(unclosed' });
    expect(result.error).toMatch(/^Invalid regular expression/);
    expect(result.rows.map((r) => r.requestId)).toEqual(['r1', 'r2', 'r3']);
    expect(() => compileFilter({ text: 're:[' })).not.toThrow();
    expect(parseTextQuery('re:a{2,1}').kind).toBe('invalid');
  });

  it('still applies the other filters while the regex is invalid', () => {
    const result = filterRows(rows, { text: 're:(', client: 'ky' });
    expect(result.error).toBeDefined();
    expect(result.rows.map((r) => r.requestId)).toEqual(['r3']);
  });

  it('gives a hint whose regular expression example is read as one', () => {
    expect(FILTER_HELP).toContain(`Start with ${REGEX_PREFIX} for a regular expression`);
    const example = /e\.g\. (\S+)\. /.exec(FILTER_HELP)?.[1] ?? '';
    expect(example.startsWith(REGEX_PREFIX)).toBe(true);
    expect(parseTextQuery(example).kind).toBe('regex');
  });

  it('refuses an absurdly long query', () => {
    expect(parseTextQuery('x'.repeat(5000)).kind).toBe('invalid');
  });
});

describe('choice filters', () => {
  it('filters by URL origin', () => {
    expect(ids({ text: '', origin: API })).toEqual(['r1', 'r2']);
    expect(ids({ text: '', origin: 'https://cdn.example' })).toEqual(['r3']);
  });

  it('filters by client and outcome, combined with text', () => {
    expect(ids({ text: '', client: 'fetch' })).toEqual(['r1']);
    expect(ids({ text: '', outcome: 'not-retryable' })).toEqual(['r3']);
    expect(ids({ text: 'get', outcome: 'success' })).toEqual(['r1']);
    expect(ids({ text: 'get', client: 'axios' })).toEqual([]);
  });

  it('can select rows without an absolute URL', () => {
    const partial = foldTimeline([ev('x', { type: 'attempt-start', t: 1, attempt: 1 })]).rows;
    expect(filterRows(partial, { text: '', origin: '' }).rows).toHaveLength(1);
    expect(filterRows(partial, { text: '', outcome: 'pending' }).rows).toHaveLength(1);
  });

  it('offers the origins, clients and outcomes present, sorted', () => {
    expect(filterChoices(foldTimeline(scenario()))).toEqual({
      origins: [API, 'https://cdn.example'],
      clients: ['axios', 'fetch', 'ky'],
      outcomes: ['breaker-open', 'not-retryable', 'success'],
    });
  });
});

describe('with 10 000 rows', () => {
  const big = foldTimeline(manyRequests(10_000)).rows;

  it('builds each row’s search text once and reuses it', () => {
    const row = big[42];
    if (!row) throw new Error('fixture');
    expect(searchText(row)).toBe(searchText(row));
    expect(searchText(row)).toContain(`${API}/items/42`);
  });

  it('filters them all', () => {
    expect(filterRows(big, { text: '/items/42' }).rows).toHaveLength(111); // 42, 420–429, 4200–4299
    expect(filterRows(big, { text: 're:\\/items\\/\\d{4}$', client: 'axios' }).rows).toHaveLength(4500);
  });
});
