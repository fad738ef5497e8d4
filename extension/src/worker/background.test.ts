import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ordinaryRequest } from '../model/fixtures';
import { NAMESPACE, PANEL_PORT, PROTOCOL_VERSION, RING_REQUESTS } from '../shared/protocol';
import { MAX_PAGE_FRAMES } from './store';

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

/** The messages of a new-document answer of `kind` (none for no answer). */
async function answered(answer: unknown, kind: string): Promise<unknown[]> {
  const messages = (await answer) as { kind: string }[] | undefined;
  return (messages ?? []).filter((message) => message.kind === kind);
}
/** The fault rules a new document of frame `frameId` of tab `tabId` is given, if any. */
async function rulesFor(tabId: number, frameId?: number, url?: string): Promise<unknown> {
  const [rules] = await answered(newDocument(tabId, frameId, url), 'faults');
  return rules;
}

const rules = (id: string) => [
  { id, url: '/api/', steps: [{ step: 'status', status: 503 }, { step: 'passthrough' }] },
];
const APP = 'https://app.example';
/** A removal (for every frame: it carries no origin). */
const faults = (rulesOf: unknown[], seed?: number) => ({
  ns: NAMESPACE,
  v: PROTOCOL_VERSION,
  kind: 'faults',
  rules: rulesOf,
  ...(seed === undefined ? {} : { seed }),
});
/** A rule set as a page of `origin` is sent it: stamped with the top origin it is bound to. */
const stamped = (rulesOf: unknown[], seed?: number, origin = APP) => ({ ...faults(rulesOf, seed), origin });
/** The messages of `kind` sent to tab `tabId`'s frames, and where each went. */
const sentOf = (tabId: number, kind: string) =>
  (browser.tabs.sendMessage.mock.calls as unknown[][]).filter(
    ([tab, message]) => tab === tabId && (message as { kind: string }).kind === kind,
  );
/** The fault rules sent to tab `tabId`'s frames. */
const sentTo = (tabId: number) => sentOf(tabId, 'faults').map(([, message]) => message);
/** Where each fault rules message to tab `tabId` went: `frame n`, or `every frame` for one sent to the whole tab. */
const framesOf = (tabId: number) =>
  sentOf(tabId, 'faults').map(([, message, options]) => {
    const { frameId } = (options ?? {}) as { frameId?: number };
    const { rules: sent } = message as { rules: unknown[] };
    return [frameId === undefined ? 'every frame' : `frame ${frameId}`, sent.length > 0 ? 'rules' : 'drop'];
  });
/** A panel subscribed to tab `tabId`, whose top document (of {@link APP}) the worker heard of; what was sent so far forgotten. */
function panelOn(tabId: number) {
  newDocument(tabId, 0, `${APP}/`);
  const panel = connectPanel();
  panel.send({ kind: 'subscribe', tabId });
  browser.tabs.sendMessage.mockClear();
  return panel;
}

