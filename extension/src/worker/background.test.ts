import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ordinaryRequest } from '../model/fixtures';
import { NAMESPACE, PANEL_PORT, PROTOCOL_VERSION, RING_REQUESTS } from '../shared/protocol';

// The background script itself, wired to a fake `browser`: what a panel's port and a relay's
// messages do to a tab's fault rules, as the real worker runs them (each test imports it afresh).

type Listener = (...args: never[]) => unknown;

function event() {
  const listeners = new Set<Listener>();
  return {
    listeners,
    addListener: (listener: Listener) => listeners.add(listener),
    removeListener: (listener: Listener) => listeners.delete(listener),
    emit: (...args: unknown[]) =>
      [...listeners].map((listener) => (listener as (...a: unknown[]) => unknown)(...args)),
  };
}

const fake = vi.hoisted(() => ({ browser: undefined as unknown }));
vi.mock('webextension-polyfill', () => ({
  get default() {
    return fake.browser;
  },
}));

const EXTENSION = 'chrome-extension://retryline-test/';

/** `storage.session` as a map of JSON values, kept across a worker's restart. */
function fakeSession(items = new Map<string, unknown>()) {
  const copy = (value: unknown) => JSON.parse(JSON.stringify(value));
  return {
    items,
    get: vi.fn(async (keys: string | string[]) => {
      const out: Record<string, unknown> = {};
      for (const key of Array.isArray(keys) ? keys : [keys]) {
        if (items.has(key)) out[key] = copy(items.get(key));
      }
      return out;
    }),
    set: vi.fn(async (values: Record<string, unknown>) => {
      for (const [key, value] of Object.entries(values)) items.set(key, copy(value));
    }),
    remove: vi.fn(async (keys: string | string[]) => {
      for (const key of Array.isArray(keys) ? keys : [keys]) items.delete(key);
    }),
  };
}

function fakeBrowser(session = fakeSession()) {
  return {
    runtime: {
      id: 'retryline-test',
      getURL: (path: string) => `${EXTENSION}${path}`,
      onMessage: event(),
      onConnect: event(),
    },
    storage: { session },
    tabs: {
      sendMessage: vi.fn(async (_tabId: number, _message: unknown) => undefined),
      onRemoved: event(),
    },
  };
}

let browser: ReturnType<typeof fakeBrowser>;

beforeEach(async () => {
  browser = fakeBrowser();
  fake.browser = browser;
  vi.resetModules();
  await import('./background');
});

afterEach(() => {
  vi.spyOn(console, 'warn').mockImplementation(() => {});
});

/** A panel's port, as an extension page of ours opens it. */
function connectPanel() {
  const port = {
    name: PANEL_PORT,
    sender: { id: 'retryline-test', url: `${EXTENSION}panel.html` },
    postMessage: vi.fn(),
    disconnect: vi.fn(),
    onMessage: event(),
    onDisconnect: event(),
  };
  browser.runtime.onConnect.emit(port);
  return {
    port,
    send: (message: unknown) => port.onMessage.emit(message),
    close: () => port.onDisconnect.emit(port),
    updates: (kind: string) =>
      port.postMessage.mock.calls
        .map(([update]) => update as { kind: string })
        .filter((update) => update.kind === kind),
  };
}

/** What a relay in frame `frameId` of tab `tabId`, showing `url`, gets back for its new-document notice. */
function newDocument(tabId: number, frameId = 0, url = 'https://app.example/'): unknown {
  const sender = { id: 'retryline-test', tab: { id: tabId }, frameId, url };
  const [answer] = browser.runtime.onMessage.emit(
    { ns: NAMESPACE, v: PROTOCOL_VERSION, kind: 'document' },
    sender,
  );
  return answer;
}

const rules = (id: string) => [
  { id, url: '/api/', steps: [{ step: 'status', status: 503 }, { step: 'passthrough' }] },
];
const faults = (rulesOf: unknown[], seed?: number) => ({
  ns: NAMESPACE,
  v: PROTOCOL_VERSION,
  kind: 'faults',
  rules: rulesOf,
  ...(seed === undefined ? {} : { seed }),
});
const sentTo = (tabId: number) =>
  browser.tabs.sendMessage.mock.calls.filter(([tab]) => tab === tabId).map(([, message]) => message);
