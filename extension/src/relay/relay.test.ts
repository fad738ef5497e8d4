// @vitest-environment happy-dom
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { NAMESPACE, PROTOCOL_VERSION } from '../shared/protocol';

// The relay itself, on a page of its own, wired to a fake `browser`: what it tells its page's hook
// of the tab's panels, from the worker's answer to its new-document notice and from the worker's
// later word (each test imports it afresh, as a new document would run it).

type Listener = (message: unknown, sender: { id?: string }) => unknown;

const fake = vi.hoisted(() => ({ browser: undefined as unknown }));
vi.mock('webextension-polyfill', () => ({
  get default() {
    return fake.browser;
  },
}));

let listeners: Set<Listener>;
let sendMessage: ReturnType<typeof vi.fn>;
let posted: unknown[];
/** What each relay loaded added to the window, taken off after each test (a page runs one relay). */
const added: Array<Parameters<typeof window.removeEventListener>> = [];

/** Loads the relay in this page, the worker answering its new-document notice with `answer`. */
async function start(answer: Promise<unknown>) {
  listeners = new Set();
  sendMessage = vi.fn(() => answer);
  fake.browser = {
    runtime: {
      id: 'retryline-test',
      sendMessage,
      onMessage: {
        addListener: (listener: Listener) => listeners.add(listener),
        removeListener: (listener: Listener) => listeners.delete(listener),
      },
    },
  };
  vi.resetModules();
  await import('./relay');
}

/** A message of the worker to this frame, as the browser delivers it. */
const fromWorker = (message: unknown) => {
  for (const listener of listeners) listener(message, { id: 'retryline-test' });
};
const message = (fields: Record<string, unknown>) => ({ ns: NAMESPACE, v: PROTOCOL_VERSION, ...fields });
/** What the relay told the hook of the tab's panels, in order. */
const panelsTold = () =>
  posted.flatMap((each) => {
    const { kind, open } = each as { kind?: string; open?: boolean };
    return kind === 'panel' ? [open ? 'open' : 'closed'] : [];
  });

beforeEach(() => {
  posted = [];
  vi.spyOn(window, 'postMessage').mockImplementation((data: unknown) => {
    posted.push(data);
  });
  const add = window.addEventListener.bind(window);
  vi.spyOn(window, 'addEventListener').mockImplementation((...args: Parameters<typeof add>) => {
    added.push(args as Parameters<typeof window.removeEventListener>);
    add(...args);
  });
});

afterEach(() => {
  vi.restoreAllMocks();
  for (const args of added.splice(0)) window.removeEventListener(...args);
});

describe('the relay telling its page’s hook whether a panel is subscribed to the tab', () => {
  it('says what the worker’s answer to the new document says, then each change the worker sends', async () => {
    await start(Promise.resolve([message({ kind: 'panel', open: true })]));
    expect(sendMessage).toHaveBeenCalledWith(message({ kind: 'document' }));
    await vi.waitFor(() => expect(panelsTold()).toEqual(['open']));
    fromWorker(message({ kind: 'panel', open: false }));
    fromWorker(message({ kind: 'panel', open: 'no' }));
    expect(panelsTold()).toEqual(['open', 'closed']);
  });

  it('passes on the fault rules the answer carries with it, without their origin', async () => {
    const rules = [{ id: 'a', url: '/api/', steps: [{ step: 'status', status: 503 }] }];
    await start(
      Promise.resolve([
        message({ kind: 'panel', open: true }),
        message({ kind: 'faults', rules, origin: location.origin }),
      ]),
    );
    await vi.waitFor(() => expect(posted).toContainEqual(message({ kind: 'faults', rules })));
    expect(panelsTold()).toEqual(['open']);
  });

  it('says no panel is open when the answer says nothing of them, or the worker cannot be reached', async () => {
    await start(Promise.resolve(undefined));
    await vi.waitFor(() => expect(panelsTold()).toEqual(['closed']));
    for (const args of added.splice(0)) window.removeEventListener(...args);
    posted = [];
    await start(Promise.reject(new Error('Could not establish connection. Receiving end does not exist.')));
    await vi.waitFor(() => expect(panelsTold()).toEqual(['closed']));
  });

  it('tells a hook that says hello after the answer what it missed', async () => {
    await start(Promise.resolve([message({ kind: 'panel', open: true })]));
    await vi.waitFor(() => expect(panelsTold()).toEqual(['open']));
    window.dispatchEvent(
      new MessageEvent('message', {
        data: message({ kind: 'hook-hello' }),
        origin: location.origin,
        source: window,
      }),
    );
    expect(posted.at(-2)).toEqual(message({ kind: 'relay-ready' }));
    expect(panelsTold()).toEqual(['open', 'open']);
  });
});

describe('the relay passing a panel’s replay on to its page’s hook', () => {
  const replay = message({
    kind: 'replay',
    requestId: 'r1',
    client: 'fetch',
    method: 'GET',
    url: 'https://api.example/items',
  });

  it('passes on one meant for this document’s origin only', async () => {
    await start(Promise.resolve([message({ kind: 'panel', open: true })]));
    posted = [];
    fromWorker({ ...replay, origin: 'https://elsewhere.example' });
    fromWorker(replay);
    expect(posted).toEqual([]);
    fromWorker({ ...replay, origin: location.origin });
    expect(posted).toEqual([replay]);
  });
});

describe('the relay passing the tab’s fault rules on to its page’s hook', () => {
  const rules = [{ id: 'a', url: '/api/', steps: [{ step: 'status', status: 503 }] }];

  it('passes on a rule set stamped for this document’s origin only, and then a removal', async () => {
    await start(Promise.resolve([message({ kind: 'panel', open: true })]));
    await vi.waitFor(() => expect(panelsTold()).toEqual(['open']));
    posted = [];
    // A frame that went to another origin, before the worker heard of its new document.
    expect(location.origin).not.toBe('https://app.example');
    fromWorker(message({ kind: 'faults', rules, origin: 'https://app.example' }));
    fromWorker(message({ kind: 'faults', rules }));
    // A removal reaches a page only while it holds rules.
    fromWorker(message({ kind: 'faults', rules: [] }));
    expect(posted).toEqual([]);
    fromWorker(message({ kind: 'faults', rules, origin: location.origin }));
    fromWorker(message({ kind: 'faults', rules: [] }));
    expect(posted).toEqual([message({ kind: 'faults', rules }), message({ kind: 'faults', rules: [] })]);
  });
});