describe('the worker carrying fault rules from a panel to its tab', () => {
  it('sends a panel’s rules to its tab’s top frame, stamped with its origin, and tells the panels of the tab', async () => {
    const panel = panelOn(7);
    panel.send({ kind: 'faults', tabId: 7, rules: rules('a'), seed: 5 });
    expect(sentTo(7)).toEqual([stamped(rules('a'), 5)]);
    expect(framesOf(7)).toEqual([['frame 0', 'rules']]);
    expect(panel.updates('faults')).toEqual([
      { kind: 'faults', tabId: 7, rules: rules('a'), seed: 5, origin: APP, applied: true },
    ]);
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
      // A panel subscribing to a worker that has no rules for the tab: the frames drop any they hold.
      ['every frame', 'drop'],
      ['frame 0', 'rules'],
      ['frame 3', 'rules'],
    ]);
    // A change of rules goes the same way.
    panel.send({ kind: 'faults', tabId: 7, rules: rules('b') });
    expect(framesOf(7).slice(3)).toEqual([
      ['frame 0', 'rules'],
      ['frame 3', 'rules'],
    ]);
  });

  it('answers a new document of a frame of another origin with nothing, one of the top frame’s origin with the rules', async () => {
    const panel = panelOn(7);
    panel.send({ kind: 'faults', tabId: 7, rules: rules('a') });
    await expect(rulesFor(7, 5, 'https://ads.example/slot')).resolves.toBeUndefined();
    await expect(rulesFor(7, 3, 'https://app.example/embedded')).resolves.toEqual(stamped(rules('a')));
    // However often it reloads, the frame of another origin is told nothing, and nothing is sent to it.
    for (let n = 0; n < 5; n += 1)
      await expect(rulesFor(7, 5, 'https://ads.example/slot')).resolves.toBeUndefined();
    // A frame that navigates to another origin is one no longer.
    await expect(rulesFor(7, 3, 'https://ads.example/')).resolves.toBeUndefined();
    panel.send({ kind: 'faults', tabId: 7, rules: rules('b') });
    expect(framesOf(7)).toEqual([
      ['frame 0', 'rules'],
      ['frame 0', 'rules'],
    ]);
  });

  it('gives a frame nothing until the tab’s top document is known, and nothing to a sandboxed one', async () => {
    const panel = connectPanel();
    panel.send({ kind: 'subscribe', tabId: 7 });
    panel.send({ kind: 'faults', tabId: 7, rules: rules('a') });
    await expect(rulesFor(7, 3, 'https://app.example/embedded')).resolves.toBeUndefined();
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
    await expect(answered(answer, 'faults')).resolves.toEqual([]);
  });

  it('holds rules back from a top document of another origin, tells the panels, and gives them again when the top comes back', async () => {
    newDocument(7, 0, 'https://app.example/');
    newDocument(7, 3, 'https://app.example/embedded');
    const panel = connectPanel();
    panel.send({ kind: 'subscribe', tabId: 7 });
    panel.send({ kind: 'faults', tabId: 7, rules: rules('a') });
    expect(framesOf(7)).toEqual([
      ['every frame', 'drop'],
      ['frame 0', 'rules'],
      ['frame 3', 'rules'],
    ]);
    // A framed ad navigates the top frame to its own origin.
    await expect(rulesFor(7, 0, 'https://ads.example/')).resolves.toBeUndefined();
    await expect(rulesFor(7, 8, 'https://app.example/embedded')).resolves.toBeUndefined();
    await expect(rulesFor(7, 9, 'https://ads.example/frame')).resolves.toBeUndefined();
    expect(panel.updates('faults').at(-1)).toEqual({
      kind: 'faults',
      tabId: 7,
      rules: rules('a'),
      origin: APP,
      applied: false,
    });
    // Back on the app: given again, and the panels told.
    await expect(rulesFor(7, 0, 'https://app.example/')).resolves.toEqual(stamped(rules('a')));
    expect(panel.updates('faults').at(-1)).toMatchObject({ rules: rules('a'), origin: APP, applied: true });
    expect(framesOf(7)).toHaveLength(3);
  });

  it('binds rules a panel changes while the page is on another origin to that origin', async () => {
    const panel = panelOn(7);
    panel.send({ kind: 'faults', tabId: 7, rules: rules('a') });
    await rulesFor(7, 0, 'https://other.example/');
    panel.send({ kind: 'faults', tabId: 7, rules: rules('b') });
    expect(sentTo(7).at(-1)).toEqual(stamped(rules('b'), undefined, 'https://other.example'));
    expect(panel.updates('faults').at(-1)).toMatchObject({ origin: 'https://other.example', applied: true });
  });

  it('binds rules to the origin the panel names when it has not heard of the top document (it was started since)', () => {
    const panel = connectPanel();
    panel.send({ kind: 'subscribe', tabId: 7 });
    panel.send({ kind: 'faults', tabId: 7, rules: rules('a'), origin: APP });
    expect(framesOf(7)).toEqual([
      ['every frame', 'drop'],
      ['frame 0', 'rules'],
    ]);
    expect(sentTo(7).at(-1)).toEqual(stamped(rules('a')));
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
      ['every frame', 'drop'],
      ['frame 0', 'rules'],
      ['frame 3', 'rules'],
      ['every frame', 'drop'],
      ['frame 0', 'rules'],
      ['frame 3', 'rules'],
      ['every frame', 'drop'],
    ]);
  });

  it('has the tab drop rules a worker stopped since gave it: at a subscribe, an empty set and the last panel going', () => {
    // A fresh worker knows no rules of tab 7, whose page may hold some from the worker before it.
    const panel = connectPanel();
    panel.send({ kind: 'subscribe', tabId: 7 });
    expect(framesOf(7)).toEqual([['every frame', 'drop']]);
    // The developer removed the last rule while the port was down: the panel sends the empty set.
    panel.send({ kind: 'faults', tabId: 7, rules: [] });
    panel.close();
    expect(framesOf(7)).toEqual([
      ['every frame', 'drop'],
      ['every frame', 'drop'],
      ['every frame', 'drop'],
    ]);
  });

  it('forgets a closed tab’s frames', async () => {
    newDocument(7, 0, 'https://app.example/');
    browser.tabs.onRemoved.emit(7);
    const panel = connectPanel();
    panel.send({ kind: 'subscribe', tabId: 7 });
    panel.send({ kind: 'faults', tabId: 7, rules: rules('a') });
    await expect(rulesFor(7, 3, 'https://app.example/embedded')).resolves.toBeUndefined();
  });

  it('takes rules only for the tab the port shows, and only rules that check', () => {
    newDocument(7, 0, 'https://app.example/');
    const panel = connectPanel();
    panel.send({ kind: 'faults', tabId: 7, rules: rules('a') });
    panel.send({ kind: 'subscribe', tabId: 7 });
    panel.send({ kind: 'faults', tabId: 8, rules: rules('a') });
    panel.send({ kind: 'faults', tabId: 7, rules: [{ id: 'bad', url: '/x', steps: [] }] });
    expect(sentTo(7)).toEqual([faults([])]);
    expect(sentTo(8)).toEqual([]);
  });

  it('keeps rules per tab: each new document gets its own tab’s, in every frame', async () => {
    newDocument(7, 0, 'https://app.example/');
    newDocument(9, 0, 'https://app.example/');
    const seven = connectPanel();
    const nine = connectPanel();
    seven.send({ kind: 'subscribe', tabId: 7 });
    nine.send({ kind: 'subscribe', tabId: 9 });
    seven.send({ kind: 'faults', tabId: 7, rules: rules('seven') });
    nine.send({ kind: 'faults', tabId: 9, rules: rules('nine') });
    await expect(rulesFor(7)).resolves.toEqual(stamped(rules('seven')));
    // A frame of the top document's origin.
    await expect(rulesFor(7, 3)).resolves.toEqual(stamped(rules('seven')));
    await expect(rulesFor(9)).resolves.toEqual(stamped(rules('nine')));
    await expect(rulesFor(10)).resolves.toBeUndefined();
  });

  it('clears a tab’s rules when its last panel port disconnects, and only then', async () => {
    newDocument(7, 0, 'https://app.example/');
    newDocument(9, 0, 'https://app.example/');
    const first = connectPanel();
    const second = connectPanel();
    const other = connectPanel();
    first.send({ kind: 'subscribe', tabId: 7 });
    first.send({ kind: 'faults', tabId: 7, rules: rules('a') });
    second.send({ kind: 'subscribe', tabId: 7 });
    other.send({ kind: 'subscribe', tabId: 9 });
    other.send({ kind: 'faults', tabId: 9, rules: rules('b') });

    first.close();
    expect(sentTo(7)).toEqual([faults([]), stamped(rules('a'))]);
    await expect(rulesFor(7)).resolves.toEqual(stamped(rules('a')));

    second.close();
    expect(sentTo(7)).toEqual([faults([]), stamped(rules('a')), faults([])]);
    await expect(rulesFor(7)).resolves.toBeUndefined();
    // Another tab's panel and rules are untouched.
    await expect(rulesFor(9)).resolves.toEqual(stamped(rules('b')));
    expect(sentTo(9)).toEqual([faults([]), stamped(rules('b'))]);
  });

  it('clears a tab’s rules when its last panel turns to another tab', () => {
    const panel = panelOn(7);
    panel.send({ kind: 'faults', tabId: 7, rules: rules('a') });
    panel.send({ kind: 'subscribe', tabId: 8 });
    expect(sentTo(7)).toEqual([stamped(rules('a')), faults([])]);
  });

  it('hands a panel that subscribes the tab’s rules after its snapshot', async () => {
    const setter = panelOn(7);
    setter.send({ kind: 'faults', tabId: 7, rules: rules('a') });
    const late = connectPanel();
    late.send({ kind: 'subscribe', tabId: 7 });
    await vi.waitFor(() => expect(late.updates('faults')).toHaveLength(1));
    const kinds = late.port.postMessage.mock.calls.map(([update]) => (update as { kind: string }).kind);
    expect(kinds.filter((kind) => kind !== 'page')).toEqual(['snapshot', 'faults']);
    expect(late.updates('faults')).toEqual([
      { kind: 'faults', tabId: 7, rules: rules('a'), origin: APP, applied: true },
    ]);
    // The worker has rules for the tab: nothing is taken back.
    expect(sentTo(7)).toEqual([stamped(rules('a'))]);
  });

  it('takes an empty list as removing the rules', async () => {
    const panel = panelOn(7);
    panel.send({ kind: 'faults', tabId: 7, rules: rules('a') });
    panel.send({ kind: 'faults', tabId: 7, rules: [] });
    expect(sentTo(7)).toEqual([stamped(rules('a')), faults([])]);
    await expect(rulesFor(7)).resolves.toBeUndefined();
    panel.close();
    // Taken back again: a removal costs nothing where there is nothing to drop.
    expect(sentTo(7)).toEqual([stamped(rules('a')), faults([]), faults([])]);
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
  const target = { requestId: 'r1', client: 'fetch', method: 'GET', url: 'https://api.example/items' };
  const replay = { ns: NAMESPACE, v: PROTOCOL_VERSION, kind: 'replay', ...target };
  /** Each replay sent to tab 7's frames: the message, and where it went. */
  const calls = () => sentOf(7, 'replay').map(([, ...sent]) => sent);

  it('sends it to every frame of the tab, with the origin of the frame whose request it is', () => {
    const panel = connectPanel();
    panel.send({ kind: 'subscribe', tabId: 7 });
    panel.send({ kind: 'replay', tabId: 7, source: 'https://app.example', ...target });
    expect(calls()).toEqual([[{ ...replay, origin: 'https://app.example' }]]);
  });

  it('sends the replay of an opaque origin’s request to its frame alone, for an opaque document only', () => {
    const panel = connectPanel();
    panel.send({ kind: 'subscribe', tabId: 7 });
    panel.send({ kind: 'replay', tabId: 7, source: 'null (frame 3)', ...target });
    expect(calls()).toEqual([[{ ...replay, origin: 'null' }, { frameId: 3 }]]);
  });

  it('takes a replay only for the tab the port shows, and only one that checks', () => {
    const panel = connectPanel();
    panel.send({ kind: 'replay', tabId: 7, source: 'https://app.example', ...target });
    panel.send({ kind: 'subscribe', tabId: 7 });
    panel.send({ kind: 'replay', tabId: 8, source: 'https://app.example', ...target });
    panel.send({ kind: 'replay', tabId: 7, source: 'https://app.example', ...target, requestId: undefined });
    panel.send({ kind: 'replay', tabId: 7, source: 'https://app.example', ...target, requestId: '' });
    panel.send({ kind: 'replay', tabId: 7, source: 'https://app.example', ...target, url: undefined });
    expect(calls()).toEqual([]);
    expect(sentOf(8, 'replay')).toEqual([]);
  });

  it('survives a tab that is gone', async () => {
    const panel = connectPanel();
    panel.send({ kind: 'subscribe', tabId: 7 });
    browser.tabs.sendMessage.mockRejectedValueOnce(new Error('No tab with id: 7'));
    panel.send({ kind: 'replay', tabId: 7, source: 'https://app.example', ...target });
    panel.send({ kind: 'replay', tabId: 7, source: 'https://app.example', ...target, requestId: 'r2' });
    expect(calls()).toHaveLength(2);
  });
});

