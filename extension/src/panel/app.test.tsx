// @vitest-environment happy-dom
import { act, cleanup, fireEvent, render, screen, waitFor } from '@testing-library/preact';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { parseImport, toHar, toRecording } from '../model/export';
import {
  API,
  crossFrameScenario,
  ev,
  FRAME_ORIGIN,
  gateScenario,
  manyRequests,
  ORIGIN,
  scenario,
} from '../model/fixtures';
import { foldTimeline } from '../model/timeline';
import type { TabSettings, TimelineEntry } from '../shared/protocol';
import { App, type PanelApi } from './app';
import type { PanelSource, SourceUpdate } from './sources';
import { staticSource } from './sources';
import { readTheme } from './theme-file';

afterEach(cleanup);

function mount(source: PanelSource, props: Partial<Parameters<typeof App>[0]> = {}) {
  let api: PanelApi | undefined;
  const save = vi.fn();
  const view = render(
    <App
      source={source}
      onApi={(a) => {
        api = a;
      }}
      save={save}
      now={() => 0}
      {...props}
    />,
  );
  if (!api) throw new Error('the panel did not expose its API');
  return { ...view, api, save };
}

const rowIds = () => screen.queryAllByTestId('request-row').map((row) => row.dataset.requestId);

/** A live source the test feeds, recording what the panel asks of it. */
function liveSource() {
  let listener: ((update: SourceUpdate) => void) | undefined;
  let entries: TimelineEntry[] = [];
  const source: PanelSource & { send(update: SourceUpdate): void } = {
    live: true,
    label: 'tab 1',
    subscribe(l) {
      listener = l;
      l({ kind: 'reset', entries });
      l({ kind: 'settings', settings: { preserveLog: false, record: true } });
      return () => {
        listener = undefined;
      };
    },
    clear: vi.fn(),
    updateSettings: vi.fn(),
    close: vi.fn(),
    send(update) {
      if (update.kind === 'append') entries = [...entries, ...update.entries];
      act(() => listener?.(update));
    },
  };
  return source;
}