/** Where each message to tab `tabId` went: `frame n`, or `every frame` for one sent to the whole tab. */
const framesOf = (tabId: number) =>
  (browser.tabs.sendMessage.mock.calls as unknown[][])
    .filter(([tab]) => tab === tabId)
    .map(([, message, options]) => {
      const { frameId } = (options ?? {}) as { frameId?: number };
      const { rules: sent } = message as { rules: unknown[] };
      return [frameId === undefined ? 'every frame' : `frame ${frameId}`, sent.length > 0 ? 'rules' : 'drop'];
    });

describe('the worker carrying fault rules from a panel to its tab', () => {
  it('sends a panel’s rules to its tab’s top frame, and tells the panels of the tab', async () => {
    const panel = connectPanel();
    panel.send({ kind: 'subscribe', tabId: 7 });
    panel.send({ kind: 'faults', tabId: 7, rules: rules('a'), seed: 5 });
    expect(sentTo(7)).toEqual([faults(rules('a'), 5)]);
    expect(framesOf(7)).toEqual([['frame 0', 'rules']]);
    expect(panel.updates('faults')).toEqual([{ kind: 'faults', tabId: 7, rules: rules('a'), seed: 5 }]);
  });

  it('sends rules to the top frame and the frames of its origin, never to a frame of another origin', () => {
    newDocument(7, 0, 'https://app.example/');
    newDocument(7, 3, 'https://app.example/embedded');
    newDocument(7, 5, 'https://ads.example/slot');
    newDocument(7, 6, 'https://app.example:8443/');
    const panel = connectPanel();
    panel.send({ kind: 'subscribe', tabId: 7 });
    panel.send({ kind: 'faults', tabId: 7, rules: rules('a') });
    expect(framesOf(7)).toEqual([
      ['frame 0', 'rules'],
      ['frame 3', 'rules'],
    ]);
    // A change of rules goes the same way.
    panel.send({ kind: 'faults', tabId: 7, rules: rules('b') });
    expect(framesOf(7).slice(2)).toEqual([
      ['frame 0', 'rules'],
      ['frame 3', 'rules'],
    ]);
  });

  it('answers a new document of a frame of another origin with nothing, one of the top frame’s origin with the rules', async () => {
    newDocument(7, 0, 'https://app.example/');
    const panel = connectPanel();
    panel.send({ kind: 'subscribe', tabId: 7 });
    panel.send({ kind: 'faults', tabId: 7, rules: rules('a') });
    expect(newDocument(7, 5, 'https://ads.example/slot')).toBeUndefined();
    await expect(newDocument(7, 3, 'https://app.example/embedded')).resolves.toEqual(faults(rules('a')));
    // However often it reloads, the frame of another origin is told nothing, and nothing is sent to it.
    for (let n = 0; n < 5; n += 1) expect(newDocument(7, 5, 'https://ads.example/slot')).toBeUndefined();
    // A frame that navigates to another origin is one no longer.
    expect(newDocument(7, 3, 'https://ads.example/')).toBeUndefined();
    panel.send({ kind: 'faults', tabId: 7, rules: rules('b') });
    expect(framesOf(7)).toEqual([
      ['frame 0', 'rules'],
      ['frame 0', 'rules'],
    ]);
  });

  it('gives a frame nothing until the tab’s top document is known, and nothing to a sandboxed one', () => {
    const panel = connectPanel();
    panel.send({ kind: 'subscribe', tabId: 7 });
    panel.send({ kind: 'faults', tabId: 7, rules: rules('a') });
    expect(newDocument(7, 3, 'https://app.example/embedded')).toBeUndefined();
    const sandboxed = {
      id: 'retryline-test',
      tab: { id: 7 },
      frameId: 4,
      url: 'https://app.example/sandboxed',
      origin: 'null',
    };
    newDocument(7, 0, 'https://app.example/');
    const [answer] = browser.runtime.onMessage.emit(
      { ns: NAMESPACE, v: PROTOCOL_VERSION, kind: 'document' },
      sandboxed,
    );
    expect(answer).toBeUndefined();
  });

  it('lets the top document’s origin decide: after it navigates to another origin, frames of the old one get nothing', async () => {
    newDocument(7, 0, 'https://app.example/');
    newDocument(7, 3, 'https://app.example/embedded');
    const panel = connectPanel();
    panel.send({ kind: 'subscribe', tabId: 7 });
    panel.send({ kind: 'faults', tabId: 7, rules: rules('a') });
    expect(framesOf(7)).toEqual([
      ['frame 0', 'rules'],
      ['frame 3', 'rules'],
    ]);

    await expect(newDocument(7, 0, 'https://other.example/')).resolves.toEqual(faults(rules('a')));
    // The new page embeds the old origin: a third party to it now.
    expect(newDocument(7, 8, 'https://app.example/embedded')).toBeUndefined();
    await expect(newDocument(7, 9, 'https://other.example/frame')).resolves.toEqual(faults(rules('a')));
    panel.send({ kind: 'faults', tabId: 7, rules: rules('b') });
    expect(framesOf(7).slice(2)).toEqual([
      ['frame 0', 'rules'],
      ['frame 9', 'rules'],
    ]);
  });

  it('tells every frame of the tab to drop the rules, the frames it sent them to included, when they are removed', () => {
    newDocument(7, 0, 'https://app.example/');
    newDocument(7, 3, 'https://app.example/embedded');
    newDocument(7, 5, 'https://ads.example/slot');
    const panel = connectPanel();
    panel.send({ kind: 'subscribe', tabId: 7 });
    panel.send({ kind: 'faults', tabId: 7, rules: rules('a') });
    panel.send({ kind: 'faults', tabId: 7, rules: [] });
    panel.send({ kind: 'faults', tabId: 7, rules: rules('b') });
    panel.close();
    expect(framesOf(7)).toEqual([
      ['frame 0', 'rules'],
      ['frame 3', 'rules'],
      ['every frame', 'drop'],
      ['frame 0', 'rules'],
      ['frame 3', 'rules'],
      ['every frame', 'drop'],
    ]);
  });

  it('forgets a closed tab’s frames', () => {
    newDocument(7, 0, 'https://app.example/');
    browser.tabs.onRemoved.emit(7);
    const panel = connectPanel();
    panel.send({ kind: 'subscribe', tabId: 7 });
    panel.send({ kind: 'faults', tabId: 7, rules: rules('a') });
    expect(newDocument(7, 3, 'https://app.example/embedded')).toBeUndefined();
  });

  it('takes rules only for the tab the port shows, and only rules that check', () => {
    const panel = connectPanel();
    panel.send({ kind: 'faults', tabId: 7, rules: rules('a') });
    panel.send({ kind: 'subscribe', tabId: 7 });
    panel.send({ kind: 'faults', tabId: 8, rules: rules('a') });
    panel.send({ kind: 'faults', tabId: 7, rules: [{ id: 'bad', url: '/x', steps: [] }] });
    expect(browser.tabs.sendMessage).not.toHaveBeenCalled();
  });

  it('keeps rules per tab: each new document gets its own tab’s, in every frame', async () => {
    const seven = connectPanel();
    const nine = connectPanel();
    seven.send({ kind: 'subscribe', tabId: 7 });
    nine.send({ kind: 'subscribe', tabId: 9 });
    seven.send({ kind: 'faults', tabId: 7, rules: rules('seven') });
    nine.send({ kind: 'faults', tabId: 9, rules: rules('nine') });
    await expect(newDocument(7)).resolves.toEqual(faults(rules('seven')));
    // A frame of the top document's origin.
    await expect(newDocument(7, 3)).resolves.toEqual(faults(rules('seven')));
    await expect(newDocument(9)).resolves.toEqual(faults(rules('nine')));
    expect(newDocument(10)).toBeUndefined();
  });

  it('clears a tab’s rules when its last panel port disconnects, and only then', async () => {
    const first = connectPanel();
    const second = connectPanel();
    const other = connectPanel();
    first.send({ kind: 'subscribe', tabId: 7 });
    second.send({ kind: 'subscribe', tabId: 7 });
    other.send({ kind: 'subscribe', tabId: 9 });
    first.send({ kind: 'faults', tabId: 7, rules: rules('a') });
    other.send({ kind: 'faults', tabId: 9, rules: rules('b') });

    first.close();
    expect(sentTo(7)).toEqual([faults(rules('a'))]);
    await expect(newDocument(7)).resolves.toEqual(faults(rules('a')));

    second.close();
    expect(sentTo(7)).toEqual([faults(rules('a')), faults([])]);
    expect(newDocument(7)).toBeUndefined();
    // Another tab's panel and rules are untouched.
    await expect(newDocument(9)).resolves.toEqual(faults(rules('b')));
    expect(sentTo(9)).toEqual([faults(rules('b'))]);
  });

  it('clears a tab’s rules when its last panel turns to another tab', () => {
    const panel = connectPanel();
    panel.send({ kind: 'subscribe', tabId: 7 });
    panel.send({ kind: 'faults', tabId: 7, rules: rules('a') });
    panel.send({ kind: 'subscribe', tabId: 8 });
    expect(sentTo(7)).toEqual([faults(rules('a')), faults([])]);
  });

  it('hands a panel that subscribes the tab’s rules after its snapshot', async () => {
    const setter = connectPanel();
    setter.send({ kind: 'subscribe', tabId: 7 });
    setter.send({ kind: 'faults', tabId: 7, rules: rules('a') });
    const late = connectPanel();
    late.send({ kind: 'subscribe', tabId: 7 });
    await vi.waitFor(() => expect(late.updates('faults')).toHaveLength(1));
    const kinds = late.port.postMessage.mock.calls.map(([update]) => (update as { kind: string }).kind);
    expect(kinds).toEqual(['snapshot', 'faults']);
    expect(late.updates('faults')).toEqual([{ kind: 'faults', tabId: 7, rules: rules('a') }]);
  });

  it('takes an empty list as removing the rules', () => {
    const panel = connectPanel();
    panel.send({ kind: 'subscribe', tabId: 7 });
    panel.send({ kind: 'faults', tabId: 7, rules: rules('a') });
    panel.send({ kind: 'faults', tabId: 7, rules: [] });
    expect(sentTo(7)).toEqual([faults(rules('a')), faults([])]);
    expect(newDocument(7)).toBeUndefined();
    panel.close();
    // Nothing left to take back.
    expect(sentTo(7)).toHaveLength(2);
  });

  it('refuses a port from anything but its own pages', () => {
    const port = {
      name: PANEL_PORT,
      sender: { id: 'retryline-test', url: 'https://app.example/' },
      postMessage: vi.fn(),
      disconnect: vi.fn(),
      onMessage: event(),
      onDisconnect: event(),
    };
    browser.runtime.onConnect.emit(port);
    expect(port.disconnect).toHaveBeenCalled();
    expect(port.onMessage.listeners.size).toBe(0);
  });
});