describe('the worker telling a tab’s frames whether a panel is subscribed to it', () => {
  /** What tab `tabId`'s frames were told of its panels, in order: each sent to every frame. */
  const told = (tabId: number) =>
    sentOf(tabId, 'panel').map(([, message, options]) => {
      expect(options).toBeUndefined();
      return (message as { open: boolean }).open ? 'open' : 'closed';
    });
  const answerOf = async (answer: unknown) =>
    ((await answered(answer, 'panel')) as { open: boolean }[]).map((message) =>
      message.open ? 'open' : 'closed',
    );

  it('tells every frame when the tab’s first panel subscribes and when its last one goes, and only then', () => {
    const first = connectPanel();
    const second = connectPanel();
    first.send({ kind: 'subscribe', tabId: 7 });
    second.send({ kind: 'subscribe', tabId: 7 });
    expect(told(7)).toEqual(['open']);
    first.close();
    expect(told(7)).toEqual(['open']);
    second.close();
    expect(told(7)).toEqual(['open', 'closed']);
  });

  it('tells them it closed when its last panel turns to another tab, and that tab’s frames it opened', () => {
    const panel = connectPanel();
    panel.send({ kind: 'subscribe', tabId: 7 });
    panel.send({ kind: 'subscribe', tabId: 8 });
    expect(told(7)).toEqual(['open', 'closed']);
    expect(told(8)).toEqual(['open']);
  });

  it('answers every new document, in any frame and of any origin, with whether a panel is subscribed', async () => {
    await expect(answerOf(newDocument(7))).resolves.toEqual(['closed']);
    const panel = connectPanel();
    panel.send({ kind: 'subscribe', tabId: 7 });
    await expect(answerOf(newDocument(7))).resolves.toEqual(['open']);
    // A frame of another origin, which gets no fault rules: a replay may be meant for it.
    await expect(answerOf(newDocument(7, 5, 'https://ads.example/slot'))).resolves.toEqual(['open']);
    await expect(answerOf(newDocument(9))).resolves.toEqual(['closed']);
    panel.close();
    await expect(answerOf(newDocument(7, 5, 'https://ads.example/slot'))).resolves.toEqual(['closed']);
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
/** A page state as a worker that heard the page's documents tells it: with its frames' origins. */
const framed = (page: object, frames = ['https://app.example']) => ({ ...page, frames });

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
    await vi.waitFor(() => expect(pages(panel)).toEqual([framed(HOOKED)]));
    // A frame's client, then the top frame's: news once.
    detected(7, 3);
    detected(7);
    await vi.waitFor(() => expect(pages(panel)).toEqual([framed(HOOKED), framed(DETECTED)]));
    // A frame's new document is no new page (of the top frame's origin, it changes nothing told);
    // the top frame's is.
    newDocument(7, 3);
    newDocument(7);
    await vi.waitFor(() => expect(pages(panel)).toEqual([framed(HOOKED), framed(DETECTED), framed(HOOKED)]));
    // Another tab's page is not this one's (and that tab's documents were not heard of).
    const other = await subscribed(9);
    detected(9);
    await vi.waitFor(() => expect(pages(other)).toEqual([DETECTED]));
    expect(pages(panel)).toEqual([framed(HOOKED), framed(DETECTED), framed(HOOKED)]);
  });

  it('counts a page that sends events as using Retryline, recording or not', async () => {
    const panel = await subscribed(7);
    newDocument(7);
    panel.send({ kind: 'settings', tabId: 7, settings: { record: false } });
    requests(7, 0, 1);
    await vi.waitFor(() => expect(pages(panel)).toEqual([framed(HOOKED), framed(DETECTED)]));
    expect(panel.updates('append')).toHaveLength(0);
  });

  it('marks no navigation of a tab that has recorded nothing, panel or not; once it has, each one', async () => {
    newDocument(7);
    const panel = await subscribed(7);
    expect(panel.updates('snapshot')[0]).toMatchObject({ entries: [], page: framed(HOOKED) });
    newDocument(7, 0, 'https://app.example/login');
    requests(7, 0, 1);
    await vi.waitFor(() => expect(panel.updates('append')).toHaveLength(1));
    newDocument(7, 0, 'https://app.example/next');
    await vi.waitFor(() => expect(panel.updates('append')).toHaveLength(2));
    expect(panel.updates('append')[1]).toMatchObject({
      entries: [{ type: 'navigation', url: 'https://app.example/next' }],
    });
  });

  it('stores nothing of where a tab with no Retryline event went: its index alone, with no URL', async () => {
    newDocument(7, 0, 'https://bank.example/account?id=1');
    newDocument(7, 0, 'https://mail.example/inbox');
    newDocument(7, 3, 'https://ads.example/slot');
    detected(8);
    const session = browser.storage.session;
    await vi.waitFor(() => expect(session.items.get('tab:7')).toMatchObject({ page: HOOKED }));
    // Every write made so far has settled (writes run one at a time, and this one went last).
    await vi.waitFor(() => expect(session.items.get('tab:8')).toMatchObject({ page: DETECTED }));
    expect([...session.items.keys()].sort()).toEqual(['tab:7', 'tab:8']);
    expect(session.items.get('tab:7')).toMatchObject({ nextSeq: 0, chunks: [] });
    expect(JSON.stringify([...session.items.values()])).not.toMatch(/bank|mail|ads|example/);

    // Enough for a panel opened after the worker was stopped to say what it said before.
    browser = fakeBrowser(fakeSession(session.items));
    fake.browser = browser;
    vi.resetModules();
    await import('./background');
    const panel = await subscribed(7);
    expect(panel.updates('snapshot')[0]).toMatchObject({ entries: [], page: HOOKED });
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

describe('the worker telling panels which origins the page’s frames have', () => {
  const frames = (panel: ReturnType<typeof connectPanel>) =>
    pages(panel).map((page) => (page as { frames?: unknown }).frames);

  it('follows each frame’s documents from the top document on, and starts again with the next one', async () => {
    const panel = await subscribed(7);
    newDocument(7, 0, 'https://app.example/');
    newDocument(7, 3, 'https://widget.example/');
    const sandboxed = {
      id: 'retryline-test',
      tab: { id: 7 },
      frameId: 4,
      url: 'https://app.example/s',
      origin: 'null',
    };
    browser.runtime.onMessage.emit({ ns: NAMESPACE, v: PROTOCOL_VERSION, kind: 'document' }, sandboxed);
    // Frame 3 went to another document, of another origin: its first origin is gone.
    newDocument(7, 3, 'https://other.example/');
    newDocument(7, 0, 'https://app.example/next');
    await vi.waitFor(() =>
      expect(frames(panel)).toEqual([
        ['https://app.example'],
        ['https://app.example', 'https://widget.example'],
        ['https://app.example', 'https://widget.example', 'null (frame 4)'],
        ['https://app.example', 'https://other.example', 'null (frame 4)'],
        ['https://app.example'],
      ]),
    );
  });

  it('says nothing of them when it did not hear the top document (it was started since), nor past its limit', async () => {
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
    expect(panel.updates('snapshot')[0]).not.toHaveProperty('page.frames');
    // A frame's document tells nothing of the others.
    newDocument(7, 3, 'https://widget.example/');
    newDocument(7, 0);
    for (let frameId = 1; frameId <= MAX_PAGE_FRAMES; frameId += 1) {
      newDocument(7, frameId, `https://f${frameId}.example/`);
    }
    await vi.waitFor(() => expect(frames(panel).at(-1)).toBeUndefined());
    expect(frames(panel)[0]).toEqual(['https://app.example']);
    expect(frames(panel).at(-2)).toHaveLength(MAX_PAGE_FRAMES);
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
