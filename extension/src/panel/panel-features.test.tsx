// @vitest-environment happy-dom
import { act, cleanup, fireEvent, render, screen, waitFor } from '@testing-library/preact';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { toHar } from '../model/export';
import { API, ev, manyRequests, scenario } from '../model/fixtures';
import { foldTimeline } from '../model/timeline';
import { RING_REQUESTS, type TimelineEntry } from '../shared/protocol';
import { App } from './app';
import { networkRevealer } from './mount';
import type { PanelSource, SourceUpdate } from './sources';
import { staticSource } from './sources';

afterEach(() => {
  cleanup();
  localStorage.clear();
});

const rowIds = () => screen.queryAllByTestId('request-row').map((row) => row.dataset.requestId);

/** A live tab whose worker sends `entries` as its snapshot, having dropped `evicted` older requests. */
function liveSource(entries: TimelineEntry[], evicted = 0): PanelSource {
  return {
    live: true,
    label: 'tab 1',
    subscribe(listener: (update: SourceUpdate) => void) {
      listener({ kind: 'reset', entries });
      listener({ kind: 'settings', settings: { preserveLog: false, record: true } });
      if (evicted > 0) listener({ kind: 'evicted', evicted });
      return () => {};
    },
    clear: vi.fn(),
    updateSettings: vi.fn(),
    close: vi.fn(),
  };
}

describe('the panel’s states', () => {
  it('tells a live page with no Retryline events apart, and says Web Workers are not captured', () => {
    render(<App source={liveSource([])} now={() => 0} />);
    expect(screen.getByTestId('no-events').textContent).toBe('No Retryline events from this page yet.');
    expect(screen.getByTestId('empty').textContent).toContain(
      'requests made from Web Workers are not captured',
    );
  });

  it('says how many older requests the worker dropped, not a guess from a full ring', () => {
    render(<App source={liveSource(manyRequests(RING_REQUESTS), 3)} now={() => 0} />);
    expect(screen.getByTestId('dropped').textContent).toMatch(/^3 older requests were dropped.*2,000/);
    cleanup();
    render(<App source={liveSource(manyRequests(RING_REQUESTS))} now={() => 0} />);
    expect(screen.queryByTestId('dropped')).toBeNull();
  });

  it('names what each origin’s guards are doing now in its lane', () => {
    render(<App source={staticSource(scenario())} now={() => 0} />);
    const state = screen.getByTestId('lane-state');
    expect(state.textContent).toMatch(/^breaker half-open \(probing\) since \d\d:\d\d:\d\d$/);
  });

  it('shows the status counts, which toggle their filter', () => {
    render(<App source={staticSource(scenario())} now={() => 0} />);
    expect(screen.getByTestId('chip-retried').textContent).toBe('1 retried');
    expect(screen.getByTestId('chip-failed').textContent).toBe('2 failed');
    expect(screen.getByTestId('chip-refused').textContent).toBe('1 refused');
    fireEvent.click(screen.getByTestId('chip-retried'));
    expect(rowIds()).toEqual(['r1']);
    fireEvent.click(screen.getByTestId('chip-retried'));
    expect(rowIds()).toEqual(['r1', 'r2', 'r3']);
  });
});