describe('the worker carrying a panel’s replay to its tab', () => {
  const replay = { ns: NAMESPACE, v: PROTOCOL_VERSION, kind: 'replay', requestId: 'r1' };
  const calls = () => browser.tabs.sendMessage.mock.calls as unknown[][];

  it('sends it to every frame of the tab, with the origin of the frame whose request it is', () => {
    const panel = connectPanel();
    panel.send({ kind: 'subscribe', tabId: 7 });
    panel.send({ kind: 'replay', tabId: 7, source: 'https://app.example', requestId: 'r1' });
    expect(calls()).toEqual([[7, { ...replay, origin: 'https://app.example' }]]);
  });

  it('sends the replay of an opaque origin’s request to its frame alone', () => {
    const panel = connectPanel();
    panel.send({ kind: 'subscribe', tabId: 7 });
    panel.send({ kind: 'replay', tabId: 7, source: 'null (frame 3)', requestId: 'r1' });
    expect(calls()).toEqual([[7, replay, { frameId: 3 }]]);
  });

  it('takes a replay only for the tab the port shows, and only one that checks', () => {
    const panel = connectPanel();
    panel.send({ kind: 'replay', tabId: 7, source: 'https://app.example', requestId: 'r1' });
    panel.send({ kind: 'subscribe', tabId: 7 });
    panel.send({ kind: 'replay', tabId: 8, source: 'https://app.example', requestId: 'r1' });
    panel.send({ kind: 'replay', tabId: 7, source: 'https://app.example' });
    panel.send({ kind: 'replay', tabId: 7, source: 'https://app.example', requestId: '' });
    expect(browser.tabs.sendMessage).not.toHaveBeenCalled();
  });

  it('survives a tab that is gone', async () => {
    browser.tabs.sendMessage.mockRejectedValueOnce(new Error('No tab with id: 7'));
    const panel = connectPanel();
    panel.send({ kind: 'subscribe', tabId: 7 });
    panel.send({ kind: 'replay', tabId: 7, source: 'https://app.example', requestId: 'r1' });
    panel.send({ kind: 'replay', tabId: 7, source: 'https://app.example', requestId: 'r2' });
    expect(calls()).toHaveLength(2);
  });
});

