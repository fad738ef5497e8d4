// @vitest-environment happy-dom
import { cleanup, fireEvent, render, screen, within } from '@testing-library/preact';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { EU, ev, hedgeScenario, injectedScenario, scenario, US } from '../model/fixtures';
import { foldTimeline } from '../model/timeline';
import { DetailPane } from './detail-pane';

afterEach(cleanup);

const [r1, r2] = foldTimeline(scenario()).rows;
if (!r1 || !r2) throw new Error('fixture');

describe('DetailPane', () => {
  it('lists every attempt with its status, phase and error', () => {
    render(<DetailPane row={r1} onClose={() => {}} />);
    const attempts = screen.getAllByTestId('detail-attempt');
    expect(attempts).toHaveLength(3);
    expect(attempts[0]?.textContent).toContain('Attempt 1: 503');
    expect(attempts[0]?.textContent).toContain('got a response');
    expect(attempts[1]?.textContent).toContain('Attempt 2: ECONNRESET');
    expect(attempts[1]?.textContent).toContain('may have reached the server');
    expect(attempts[1]?.textContent).toContain('TypeError (ECONNRESET): fetch failed');
    expect(attempts[2]?.textContent).toContain('Attempt 3: 200');
  });

  it('puts each wait before the attempt it delayed, with how its delay was computed', () => {
    render(<DetailPane row={r1} onClose={() => {}} />);
    const steps = [...document.querySelectorAll('.rl-step')].map((step) => step.getAttribute('data-testid'));
    expect(steps).toEqual([
      'detail-guard',
      'detail-attempt',
      'detail-wait',
      'detail-attempt',
      'detail-wait',
      'detail-attempt',
    ]);
    const [retryAfter, backoff] = screen.getAllByTestId('detail-wait');
    expect(retryAfter?.textContent).toContain('Wait: Retry-After 2 s');
    expect(retryAfter?.textContent).toContain('Retry-After header asked for 2 s');
    expect(backoff?.textContent).toContain('Wait: backoff 412 ms (exponential, full)');
    expect(backoff?.textContent).toContain(
      'exponential backoff 800 ms → capped 800 ms → full jitter → 412 ms',
    );
    expect(screen.getByTestId('detail-guard').textContent).toContain('limiter for https://api.example');
  });

  it('shows headers as recorded: redacted values stay [redacted]', () => {
    render(<DetailPane row={r1} onClose={() => {}} />);
    const first = screen.getAllByTestId('detail-attempt')[0];
    if (!first) throw new Error('attempt');
    const headers = within(first)
      .getAllByTestId('header')
      .map((row) => [row.querySelector('th')?.textContent, row.querySelector('td')?.textContent]);
    expect(headers).toEqual([
      ['accept', 'application/json'],
      ['authorization', '[redacted]'],
      ['retry-after', '2'],
      ['set-cookie', '[redacted]'],
    ]);
  });

  it('explains a request refused before any attempt', () => {
    render(<DetailPane row={r2} onClose={() => {}} />);
    expect(screen.getByTestId('detail-outcome').textContent).toBe('breaker open');
    expect(screen.getByText(/CircuitOpenError: The circuit/)).toBeTruthy();
    expect(screen.queryAllByTestId('detail-attempt')).toHaveLength(0);
  });

  it('shows the endpoint of every attempt, and each hedge after the attempt it hedged', () => {
    const [h1, , h3] = foldTimeline(hedgeScenario()).rows;
    if (!h1 || !h3) throw new Error('fixture');
    render(<DetailPane row={h1} onClose={() => {}} />);
    expect(screen.getByTestId('detail-attempts').textContent).toBe('2, and 1 hedge beside them');
    const steps = [...document.querySelectorAll('.rl-step')].map((step) => step.getAttribute('data-testid'));
    expect(steps).toEqual(['detail-attempt', 'detail-wait', 'detail-attempt', 'detail-hedge']);
    const endpoints = screen.getAllByTestId('detail-endpoint').map((element) => element.textContent);
    expect(endpoints).toEqual([`Endpoint: ${EU}`, `Endpoint: ${US}`, `Endpoint: ${EU}`]);
    const [, attempt2] = screen.getAllByTestId('detail-attempt');
    expect(attempt2?.textContent).toContain('Attempt 2: cancelled: hedge answered');
    expect(within(attempt2 as HTMLElement).getByTestId('detail-hedge-answered').textContent).toMatch(
      /^Cancelled: its hedge answered first/,
    );
    const hedge = screen.getByTestId('detail-hedge');
    expect(hedge.textContent).toContain('Hedge of attempt 2: 200');
    expect(within(hedge).getByTestId('detail-hedge-note').textContent).toMatch(/^A hedge: a second copy/);
    cleanup();
    render(<DetailPane row={h3} onClose={() => {}} />);
    expect(screen.getByTestId('detail-attempts').textContent).toBe('1');
    expect(screen.queryByTestId('detail-endpoint')).toBeNull();
    expect(screen.queryByTestId('detail-hedge')).toBeNull();
  });

  it('says of each attempt the panel’s fault injection answered that it was injected, and how', () => {
    const [f1] = foldTimeline(injectedScenario()).rows;
    if (!f1) throw new Error('fixture');
    render(<DetailPane row={f1} onClose={() => {}} />);
    expect(screen.getByTestId('detail-attempts').textContent).toBe('3 (2 injected by the Retryline panel)');
    const attempts = screen.getAllByTestId('detail-attempt');
    expect(attempts.map((attempt) => within(attempt).queryByTestId('detail-injected') !== null)).toEqual([
      true,
      true,
      false,
    ]);
    const note = within(attempts[0] as HTMLElement).getByTestId('detail-injected').textContent;
    expect(note).toMatch(/^⚡ injected by the Retryline panel \(not sent\): /);
    // A slow step only delays the attempt, which may then reach the server: the note says so.
    expect(note).toContain('unless the fault only delayed it (slow)');
    cleanup();
    render(<DetailPane row={r1} onClose={() => {}} />);
    expect(screen.getByTestId('detail-attempts').textContent).toBe('3');
    expect(screen.queryByTestId('detail-injected')).toBeNull();
  });

  it('closes', () => {
    const onClose = vi.fn();
    render(<DetailPane row={r1} onClose={onClose} />);
    fireEvent.click(screen.getByLabelText('Close details'));
    expect(onClose).toHaveBeenCalledOnce();
  });

  it('says when the extension stopped recording a request, and how many events it dropped', () => {
    const [pending] = foldTimeline([
      ev('cut', { type: 'request-start', t: 1, client: 'fetch', method: 'GET', url: 'https://api.example/' }),
      { ...ev('cut', { type: 'attempt-start', t: 2, attempt: 1 }), truncated: { dropped: 0 } },
    ]).rows;
    if (!pending) throw new Error('fixture');
    render(<DetailPane row={pending} onClose={() => {}} />);
    expect(screen.getByTestId('detail-truncated').textContent).toBe(
      'This request reached the recording limit (the extension keeps at most 500 events or 256 KB of one request): later events are not recorded, its end is',
    );
    cleanup();
    const [ended] = foldTimeline([
      ev('cut', { type: 'attempt-start', t: 2, attempt: 1 }),
      {
        ...ev('cut', {
          type: 'request-end',
          t: 3,
          outcome: 'exhausted',
          attempts: 9,
          totalDelay: 0,
          duration: 1,
        }),
        truncated: { dropped: 99_500 },
      },
    ]).rows;
    if (!ended) throw new Error('fixture');
    render(<DetailPane row={ended} onClose={() => {}} />);
    expect(screen.getByTestId('detail-truncated').textContent).toMatch(
      /^99500 later events of this request were not recorded/,
    );
    cleanup();
    render(<DetailPane row={r1} onClose={() => {}} />);
    expect(screen.queryByTestId('detail-truncated')).toBeNull();
  });
});