describe('App', () => {
  it('shows one row per request, with navigation separators', () => {
    const { api } = mount(staticSource(scenario()));
    expect(rowIds()).toEqual(['r1', 'r2', 'r3']);
    expect(screen.getByTestId('navigation').textContent).toBe(`Navigated to ${ORIGIN}/checkout`);
    expect(api.rows()).toBe(3);
    expect(screen.getByTestId('status').textContent).toBe('3 requests · 4 attempts');
  });

  it('draws the per-origin breaker and budget lanes', () => {
    mount(staticSource(scenario()));
    const lane = screen.getByTestId('lane');
    expect(lane.dataset.key).toBe(API);
    const bands = [...lane.querySelectorAll('.rl-band')].map((band) => band.getAttribute('data-state'));
    expect(bands).toEqual(['closed', 'open', 'half-open']);
    expect(lane.querySelector('polyline')?.getAttribute('points')?.split(' ')).toHaveLength(2);
    expect(screen.getByTestId('budget-track').textContent).toBe('8 retries left');
    // Each band names its state for screen readers; the legend names the colours.
    expect([...lane.querySelectorAll('.rl-band .rl-sr')].map((label) => label.textContent)).toEqual([
      'breaker closed',
      'breaker open',
      'breaker half-open',
    ]);
    expect(screen.getByTestId('legend').textContent).toBe('closedopenhalf-open');
  });

  it('draws the lanes on the rows’ axis: the whole session, whichever rows are in view', () => {
    mount(staticSource(scenario()));
    // The session runs from 999 (r1's limiter wait, as its event tells it) to 8700 (the breaker
    // half-opening).
    const at = (t: number) => `${Math.round(((t - 999) / 7701) * 100 * 1000) / 1000}%`;
    const open = screen.getByTestId('lane').querySelector<HTMLElement>('.rl-band--open');
    expect(open?.style.left).toBe(at(3700));
    expect(screen.getAllByTestId('attempt-bar').map((bar) => bar.style.left)).toEqual(
      [1100, 3150, 3592, 3900].map(at),
    );
    expect(screen.getByTestId('axis').title).toMatch(/the start of the session$/);
  });

  it('folds the lanes to a line per origin, and opens them again from an origin’s line', () => {
    mount(staticSource(scenario()));
    const lanes = screen.getByTestId('lanes');
    // By default the stylesheet folds them where the panel is short (a media query on its height).
    expect(lanes.className).toBe('rl-lanes rl-lanes--auto');
    fireEvent.click(screen.getByTestId('lanes-collapse'));
    expect(lanes.className).toBe('rl-lanes rl-lanes--collapsed');
    const expand = screen.getByRole('button', { name: `${API} · 8 retries left` });
    expect(expand.getAttribute('aria-expanded')).toBe('false');
    fireEvent.click(expand);
    expect(lanes.className).toBe('rl-lanes rl-lanes--expanded');
  });

  it('draws the recovery gate in its key’s lane: parked spans, and each probe by how it ended', () => {
    mount(staticSource(gateScenario()));
    const lane = screen.getByTestId('lane');
    expect(lane.dataset.key).toBe(API);
    expect(screen.getByLabelText('Breaker, budget and recovery gate per origin')).toBeDefined();
    const spans = screen.getAllByTestId('parked-span');
    expect(spans.map((span) => span.textContent)).toEqual(['4 parked', '1 parked']);
    expect(spans[0]?.title).toMatch(
      new RegExp(`^${API}: 4 retries parked by the recovery gate \\(at most 3 at once\\), \\S+ – \\S+$`),
    );
    // The timeline runs from 1000 to 8120: the first span from 1120 to 1760.
    expect(spans[0]?.style.left).toMatch(/^1\.68/);
    const probes = screen.getAllByTestId('probe');
    expect(
      probes.map((probe) => [probe.dataset.result, probe.textContent, probe.getAttribute('aria-label')]),
    ).toEqual([
      ['failed', '✗', 'probe 503: still failing'],
      ['recovered', '✓', 'probe 200: recovered'],
    ]);
    expect(screen.getByRole('img', { name: 'probe 200: recovered' }).title).toMatch(
      new RegExp(`^${API}: probe 200: recovered · attempt 2 of g2 · `),
    );
    // At the start of the probe's attempt (1700 in 1000 – 8120).
    expect(probes[1]?.style.left).toMatch(/^9\.83/);
  });

  it('draws no gate track for a key the gate never held', () => {
    mount(staticSource(scenario()));
    expect(screen.queryByTestId('gate-track')).toBeNull();
    expect(screen.getByLabelText('Breaker and budget per origin')).toBeDefined();
  });

  it('opens the detail pane for a clicked row and moves with the arrow keys', () => {
    mount(staticSource(scenario()));
    fireEvent.click(screen.getAllByTestId('request-row')[0] as HTMLElement);
    expect(screen.getByTestId('detail').textContent).toContain(`GET ${API}/orders?page=*`);
    fireEvent.keyDown(screen.getByLabelText('Requests'), { key: 'ArrowDown' });
    expect(screen.getByTestId('detail').textContent).toContain(`POST ${API}/pay`);
    fireEvent.keyDown(screen.getByLabelText('Requests'), { key: 'Escape' });
    expect(screen.queryByTestId('detail')).toBeNull();
  });

  it('shows a row per frame for one request id, and the details of the row clicked', () => {
    mount(staticSource(crossFrameScenario()));
    const rows = screen.getAllByTestId('request-row');
    expect(rows.map((row) => [row.dataset.requestId, row.dataset.source])).toEqual([
      ['shared', ORIGIN],
      ['shared', FRAME_ORIGIN],
    ]);
    fireEvent.click(rows[1] as HTMLElement);
    expect(screen.getByTestId('detail-source').textContent).toBe(FRAME_ORIGIN);
    expect(screen.getByTestId('detail-outcome').textContent).toMatch(/success/i);
    fireEvent.keyDown(screen.getByLabelText('Requests'), { key: 'ArrowUp' });
    expect(screen.getByTestId('detail-source').textContent).toBe(ORIGIN);
    expect(screen.getByTestId('detail-outcome').textContent).toMatch(/exhausted/i);
    // Each frame's breaker is its own lane, named by its origin.
    const lanes = screen.getAllByTestId('lane');
    expect(lanes.map((lane) => lane.dataset.source)).toEqual([ORIGIN, FRAME_ORIGIN]);
    expect(lanes[1]?.textContent).toContain(FRAME_ORIGIN);
  });

  describe('filters', () => {
    it('filters by text as it is typed', () => {
      const { api } = mount(staticSource(scenario()));
      fireEvent.input(screen.getByTestId('filter'), { target: { value: 'post' } });
      expect(rowIds()).toEqual(['r2']);
      expect(api.rows()).toBe(1);
      expect(screen.getByTestId('status').textContent).toBe('1 of 3 requests · 4 attempts');
    });

    it('filters by re:regex and shows an invalid one as an error, filtering nothing', () => {
      mount(staticSource(scenario()));
      const filter = screen.getByTestId('filter');
      // The syntax is documented where it is typed.
      expect(filter.getAttribute('placeholder')).toContain('re:');
      expect(filter.getAttribute('title')).toContain('re:');
      fireEvent.input(filter, { target: { value: 're:^4\\d\\d$' } });
      expect(rowIds()).toEqual(['r3']);
      fireEvent.input(filter, { target: { value: 're:([' } });
      expect(screen.getByTestId('filter-error').textContent).toMatch(/^Invalid regular expression/);
      expect(filter.getAttribute('aria-invalid')).toBe('true');
      expect(rowIds()).toEqual(['r1', 'r2', 'r3']);
    });

    it('filters by origin, client and outcome', () => {
      mount(staticSource(scenario()));
      fireEvent.change(screen.getByTestId('origin-filter'), { target: { value: '=https://cdn.example' } });
      expect(rowIds()).toEqual(['r3']);
      fireEvent.change(screen.getByTestId('origin-filter'), { target: { value: '' } });
      fireEvent.change(screen.getByTestId('client-filter'), { target: { value: '=axios' } });
      expect(rowIds()).toEqual(['r2']);
      fireEvent.change(screen.getByTestId('client-filter'), { target: { value: '' } });
      fireEvent.change(screen.getByTestId('outcome-filter'), { target: { value: '=success' } });
      expect(rowIds()).toEqual(['r1']);
    });
  });

  describe('the toolbar', () => {
    it('names every control, icons too, and opens and closes its More menu', () => {
      const source = liveSource();
      mount(source);
      // Docked narrow, Record and Clear show as icons: their names stay.
      expect(screen.getByRole('button', { name: 'Recording' })).toBe(screen.getByTestId('record'));
      expect(screen.getByRole('button', { name: 'Clear' })).toBe(screen.getByTestId('clear'));
      const more = screen.getByRole('button', { name: 'More: filters, export and import' });
      const menu = document.getElementById(more.getAttribute('aria-controls') ?? '');
      expect(menu?.contains(screen.getByTestId('export-json'))).toBe(true);
      expect(menu?.contains(screen.getByTestId('preserve-log'))).toBe(true);
      expect(more.getAttribute('aria-expanded')).toBe('false');
      fireEvent.click(more);
      expect(more.getAttribute('aria-expanded')).toBe('true');
      expect(menu?.className).toContain('rl-toolbar__items--open');
      fireEvent.keyDown(screen.getByTestId('origin-filter'), { key: 'Escape' });
      expect(more.getAttribute('aria-expanded')).toBe('false');
      fireEvent.click(more);
      fireEvent.pointerDown(screen.getByTestId('status'));
      expect(more.getAttribute('aria-expanded')).toBe('false');
      // An action taken from the menu closes it.
      fireEvent.click(more);
      fireEvent.click(screen.getByTestId('import'));
      expect(more.getAttribute('aria-expanded')).toBe('false');
    });
  });

  describe('with 10 000 requests', () => {
    const entries = manyRequests(10_000);

    it('renders only the rows in view', () => {
      const { api } = mount(staticSource(entries));
      expect(api.rows()).toBe(10_000);
      const rendered = screen.getAllByTestId('request-row');
      expect(rendered.length).toBeGreaterThan(10);
      expect(rendered.length).toBeLessThanOrEqual(60);
      expect(document.querySelectorAll('[data-testid="attempt-bar"]').length).toBe(rendered.length * 2);
    });

    it('keeps the axis, its ticks and every bar where they are when scrolled', () => {
      mount(staticSource(entries));
      const scroller = screen.getByTestId('list-scroller');
      const ticks = () => screen.getAllByTestId('tick').map((tick) => [tick.textContent, tick.style.left]);
      const bars = (id: string) =>
        [
          ...(document.querySelector(`[data-request-id="${id}"]`)?.querySelectorAll<HTMLElement>('.rl-bar') ??
            []),
        ].map((bar) => [bar.style.left, bar.style.width]);
      const before = { ticks: ticks(), bars: bars('req-10') };
      expect(before.bars).toHaveLength(2);
      act(() => {
        scroller.scrollTop = 24 * 12;
        fireEvent.scroll(scroller);
      });
      expect(rowIds()).not.toContain('req-0');
      expect(ticks()).toEqual(before.ticks);
      expect(bars('req-10')).toEqual(before.bars);
      // Far down, a row sits where its time is on the session's axis (1 000 000 to 1 099 997).
      act(() => {
        scroller.scrollTop = 24 * 5000;
        fireEvent.scroll(scroller);
      });
      expect(ticks()).toEqual(before.ticks);
      expect(bars('req-5000')[0]?.[0]).toBe(`${Math.round((50_000 / 99_997) * 100 * 1000) / 1000}%`);
    });

    it('renders other rows when scrolled', () => {
      mount(staticSource(entries));
      const scroller = screen.getByTestId('list-scroller');
      act(() => {
        scroller.scrollTop = 24 * 5000;
        fireEvent.scroll(scroller);
      });
      const ids = rowIds();
      expect(ids.length).toBeLessThanOrEqual(60);
      expect(ids).toContain('req-5000');
      expect(ids).not.toContain('req-0');
    });
  });

  describe('a live tab', () => {
    it('appends what the worker sends', () => {
      const source = liveSource();
      mount(source);
      expect(screen.getByTestId('empty').textContent).toContain('No Retryline events from this page yet');
      source.send({ kind: 'append', entries: scenario().slice(0, 5) });
      expect(rowIds()).toEqual(['r1']);
      source.send({ kind: 'append', entries: scenario().slice(5) });
      expect(rowIds()).toEqual(['r1', 'r2', 'r3']);
      expect(screen.getAllByTestId('attempt-bar')).toHaveLength(4);
    });

    it('asks the source to record, preserve the log, and clear', () => {
      const source = liveSource();
      mount(source);
      fireEvent.click(screen.getByTestId('record'));
      expect(source.updateSettings).toHaveBeenLastCalledWith({ record: false });
      fireEvent.click(screen.getByTestId('preserve-log'));
      expect(source.updateSettings).toHaveBeenLastCalledWith({ preserveLog: true });
      fireEvent.click(screen.getByTestId('clear'));
      expect(source.clear).toHaveBeenCalledOnce();
    });

    it('shows the worker’s settings and connection', () => {
      const source = liveSource();
      mount(source);
      const settings: TabSettings = { preserveLog: true, record: false };
      source.send({ kind: 'settings', settings });
      source.send({ kind: 'status', connected: false });
      expect((screen.getByTestId('preserve-log') as HTMLInputElement).checked).toBe(true);
      expect(screen.getByTestId('record').getAttribute('aria-pressed')).toBe('false');
      expect(screen.getByText('Recording is paused: new requests are not captured.')).toBeTruthy();
      expect(screen.getByText('Reconnecting to the extension…')).toBeTruthy();
    });

    it('has the page replay the selected row, and offers no Replay while an import is in view', () => {
      const replay = vi.fn();
      const source = Object.assign(liveSource(), { replay });
      const { api } = mount(source);
      source.send({ kind: 'append', entries: scenario() });
      // r3, the row after the tab's navigation: r1's page is gone, so is its Replay.
      fireEvent.click(screen.getAllByTestId('request-row')[0] as HTMLElement);
      expect((screen.getByTestId('replay') as HTMLButtonElement).disabled).toBe(true);
      fireEvent.click(screen.getAllByTestId('request-row')[2] as HTMLElement);
      fireEvent.click(screen.getByTestId('replay'));
      expect(replay).toHaveBeenCalledWith(
        expect.objectContaining({ source: ORIGIN, requestId: 'r3', client: 'ky', method: 'GET' }),
      );
      act(() => api.importText(JSON.stringify(toRecording(manyRequests(2), 'x'))));
      fireEvent.click(screen.getAllByTestId('request-row')[0] as HTMLElement);
      expect(screen.getByTestId('detail')).toBeTruthy();
      expect(screen.queryByTestId('replay')).toBeNull();
    });

    it('goes back to the live page after viewing an import', () => {
      const source = liveSource();
      const { api } = mount(source);
      source.send({ kind: 'append', entries: scenario() });
      act(() => api.importText(JSON.stringify(toRecording(manyRequests(2), 'x'))));
      expect(rowIds()).toEqual(['req-0', 'req-1']);
      fireEvent.click(screen.getByText('Back to the live page'));
      expect(rowIds()).toEqual(['r1', 'r2', 'r3']);
    });
  });

  describe('with no page attached', () => {
    it('shows an empty state that offers Import', () => {
      mount(staticSource([]));
      expect(screen.getByTestId('empty').textContent).toContain('No page attached');
      expect(screen.getByTestId('empty-import')).toBeTruthy();
    });

    it('shows no Record or Preserve log, which have nothing to act on; exports nothing while empty', () => {
      const { api } = mount(staticSource([]));
      expect(screen.queryByTestId('record')).toBeNull();
      expect(screen.queryByTestId('preserve-log')).toBeNull();
      const exports = () =>
        ['export-json', 'export-har'].map((id) => (screen.getByTestId(id) as HTMLButtonElement).disabled);
      expect(exports()).toEqual([true, true]);
      expect((screen.getByTestId('import') as HTMLButtonElement).disabled).toBe(false);
      act(() => api.importText(JSON.stringify(toRecording(scenario(), 'x'))));
      expect(exports()).toEqual([false, false]);
    });

    it('loads ?src= through fetch', async () => {
      const fetchImpl = vi.fn(async () => new Response(JSON.stringify(toRecording(scenario(), 'node'))));
      mount(staticSource([]), { src: '/recording.json', fetch: fetchImpl as never });
      await waitFor(() => expect(rowIds()).toEqual(['r1', 'r2', 'r3']));
      expect(screen.getByTestId('imported').textContent).toContain('recording.json');
    });

    it('shows why ?src= did not load', async () => {
      mount(staticSource([]), { src: 'https://elsewhere.example/x.json', fetch: vi.fn() as never });
      await waitFor(() => expect(screen.getByTestId('notice').textContent).toMatch(/only recordings from/));
    });
  });

  describe('export and import', () => {
    it('exports the entries as a Recording and the timeline as HAR', () => {
      const { api, save } = mount(staticSource(scenario(), 'demo'));
      const recording = JSON.parse(api.exportJson());
      expect(recording).toMatchObject({ format: 'retryline-recording', version: 1, source: 'demo' });
      expect(recording.entries).toEqual(scenario());
      expect(JSON.parse(api.exportHar())).toEqual(
        JSON.parse(JSON.stringify(toHar(foldTimeline(scenario())))),
      );

      fireEvent.click(screen.getByTestId('export-json'));
      fireEvent.click(screen.getByTestId('export-har'));
      expect(save.mock.calls.map(([name, , type]) => [name.replace(/\d/g, '0'), type])).toEqual([
        ['retryline-0000-00-00T00-00-00.json', 'application/json'],
        ['retryline-0000-00-00T00-00-00.har', 'application/json'],
      ]);
      const saved = JSON.parse(save.mock.calls[0]?.[1]);
      expect(saved).toEqual({ ...JSON.parse(api.exportJson()), recordedAt: saved.recordedAt });
    });

    it('round-trips its own exports to the same rows', () => {
      const { api } = mount(staticSource(scenario()));
      const before = document.querySelector('.rl-list__window')?.innerHTML;
      for (const text of [api.exportJson(), api.exportHar()]) {
        act(() => api.importText(text));
        expect(document.querySelector('.rl-list__window')?.innerHTML).toBe(before);
      }
    });

    it('imports a file chosen with the hidden file input', async () => {
      mount(staticSource([]));
      const input = screen.getByTestId('import-file') as HTMLInputElement;
      expect(input.type).toBe('file');
      expect(input.hidden).toBe(true);
      const file = new File([JSON.stringify(toHar(foldTimeline(scenario())))], 'run.har');
      Object.defineProperty(input, 'files', { value: [file], configurable: true });
      fireEvent.change(input);
      await waitFor(() => expect(rowIds()).toEqual(['r1', 'r2', 'r3']));
      expect(screen.getByTestId('imported').textContent).toContain('run.har');
    });

    it('refuses a file over the import limit by its size, without reading it', async () => {
      mount(staticSource(scenario()));
      const input = screen.getByTestId('import-file') as HTMLInputElement;
      // A 600 MB file: its size is known before a byte of it is read.
      const text = vi.fn(async () => 'x'.repeat(10));
      const huge = { name: 'huge.json', size: 600 * 1024 * 1024, text };
      Object.defineProperty(input, 'files', { value: [huge], configurable: true });
      fireEvent.change(input);
      await waitFor(() =>
        expect(screen.getByTestId('notice').textContent).toContain(
          'Import failed: The file is too large to import (more than 64 MB).',
        ),
      );
      expect(text).not.toHaveBeenCalled();
      expect(rowIds()).toEqual(['r1', 'r2', 'r3']);
    });

    it('clicks the file input for the Import button', () => {
      mount(staticSource([]));
      const input = screen.getByTestId('import-file') as HTMLInputElement;
      const click = vi.spyOn(input, 'click').mockImplementation(() => {});
      fireEvent.click(screen.getByTestId('import'));
      expect(click).toHaveBeenCalledOnce();
    });

    it('shows an import error and keeps the rows it had', () => {
      const { api } = mount(staticSource(scenario()));
      act(() => api.importText('{"log":{"entries":[{}]}}'));
      expect(screen.getByTestId('notice').textContent).toMatch(
        /Import failed: This HAR has no Retryline data/,
      );
      expect(rowIds()).toEqual(['r1', 'r2', 'r3']);
    });
  });

  describe('with its stylesheet', () => {
    it('highlights the selected row, odd or even, as the arrow keys move it', async () => {
      const style = document.createElement('style');
      style.textContent = await readTheme();
      document.head.append(style);
      try {
        mount(staticSource(manyRequests(6)));
        const row = (n: number) => document.querySelector(`[data-request-id="req-${n}"]`) as HTMLElement;
        const background = (n: number) => getComputedStyle(row(n)).backgroundColor;
        const stripes = [background(0), background(1)];
        expect(stripes[0]).not.toBe(stripes[1]);
        fireEvent.click(row(0));
        const selected = background(0);
        expect(stripes).not.toContain(selected);
        for (let n = 1; n < 4; n++) {
          fireEvent.keyDown(screen.getByLabelText('Requests'), { key: 'ArrowDown' });
          // The second and fourth rows lost their highlight to the stripes' :nth-child(even).
          expect(background(n), `row ${n + 1}`).toBe(selected);
          expect(background(n - 1)).toBe(stripes[(n - 1) % 2]);
        }
      } finally {
        style.remove();
      }
    });
  });

  describe('text-only rendering', () => {
    const payload = '<img src=x onerror=alert(1)>';
    const hostile: TimelineEntry[] = [
      { type: 'navigation', url: `${ORIGIN}/${payload}`, t: 0 },
      ev('x', { type: 'request-start', t: 1, client: payload, method: payload, url: `${API}/${payload}` }),
      ev('x', { type: 'attempt-start', t: 2, attempt: 1, headers: { 'x-evil': payload } }),
      ev('x', {
        type: 'attempt-end',
        t: 3,
        attempt: 1,
        outcome: 'error',
        duration: 1,
        error: { name: payload, message: payload, code: payload },
      }),
      ev('x', { type: 'guard-wait', t: 4, attempt: 2, guard: 'limiter', key: payload, waited: 1 }),
      ev('x', { type: 'breaker-state', t: 5, key: payload, from: 'closed', to: 'open' }),
      ev('x', { type: 'retry-parked', t: 5, attempt: 2, key: payload, failures: 3 }),
      ev('x', { type: 'retry-released', t: 6, attempt: 2, key: payload, reason: 'probe', waited: 1 }),
      ev('x', {
        type: 'request-end',
        t: 6,
        outcome: 'exhausted',
        attempts: 1,
        totalDelay: 0,
        duration: 5,
        error: { name: payload, message: payload },
      }),
    ];

    it('renders page data as text, never as markup', () => {
      const { container } = mount(staticSource(hostile));
      fireEvent.click(screen.getByTestId('request-row'));
      fireEvent.input(screen.getByTestId('filter'), { target: { value: 'img' } });
      expect(container.querySelector('img')).toBeNull();
      expect(document.querySelector('img')).toBeNull();
      expect(screen.getByTestId('request-row').textContent).toContain(payload);
      expect(screen.getByTestId('detail').textContent).toContain(`x-evil${payload}`);
      expect(screen.getByTestId('navigation').textContent).toContain(payload);
      expect(screen.getByTestId('lane').textContent).toContain(payload);
      expect(screen.getByTestId('probe').title).toContain(
        `${payload}: probe: no result yet · attempt 2 of x`,
      );
      expect(screen.getByTestId('parked-span').title).toContain(payload);
    });

    it('keeps an imported payload inert too', () => {
      const { api } = mount(staticSource([]));
      act(() => api.importText(JSON.stringify(toRecording(hostile, payload))));
      expect(document.querySelector('img')).toBeNull();
      expect(parseImport(api.exportJson())).toMatchObject({ format: 'recording' });
    });
  });
});