/** What the relay in frame `frameId` of tab `tabId` sends, as the browser delivers it. */
function fromRelay(tabId: number, message: Record<string, unknown>, frameId = 0): void {
  const sender = { id: 'retryline-test', tab: { id: tabId }, frameId, url: 'https://app.example/' };
  browser.runtime.onMessage.emit({ ns: NAMESPACE, v: PROTOCOL_VERSION, ...message }, sender);
}
const detected = (tabId: number, frameId = 0) => fromRelay(tabId, { kind: 'detected' }, frameId);
/** `count` ordinary requests from the tab's top frame, numbered from `from`, in batches a relay may send. */
function requests(tabId: number, from: number, count: number): void {
  const events = [];
  for (let n = from; n < from + count; n += 1) events.push(...ordinaryRequest(n));
  for (let at = 0; at < events.length; at += 200) {
    fromRelay(tabId, { kind: 'events', events: events.slice(at, at + 200) });
  }
}

const UNKNOWN = { hooked: false, detected: false };
const HOOKED = { hooked: true, detected: false };
const DETECTED = { hooked: true, detected: true };

/** A panel subscribed to `tabId`, once its snapshot came. */
async function subscribed(tabId: number) {
  const panel = connectPanel();
  panel.send({ kind: 'subscribe', tabId });
  await vi.waitFor(() => expect(panel.updates('snapshot')).toHaveLength(1));
  return panel;
}
const pages = (panel: ReturnType<typeof connectPanel>) =>
  panel.updates('page').map((update) => (update as unknown as { page: unknown }).page);