describe('the detail pane’s actions', () => {
  const entries = [
    ev('c1', { type: 'request-start', t: 0, client: 'fetch', method: 'GET', url: `${API}/me` }),
    ev('c1', { type: 'attempt-start', t: 0, attempt: 1, headers: { authorization: '[redacted]' } }),
  ];

  it('copies as cURL and as fetch, saying that redacted headers stay redacted', async () => {
    const copy = vi.fn(async (_text: string) => {});
    render(<App source={staticSource(entries)} now={() => 0} copy={copy} />);
    fireEvent.click(screen.getAllByTestId('request-row')[0] as HTMLElement);
    fireEvent.click(screen.getByTestId('copy-curl'));
    expect(copy).toHaveBeenLastCalledWith(`curl '${API}/me' -H 'authorization: [redacted]'`);
    await waitFor(() => expect(screen.getByTestId('copy-status').textContent).toMatch(/stay \[redacted\]/));
    fireEvent.click(screen.getByTestId('copy-fetch'));
    expect(copy.mock.lastCall?.[0]).toMatch(/^fetch\("https:\/\/api\.example\/me", \{/);
  });

  it('reveals the URL in the Network panel only where DevTools has one', () => {
    const reveal = vi.fn();
    render(<App source={staticSource(entries)} now={() => 0} reveal={reveal} />);
    fireEvent.click(screen.getAllByTestId('request-row')[0] as HTMLElement);
    fireEvent.click(screen.getByTestId('reveal-network'));
    expect(reveal).toHaveBeenCalledWith(`${API}/me`);
    cleanup();
    render(<App source={staticSource(entries)} now={() => 0} />);
    fireEvent.click(screen.getAllByTestId('request-row')[0] as HTMLElement);
    expect(screen.queryByTestId('reveal-network')).toBeNull();
  });

  it('feature-detects Chrome’s network.show', () => {
    expect(networkRevealer(undefined)).toBeUndefined();
    expect(networkRevealer({})).toBeUndefined();
    const show = vi.fn();
    networkRevealer({ show })?.(`${API}/me`);
    expect(show).toHaveBeenCalledWith({ filter: `${API}/me` });
  });
});

describe('dropping a file on the panel', () => {
  it('imports it as the Import button does', async () => {
    render(<App source={staticSource([])} now={() => 0} />);
    const file = new File([JSON.stringify(toHar(foldTimeline(scenario())))], 'dropped.har');
    const app = document.querySelector('.rl-app') as HTMLElement;
    // A drop as the browser sends it: an event whose dataTransfer holds the file.
    const drop = new Event('drop', { bubbles: true, cancelable: true });
    Object.defineProperty(drop, 'dataTransfer', { value: { files: [file], types: ['Files'] } });
    await act(async () => {
      app.dispatchEvent(drop);
    });
    expect(drop.defaultPrevented).toBe(true);
    await waitFor(() => expect(rowIds()).toEqual(['r1', 'r2', 'r3']));
    expect(screen.getByTestId('imported').textContent).toContain('dropped.har');
  });
});

describe('the column menu', () => {
  it('hides and shows columns from the header’s menu, and remembers them', () => {
    const first = render(<App source={staticSource(scenario())} now={() => 0} />);
    const header = screen.getAllByRole('row')[0] as HTMLElement;
    fireEvent.contextMenu(header, { clientX: 10, clientY: 10 });
    const item = screen.getByTestId('column-client');
    expect(item.getAttribute('role')).toBe('menuitemcheckbox');
    expect(item.getAttribute('aria-checked')).toBe('true');
    expect(document.activeElement?.getAttribute('role')).toBe('menuitemcheckbox');
    fireEvent.click(item);
    expect(screen.getByTestId('column-client').getAttribute('aria-checked')).toBe('false');
    expect(document.querySelector('.rl-view')?.classList.contains('rl-hide-client')).toBe(true);
    fireEvent.keyDown(screen.getByTestId('column-menu'), { key: 'Escape' });
    expect(screen.queryByTestId('column-menu')).toBeNull();
    first.unmount();
    render(<App source={staticSource(scenario())} now={() => 0} />);
    expect(document.querySelector('.rl-view')?.classList.contains('rl-hide-client')).toBe(true);
    // From the keyboard: Shift+F10 on a header.
    fireEvent.keyDown(screen.getByTestId('sort-status'), { key: 'F10', shiftKey: true });
    fireEvent.click(screen.getByTestId('column-client'));
    expect(document.querySelector('.rl-view')?.classList.contains('rl-hide-client')).toBe(false);
  });
});

describe('resizing a column', () => {
  it('widens a fixed column from its header’s separator, remembers it, and a hidden column stays at 0', () => {
    const first = render(<App source={staticSource(scenario())} now={() => 0} />);
    const handle = screen.getByTestId('resize-client');
    expect(handle.getAttribute('role')).toBe('separator');
    expect(handle.getAttribute('aria-valuenow')).toBe('60');
    fireEvent.keyDown(handle, { key: 'ArrowRight' });
    const view = () => document.querySelector('.rl-view') as HTMLElement;
    expect(view().style.getPropertyValue('--rl-w-client')).toBe('68px');
    expect(screen.getByTestId('resize-client').getAttribute('aria-valuenow')).toBe('68');
    first.unmount();
    render(<App source={staticSource(scenario())} now={() => 0} />);
    expect(view().style.getPropertyValue('--rl-w-client')).toBe('68px');
    fireEvent.contextMenu(screen.getAllByRole('row')[0] as HTMLElement);
    fireEvent.click(screen.getByTestId('column-client'));
    expect(view().style.getPropertyValue('--rl-w-client')).toBe('');
  });
});