describe('DetailPane’s Replay', () => {
  it('asks for a GET to be sent again, and says what comes of it', () => {
    const replay = vi.fn();
    render(<DetailPane row={r1} onClose={() => {}} replay={replay} />);
    const button = screen.getByTestId('replay') as HTMLButtonElement;
    expect(button.disabled).toBe(false);
    expect(button.title).toMatch(/through the Retryline client that sent it/);
    fireEvent.click(button);
    expect(replay).toHaveBeenCalledWith(r1);
    expect(screen.getByTestId('copy-status').textContent).toMatch(/^Asked the page to send it again/);
  });

  it('is disabled for a POST, and says why', () => {
    const replay = vi.fn();
    render(<DetailPane row={r2} onClose={() => {}} replay={replay} />);
    expect(r2.method).toBe('POST');
    const button = screen.getByTestId('replay') as HTMLButtonElement;
    expect(button.disabled).toBe(true);
    expect(button.title).toBe(
      'Only GET, HEAD and OPTIONS requests are replayed: sending any other again could change data',
    );
    fireEvent.click(button);
    expect(replay).not.toHaveBeenCalled();
  });

  const timeline = foldTimeline(scenario());
  const [, , r3] = timeline.rows;
  const replayButton = () => screen.getByTestId('replay') as HTMLButtonElement;

  it('is disabled for a row sent before the tab’s last navigation (Preserve log), and says its page is gone', () => {
    if (!r3) throw new Error('fixture');
    const replay = vi.fn();
    const { navigations } = timeline;
    render(<DetailPane row={r1} onClose={() => {}} replay={replay} navigations={navigations} />);
    expect(replayButton().disabled).toBe(true);
    expect(replayButton().title).toBe(
      'This request’s page is gone: it was sent before the tab’s last navigation',
    );
    fireEvent.click(replayButton());
    expect(replay).not.toHaveBeenCalled();
    cleanup();
    // The current page's row, after the navigation.
    render(<DetailPane row={r3} onClose={() => {}} replay={replay} navigations={navigations} />);
    expect(replayButton().disabled).toBe(false);
  });

  it('is disabled for a row of a frame whose origin no frame of the page has now, as far as the worker knows', () => {
    const page = { hooked: true, detected: true };
    const replay = vi.fn();
    const shown = (frames?: string[]) => {
      cleanup();
      render(
        <DetailPane row={r1} onClose={() => {}} replay={replay} page={frames ? { ...page, frames } : page} />,
      );
      return { disabled: replayButton().disabled, title: replayButton().title };
    };
    expect(shown(['https://widget.example'])).toEqual({
      disabled: true,
      title: `This request’s page is gone: no frame of the tab’s page is of the origin that sent it (${r1.source}) now`,
    });
    expect(shown([r1.source, 'https://widget.example']).disabled).toBe(false);
    // Frames not known (the worker restarted since the page loaded): nothing to say.
    expect(shown().disabled).toBe(false);
  });

  it('is disabled for a row whose URL the extension cut: the page could not be asked for it', () => {
    const long = foldTimeline([
      ev('r9', {
        type: 'request-start',
        t: 1,
        client: 'fetch',
        method: 'GET',
        url: `${'https://api.example/'.padEnd(2047, 'x')}…`,
      }),
    ]).rows[0];
    if (!long) throw new Error('fixture');
    render(<DetailPane row={long} onClose={() => {}} replay={vi.fn()} />);
    expect(replayButton().disabled).toBe(true);
    expect(replayButton().title).toMatch(/URL is longer than the extension records/);
  });

  it('is not offered where no page feeds the panel (the viewer, an imported file)', () => {
    render(<DetailPane row={r1} onClose={() => {}} />);
    expect(screen.queryByTestId('replay')).toBeNull();
  });
});
