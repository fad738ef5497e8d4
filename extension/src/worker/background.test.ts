import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { NAMESPACE, PANEL_PORT, PROTOCOL_VERSION } from '../shared/protocol';

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

function fakeBrowser() {
  return {
    runtime: {
      id: 'retryline-test',
      getURL: (path: string) => `${EXTENSION}${path}`,
      onMessage: event(),
      onConnect: event(),
    },
    storage: {
      session: {
        get: vi.fn(async () => ({})),
        set: vi.fn(async () => {}),
        remove: vi.fn(async () => {}),
      },
    },
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

/** What a relay in frame `frameId` of tab `tabId` gets back for its new-document notice. */
function newDocument(tabId: number, frameId = 0): unknown {
  const sender = { id: 'retryline-test', tab: { id: tabId }, frameId, url: 'https://app.example/' };
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

describe('the worker carrying fault rules from a panel to its tab', () => {
  it('sends a panel’s rules to every frame of its tab, and tells the panels of the tab', async () => {
    const panel = connectPanel();
    panel.send({ kind: 'subscribe', tabId: 7 });
    panel.send({ kind: 'faults', tabId: 7, rules: rules('a'), seed: 5 });
    expect(sentTo(7)).toEqual([faults(rules('a'), 5)]);
    expect(panel.updates('faults')).toEqual([{ kind: 'faults', tabId: 7, rules: rules('a'), seed: 5 }]);
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
