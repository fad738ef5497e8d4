import { describe, expect, it } from 'vitest';
import { hasRedacted, toCurl, toFetch } from './copy-request';
import { API, ev } from './fixtures';
import { foldTimeline } from './timeline';

const row = foldTimeline([
  ev('c1', { type: 'request-start', t: 0, client: 'fetch', method: 'POST', url: `${API}/pay?token=*` }),
  ev('c1', {
    type: 'attempt-start',
    t: 0,
    attempt: 1,
    headers: { authorization: '[redacted]', 'x-note': "it's", 'idempotency-key': 'k1' },
  }),
]).rows[0];

describe('copying a request', () => {
  if (!row) throw new Error('no row');

  it('as cURL: the method, the URL and the headers, shell-quoted, redacted values left redacted', () => {
    expect(toCurl(row)).toBe(
      `curl '${API}/pay?token=*' -X 'POST' -H 'authorization: [redacted]' -H 'x-note: it'\\''s' -H 'idempotency-key: k1'`,
    );
    expect(hasRedacted(row)).toBe(true);
  });

  it('as fetch: the URL and init as JSON literals', () => {
    const text = toFetch(row);
    expect(text.startsWith(`fetch("${API}/pay?token=*", `)).toBe(true);
    const init = JSON.parse(text.slice(text.indexOf(', ') + 2, -2));
    expect(init).toEqual({
      method: 'POST',
      headers: { authorization: '[redacted]', 'x-note': "it's", 'idempotency-key': 'k1' },
    });
  });
});