describe('the worker telling panels what it knows of the tab’s page', () => {
  it('knows no page in a tab whose relay never reported one (loaded before the extension, a browser page)', async () => {
    const panel = await subscribed(7);
    expect(panel.updates('snapshot')[0]).toMatchObject({ page: UNKNOWN, evicted: 0 });
  });

  it('takes each new top document as hooked, then detected once any frame says it uses Retryline', async () => {
    const panel = await subscribed(7);
    newDocument(7);
    await vi.waitFor(() => expect(pages(panel)).toEqual([HOOKED]));
    // A frame's client, then the top frame's: news once.
    detected(7, 3);
    detected(7);
    await vi.waitFor(() => expect(pages(panel)).toEqual([HOOKED, DETECTED]));
    // A frame's new document is no new page; the top frame's is.
    newDocument(7, 3);
    newDocument(7);
    await vi.waitFor(() => expect(pages(panel)).toEqual([HOOKED, DETECTED, HOOKED]));
    // Another tab's page is not this one's.
    const other = await subscribed(9);
    detected(9);
    await vi.waitFor(() => expect(pages(other)).toEqual([DETECTED]));
    expect(pages(panel)).toEqual([HOOKED, DETECTED, HOOKED]);
  });

  it('counts a page that sends events as using Retryline, recording or not', async () => {
    const panel = await subscribed(7);
    newDocument(7);
    panel.send({ kind: 'settings', tabId: 7, settings: { record: false } });
    requests(7, 0, 1);
    await vi.waitFor(() => expect(pages(panel)).toEqual([HOOKED, DETECTED]));
    expect(panel.updates('append')).toHaveLength(1); // the navigation only
  });

  it('starts a tab’s log at the first document it hears of, with no navigation entry to mark, then marks each next one', async () => {
    newDocument(7);
    const panel = await subscribed(7);
    expect(panel.updates('snapshot')[0]).toMatchObject({ entries: [], page: HOOKED });
    newDocument(7);
    await vi.waitFor(() => expect(panel.updates('append')).toHaveLength(1));
    expect(panel.updates('append')[0]).toMatchObject({
      entries: [{ type: 'navigation', url: 'https://app.example/' }],
    });
  });

  it('hands a panel that subscribes later the page in its snapshot', async () => {
    newDocument(7);
    detected(7);
    const panel = await subscribed(7);
    expect(panel.updates('snapshot')[0]).toMatchObject({ page: DETECTED });
  });

  it('keeps what it knows of a page across its own restart', async () => {
    newDocument(7);
    detected(7);
    const session = browser.storage.session;
    await vi.waitFor(() => expect(session.items.get('tab:7')).toMatchObject({ page: DETECTED }));
    browser = fakeBrowser(fakeSession(session.items));
    fake.browser = browser;
    vi.resetModules();
    await import('./background');
    const panel = await subscribed(7);
    expect(panel.updates('snapshot')[0]).toMatchObject({ page: DETECTED });
  });
});

