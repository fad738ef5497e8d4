import { describe, expect, it } from 'vitest';
import { ev, flakySession, hedgeScenario, injectedScenario, LOOPBACK_API } from '../model/fixtures';
import { foldTimeline, type RequestRow } from '../model/timeline';
import {
  attemptsCount,
  budgetLabel,
  clockSeconds,
  guardStateText,
  outcomeLabel,
  outcomeShort,
  rowStatusShort,
  rowStatusTitle,
  shortName,
} from './format';
import { fitLabel, labelWidth } from './label-fit';

/** A finished request whose one attempt failed with `error`. */
function failedWith(error: ErrorSummary): RequestRow {
  const [row] = foldTimeline([
    ev('e', { type: 'request-start', t: 0, client: 'fetch', method: 'GET', url: 'https://api.example/a' }),
    ev('e', { type: 'attempt-start', t: 0, attempt: 1 }),
    ev('e', { type: 'attempt-end', t: 5, attempt: 1, outcome: 'error', duration: 5, error }),
    ev('e', {
      type: 'request-end',
      t: 5,
      outcome: 'exhausted',
      attempts: 1,
      totalDelay: 0,
      duration: 5,
      error,
    }),
  ]).rows;
  if (!row) throw new Error('fixture');
  return row;
}

type ErrorSummary = { name: string; message: string; code?: string };

describe('the Status column', () => {
  it.each<[ErrorSummary, string]>([
    [{ name: 'TypeError', message: 'fetch failed', code: 'ECONNRESET' }, 'reset'],
    [{ name: 'TypeError', message: 'fetch failed', code: 'ECONNREFUSED' }, 'refused'],
    [{ name: 'TypeError', message: 'Failed to fetch' }, 'network'],
    [{ name: 'TimeoutError', message: 'The operation timed out' }, 'timeout'],
    [{ name: 'AxiosError', message: 'timeout of 1000ms exceeded', code: 'ECONNABORTED' }, 'timeout'],
    [{ name: 'AbortError', message: 'aborted' }, 'aborted'],
    [{ name: 'HTTPError', message: 'odd', code: 'E_SOMETHING' }, 'error'],
  ])('says a word a narrow column holds for %o: %j, and all of it in its title', (error, word) => {
    const row = failedWith(error);
    expect(rowStatusShort(row)).toBe(word);
    expect(rowStatusTitle(row)).toBe(
      `${error.code === undefined ? '' : `${error.code} `}(${error.name}: ${error.message}) · retries exhausted`,
    );
  });

  it('shows a status as it is, and a refusal before any attempt as a dash', () => {
    const rows = foldTimeline(flakySession()).rows;
    const ok = rows.find((row) => row.status === 200);
    expect(ok && [rowStatusShort(ok), rowStatusTitle(ok)]).toEqual(['200', '200 · success']);
    const refused = rows.find((row) => row.outcome === 'quota-spent');
    expect(refused && [rowStatusShort(refused), rowStatusTitle(refused)]).toEqual([
      '—',
      '— · quota spent (pacing)',
    ]);
  });
});

describe('the Outcome column', () => {
  it('is a word or two, the full label in its title', () => {
    expect([outcomeShort('exhausted'), outcomeLabel('exhausted')]).toEqual([
      'exhausted',
      'retries exhausted',
    ]);
    expect([outcomeShort('origin-failing'), outcomeLabel('origin-failing')]).toEqual([
      'origin failing',
      'origin still failing (parked)',
    ]);
    // Fits the 100 px column: at most 14 characters of 12 px text.
    for (const outcome of [
      'success',
      'exhausted',
      'not-retryable',
      'retry-after-too-long',
      'budget-exhausted',
    ] as const) {
      expect(outcomeShort(outcome).length).toBeLessThanOrEqual(14);
    }
  });
});

describe('the Name column', () => {
  it.each([
    ['/api/v1/orders?page=*', 'orders', '?page=*'],
    ['/api/v1/orders/1234', 'orders/1234', ''],
    ['/users/7d1c2a9e-4b3f-4e2a-9c1d-000000000001/avatar', 'avatar', ''],
    ['/users/7d1c2a9e-4b3f-4e2a-9c1d-000000000001', 'users/7d1c2a9e-4b3f-4e2a-9c1d-000000000001', ''],
    ['/api/', 'api/', ''],
    ['/', '/', ''],
    ['/?q=*', '/', '?q=*'],
  ])('names %s as %j with its query %j apart', (path, name, query) => {
    expect(shortName({ origin: LOOPBACK_API, path })).toEqual({ name, query });
  });

  it('keeps what a row without a URL shows (an operation’s name)', () => {
    expect(shortName({ origin: '', path: 'sync-ledger' })).toEqual({ name: 'sync-ledger', query: '' });
  });
});

it('counts the budget in retries', () => {
  expect([budgetLabel(89), budgetLabel(1), budgetLabel(0)]).toEqual([
    '89 retries left',
    '1 retry left',
    '0 retries left',
  ]);
});

describe('fitting a label to its box', () => {
  const labels = ['backoff 412 ms (exponential, full)', 'backoff 412 ms', '412 ms'];

  it('picks the longest label that fits, else none', () => {
    expect(fitLabel(labels, 400)).toBe(labels[0]);
    expect(fitLabel(labels, labelWidth('backoff 412 ms'))).toBe('backoff 412 ms');
    expect(fitLabel(labels, 50)).toBe('412 ms');
    expect(fitLabel(labels, 20)).toBe('');
  });

  it('shows the first before the box is laid out', () => {
    expect(fitLabel(labels, undefined)).toBe(labels[0]);
    expect(fitLabel([], undefined)).toBe('');
  });
});

describe('the attempts column', () => {
  it('counts the attempts, and says in words how many the panel’s fault injection answered', () => {
    const [f1, f2] = foldTimeline(injectedScenario()).rows;
    if (!f1 || !f2) throw new Error('fixture');
    expect(attemptsCount(f1)).toEqual({ text: '3', label: '3 attempts, 2 injected by the Retryline panel' });
    expect(attemptsCount(f2)).toEqual({ text: '1', label: '1 attempt' });
    expect(attemptsCount({ ...f1, truncated: { dropped: 4 } })).toEqual({
      text: '3+',
      label: '3+ attempts, 2 injected by the Retryline panel',
    });
  });

  it('counts no hedge as an attempt, and says in words how many went beside them', () => {
    const [h1, h2, h3] = foldTimeline(hedgeScenario()).rows;
    if (!h1 || !h2 || !h3) throw new Error('fixture');
    expect(attemptsCount(h1)).toEqual({ text: '2', label: '2 attempts, 1 hedge' });
    expect(attemptsCount(h2)).toEqual({ text: '1', label: '1 attempt, 1 hedge' });
    expect(attemptsCount(h3)).toEqual({ text: '1', label: '1 attempt' });
    expect(attemptsCount({ ...h1, injected: 1, hedges: [...h1.hedges, ...h2.hedges] }).label).toBe(
      '2 attempts, 1 injected by the Retryline panel, 2 hedges',
    );
  });
});

describe('guardStateText', () => {
  it('says until when an open breaker holds requests, or since when if that is not known', () => {
    const since = Date.UTC(2026, 0, 1, 12, 0, 3);
    const until = since + 30_000;
    expect(guardStateText({ kind: 'breaker-open', since, until })).toBe(
      `breaker open until ${clockSeconds(until)}`,
    );
    expect(guardStateText({ kind: 'breaker-open', since })).toBe(`breaker open since ${clockSeconds(since)}`);
  });
});
