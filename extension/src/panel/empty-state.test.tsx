// @vitest-environment happy-dom
import { act, cleanup, fireEvent, render, screen } from '@testing-library/preact';
import { afterEach, describe, expect, it } from 'vitest';
import { manyRequests } from '../model/fixtures';
import type { PageState, TimelineEntry, WorkerUpdate } from '../shared/protocol';
import { App } from './app';
import { connectWorker, type PanelPort, staticSource } from './sources';

// The panel on a live tab as the worker feeds it: its messages go through `connectWorker`'s port,
// so what is checked here is what a worker's snapshot and updates make the panel say.

afterEach(() => {
  cleanup();
  localStorage.clear();
});

const TAB = 7;

/** A panel on tab 7, and what its worker says to it. */
function livePanel() {
  let receive: (message: unknown) => void = () => {};
  const port: PanelPort = {
    postMessage: () => {},
    disconnect: () => {},
    onMessage: {
      addListener: (callback) => {
        receive = callback;
      },
    },
    onDisconnect: { addListener: () => {} },
  };
  const source = connectWorker(TAB, { connect: () => port });
  render(<App source={source} now={() => 0} />);
  const worker = (update: WorkerUpdate) => act(() => receive(update));
  const snapshot = (page: PageState, evicted = 0, entries: TimelineEntry[] = []) =>
    worker({
      kind: 'snapshot',
      tabId: TAB,
      entries,
      settings: { preserveLog: false, record: true },
      page,
      evicted,
    });
  return { worker, snapshot };
}

const empty = () => screen.getByTestId('empty');
const said = () => screen.getByTestId('no-events').textContent;

describe('the empty state of a live tab', () => {
  it('asks for a reload where the extension is not running in the page', () => {
    const { snapshot } = livePanel();
    snapshot({ hooked: false, detected: false });
    expect(empty().dataset.state).toBe('not-hooked');
    expect(said()).toBe('The extension is not running in this page.');
    expect(empty().textContent).toContain('Reload the page to start recording.');
  });

  it('says Retryline was not detected where the page has a relay but no Retryline client', () => {
    const { snapshot } = livePanel();
    snapshot({ hooked: true, detected: false });
    expect(empty().dataset.state).toBe('not-detected');
    expect(said()).toBe('Retryline not detected on this page.');
    for (const hint of ['@retryline/fetch', '@retryline/axios', '@retryline/ky', 'Web Workers']) {
      expect(empty().textContent).toContain(hint);
    }
    // Text only: nothing to follow out of DevTools.
    expect(empty().querySelector('a')).toBeNull();
  });

  it('says no requests yet where the page uses Retryline', () => {
    const { snapshot } = livePanel();
    snapshot({ hooked: true, detected: true });
    expect(empty().dataset.state).toBe('no-requests');
    expect(said()).toBe('Retryline is on this page: no requests yet.');
  });

  it('follows the page as the worker learns of it: a new document, then its first client', () => {
    const { worker, snapshot } = livePanel();
    snapshot({ hooked: false, detected: false });
    worker({ kind: 'page', tabId: TAB, page: { hooked: true, detected: false } });
    expect(empty().dataset.state).toBe('not-detected');
    worker({ kind: 'page', tabId: TAB, page: { hooked: true, detected: true } });
    expect(empty().dataset.state).toBe('no-requests');
    // Another tab's page is not this one's.
    worker({ kind: 'page', tabId: TAB + 1, page: { hooked: false, detected: false } });
    expect(empty().dataset.state).toBe('no-requests');
  });

  it('claims nothing of the page before the worker has answered', () => {
    livePanel();
    expect(empty().dataset.state).toBe('unknown');
    expect(said()).toBe('No Retryline events from this page yet.');
  });

  it('offers Import where no page is attached', () => {
    render(<App source={staticSource([])} now={() => 0} />);
    expect(empty().dataset.state).toBe('no-page');
    expect(screen.getByTestId('empty-import')).toBeTruthy();
  });
});

describe('the dropped-requests banner', () => {
  it('says how many requests the worker dropped, and keeps the count as it changes', () => {
    const { worker, snapshot } = livePanel();
    snapshot({ hooked: true, detected: true }, 1234, manyRequests(3));
    expect(screen.getByTestId('dropped').textContent).toBe(
      '1,234 older requests were dropped: the extension keeps the latest 2,000 requests of a tab.',
    );
    worker({ kind: 'evicted', tabId: TAB, evicted: 1 });
    expect(screen.getByTestId('dropped').textContent).toBe(
      '1 older request was dropped: the extension keeps the latest 2,000 requests of a tab.',
    );
    worker({ kind: 'cleared', tabId: TAB });
    expect(screen.queryByTestId('dropped')).toBeNull();
  });

  it('says nothing when the worker dropped nothing, however full the ring', () => {
    const { snapshot } = livePanel();
    snapshot({ hooked: true, detected: true }, 0, manyRequests(2000));
    expect(screen.queryByTestId('dropped')).toBeNull();
  });

  it('goes when the panel clears the tab', () => {
    const { snapshot } = livePanel();
    snapshot({ hooked: true, detected: true }, 40, manyRequests(3));
    expect(screen.getByTestId('dropped')).toBeTruthy();
    fireEvent.click(screen.getByTestId('clear'));
    expect(screen.queryByTestId('dropped')).toBeNull();
  });
});