describe('the worker counting the requests its ring dropped', () => {
  const evicted = (panel: ReturnType<typeof connectPanel>) =>
    panel.updates('evicted').map((update) => (update as unknown as { evicted: number }).evicted);

  it('tells the panels how many requests it dropped, in each change and in a snapshot, across a restart', async () => {
    const panel = await subscribed(7);
    newDocument(7);
    requests(7, 0, RING_REQUESTS + 3);
    await vi.waitFor(() => expect(evicted(panel).at(-1)).toBe(3));
    // Only when it changes.
    expect(new Set(evicted(panel)).size).toBe(evicted(panel).length);
    requests(7, RING_REQUESTS + 3, 2);
    await vi.waitFor(() => expect(evicted(panel).at(-1)).toBe(5));
    const late = await subscribed(7);
    expect(late.updates('snapshot')[0]).toMatchObject({ evicted: 5 });

    const session = browser.storage.session;
    await vi.waitFor(() => expect(session.items.get('tab:7')).toMatchObject({ evicted: 5 }));
    browser = fakeBrowser(fakeSession(session.items));
    fake.browser = browser;
    vi.resetModules();
    await import('./background');
    const restarted = await subscribed(7);
    expect(restarted.updates('snapshot')[0]).toMatchObject({ evicted: 5 });
  }, 20_000);

  it('starts the count again when the tab is cleared, and at a new page unless Preserve log is on', async () => {
    const panel = await subscribed(7);
    requests(7, 0, RING_REQUESTS + 1);
    await vi.waitFor(() => expect(evicted(panel).at(-1)).toBe(1));
    panel.send({ kind: 'clear', tabId: 7 });
    await vi.waitFor(() => expect(panel.updates('cleared')).toHaveLength(1));
    const afterClear = await subscribed(7);
    expect(afterClear.updates('snapshot')[0]).toMatchObject({ evicted: 0 });

    requests(7, 0, RING_REQUESTS + 1);
    await vi.waitFor(() => expect(evicted(panel).at(-1)).toBe(1));
    panel.send({ kind: 'settings', tabId: 7, settings: { preserveLog: true } });
    newDocument(7);
    const preserved = await subscribed(7);
    expect(preserved.updates('snapshot')[0]).toMatchObject({ evicted: 1 });

    panel.send({ kind: 'settings', tabId: 7, settings: { preserveLog: false } });
    newDocument(7);
    await vi.waitFor(() => expect(panel.updates('cleared')).toHaveLength(2));
    const fresh = await subscribed(7);
    expect(fresh.updates('snapshot')[0]).toMatchObject({ evicted: 0 });
  }, 20_000);
});
