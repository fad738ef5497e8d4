import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FaultRuleSet } from '../../extension/src/shared/faults';
import { mswSnippet } from '../../extension/src/shared/msw-snippet';
import {
  type BrowserTab,
  developmentPageScript,
  EXTENSION_BROWSERS,
  type ExtensionBrowser,
  requireBuiltExtension,
} from '../support/extension-browser';
import { type FaultServer, startFaultServer } from '../support/fault-server';
import { type OutboundSink, startOutboundSink } from '../support/outbound-sink';
import type { CallResult } from './fault-page';

// The Faults tab as a developer uses it, in the built extension of both browsers it ships for: the
// real panel page (panel.html?tabId=N, as DevTools shows it for tab N) is opened in an extension
// tab, and a rule is added with clicks and typing only. The page's next Retryline request takes the
// rule's attempts and the panel's row for it shows them, marked as injected; a second panel of the
// tab, docked small (a 400 × 250 frame), shows the same rule; a page that opted out is untouched;
// the msw test the panel exports is the rule set's; closing the panel takes the rule away.
// Clicks and keystrokes are dispatched inside the panel page (what its controls listen for), and
// each step is polled for, never timed.

const browsers = EXTENSION_BROWSERS;

/** The rule the test types, as the panel sends it and the worker keeps it. */
const RULES: FaultRuleSet = {
  rules: [
    {
      id: 'rule-1',
      method: 'GET',
      url: '/api/*',
      steps: [{ step: 'status', status: 503 }, { step: 'status', status: 503 }, { step: 'passthrough' }],
    },
  ],
};
const FAULTED = { status: 200, attempts: 3, injected: [1, 2] };
const UNTOUCHED = { status: 200, attempts: 1, injected: [] };

interface PanelApi {
  rows(): number;
  faults(): { set: FaultRuleSet; mswTest: string } | undefined;
}
type PanelWindow = Window & { __retrylinePanel?: PanelApi };
type FaultWindow = Window & { faultPage: { call(path: string): Promise<CallResult> } };
type ExtensionApi = { storage: { session: { get(keys: null): Promise<Record<string, unknown>> } } };

// Run inside the browser: they travel as source text, so they use only their arguments and globals.
// `framed`: in the docked panel's frame of the page, rather than the page itself.
const hasPage = () => 'faultPage' in window;
const call = (path: string) => (window as unknown as FaultWindow).faultPage.call(path);
const storedSession = () => {
  const scope = globalThis as unknown as { browser?: ExtensionApi; chrome?: ExtensionApi };
  return ((scope.browser ?? scope.chrome) as ExtensionApi).storage.session.get(null);
};
const panelRows = (framed: boolean) => {
  const view = framed ? document.querySelector('iframe')?.contentWindow : window;
  return (view as PanelWindow | null | undefined)?.__retrylinePanel?.rows() ?? -1;
};
const panelFaults = () => (window as unknown as PanelWindow).__retrylinePanel?.faults() ?? null;
const click = (framed: boolean, testId: string) => {
  const doc = framed ? document.querySelector('iframe')?.contentDocument : document;
  const target = doc?.querySelector<HTMLElement>(`[data-testid="${testId}"]`);
  if (!target) throw new Error(`no ${testId} to click`);
  target.click();
};
/** Types `value` into a field as a keyboard would leave it: focused, its value set, `input` fired. */
const typeInto = (testId: string, value: string) => {
  const field = document.querySelector(`[data-testid="fault-form"] [data-testid="${testId}"]`) as
    | HTMLInputElement
    | HTMLSelectElement;
  field.focus();
  field.value = value;
  field.dispatchEvent(new Event(field.tagName === 'SELECT' ? 'change' : 'input', { bubbles: true }));
};
const text = (framed: boolean, selector: string) => {
  const doc = framed ? document.querySelector('iframe')?.contentDocument : document;
  return [...(doc?.querySelectorAll(selector) ?? [])].map((element) => element.textContent ?? '');
};
/** The Faults tab's list: each rule's method, pattern, steps and probability, as shown. */
const shownRules = (framed: boolean) => {
  const doc = framed ? document.querySelector('iframe')?.contentDocument : document;
  return [...(doc?.querySelectorAll('[data-testid="fault-rule"]') ?? [])].map((item) =>
    ['fault-method', 'fault-pattern', 'fault-steps', 'fault-probability'].map(
      (testId) => item.querySelector(`[data-testid="${testId}"]`)?.textContent ?? '',
    ),
  );
};
/** Whether the Add button takes a click (the form reads as a rule). */
const canAdd = () =>
  !(document.querySelector('[data-testid="fault-form"] [data-testid="fault-submit"]') as HTMLButtonElement)
    .disabled;
/** The row of the request to `path`: its attempt bars, each marked injected or not. */
const rowAttempts = (path: string) => {
  const row = [...document.querySelectorAll('[data-testid="request-row"]')].find(
    (each) => each.querySelector('.rl-url__path')?.textContent === path,
  );
  return row
    ? [...row.querySelectorAll<HTMLElement>('[data-testid="attempt-bar"]')].map(
        (bar) => bar.dataset.injected === 'true',
      )
    : null;
};
/** Puts the panel of tab `tabId` in a 400 × 250 frame, as DevTools docked at its smallest shows it. */
const dockPanel = (url: string) => {
  document.body.replaceChildren();
  document.body.style.margin = '0';
  const frame = document.createElement('iframe');
  frame.src = url;
  frame.style.cssText = 'width: 400px; height: 250px; border: 0; display: block';
  document.body.append(frame);
};
/** Where the docked panel's parts are drawn (px, in the frame), and whether anything spills sideways. */
const dockedLayout = () => {
  const doc = document.querySelector('iframe')?.contentDocument;
  const box = (selector: string) => {
    const element = doc?.querySelector(selector);
    if (!element) return null;
    const rect = element.getBoundingClientRect();
    return rect.width === 0 && rect.height === 0
      ? null
      : {
          left: Math.round(rect.left),
          right: Math.round(rect.right),
          top: Math.round(rect.top),
          bottom: Math.round(rect.bottom),
        };
  };
  const root = doc?.documentElement;
  return {
    viewport: { width: root?.clientWidth ?? 0, height: root?.clientHeight ?? 0 },
    spillsSideways: (root?.scrollWidth ?? 0) > (root?.clientWidth ?? 0),
    tabs: box('[role="tablist"]'),
    banner: box('[data-testid="faults-banner"]'),
    list: box('.rl-main'),
    faults: box('[data-testid="faults-tab"]'),
    url: box('[data-testid="fault-form"] [data-testid="fault-url"]'),
    steps: box('[data-testid="fault-form"] [data-testid="fault-steps-input"]'),
    add: box('[data-testid="fault-form"] [data-testid="fault-submit"]'),
    remove: box('[data-testid="fault-remove"]'),
  };
};

/** Presses `/` with the focus on nothing in particular; whether the panel took it as a shortcut. */
const pressSlash = () => {
  const event = new KeyboardEvent('keydown', { key: '/', bubbles: true, cancelable: true });
  (document.activeElement ?? document.body).dispatchEvent(event);
  return event.defaultPrevented;
};
/** The focused element's test id, and whether it is drawn (a hidden element takes no focus). */
const focused = () => {
  const element = document.activeElement as HTMLElement | null;
  const rect = element?.getBoundingClientRect();
  return { testId: element?.dataset.testid ?? null, drawn: (rect?.width ?? 0) > 0 };
};

describe.each(browsers)('the Faults tab in $name', ({ dir, launch }) => {
  let server: FaultServer;
  let sink: OutboundSink;
  let browser: ExtensionBrowser;
  let probe: BrowserTab;

  beforeAll(async () => {
    requireBuiltExtension(dir);
    const pageScript = await developmentPageScript(new URL('fault-page.ts', import.meta.url));
    server = await startFaultServer();
    const script = '<script src="/page.js"></script>';
    server.static('/page.js', pageScript, 'text/javascript');
    server.static('/', `<!doctype html><title>app</title>${script}`, 'text/html');
    server.static(
      '/opted-out',
      `<!doctype html><meta name="retryline-faults" content="off"><title>opted out</title>${script}`,
      'text/html',
    );
    for (const path of ['/api/first', '/api/orders', '/api/checked']) server.script(path, [{ status: 200 }]);
    sink = await startOutboundSink();
    browser = await launch(dir, sink);
    // An extension page to read the worker's storage from.
    probe = await browser.open(browser.extensionUrl('panel.html'));
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await sink?.close();
    await server?.close();
  });

  /** The app in a new tab, and the tab's id, once a request of its has reached the worker. */
  async function appTab(): Promise<{ tab: BrowserTab; id: number }> {
    const tab = await browser.open(`${server.url}/`);
    await expect.poll(() => tab.evaluate(hasPage)).toBe(true);
    await tab.evaluate(call, '/api/first');
    let id = 0;
    await expect
      .poll(
        async () => {
          const stored = Object.keys(await probe.evaluate(storedSession));
          id = Number(stored.find((key) => /^tab:\d+$/.test(key))?.slice(4) ?? 0);
          return id;
        },
        { timeout: 15_000 },
      )
      .toBeGreaterThan(0);
    return { tab, id };
  }

  it('a rule added in the tab faults the page’s next request, shows in its row and in every panel of the tab, and goes with the panel', async () => {
    const { tab, id } = await appTab();
    const panel = await browser.open(browser.extensionUrl(`panel.html?tabId=${id}`));
    // Subscribed: the tab's first request is in the list.
    await expect.poll(() => panel.evaluate(panelRows, false), { timeout: 10_000 }).toBe(1);

    await panel.evaluate(click, false, 'tab-faults');
    expect(await panel.evaluate(text, false, '[role="tab"][aria-selected="true"]')).toEqual(['Faults']);
    await panel.evaluate(typeInto, 'fault-method-input', 'GET');
    await panel.evaluate(typeInto, 'fault-url', '/api/*');
    // The pattern is the filter's, tried on the list as it is typed.
    await expect
      .poll(() => panel.evaluate(text, false, '[data-testid="fault-form"] [data-testid="fault-matches"]'))
      .toEqual(['Matches 1 of the 1 request in the list.']);
    await panel.evaluate(typeInto, 'fault-steps-input', '503, 50x');
    await expect
      .poll(() => panel.evaluate(text, false, '[data-testid="fault-form"] [data-testid="fault-steps-note"]'))
      .toEqual([expect.stringMatching(/^step 2 \("50x"\): expected a status/)]);
    expect(await panel.evaluate(canAdd)).toBe(false);
    await panel.evaluate(typeInto, 'fault-steps-input', '503, 503, 200');
    await expect.poll(() => panel.evaluate(canAdd)).toBe(true);
    await panel.evaluate(click, false, 'fault-submit');

    // Listed once the worker has it (and has sent it to the tab).
    await expect
      .poll(() => panel.evaluate(shownRules, false), { timeout: 10_000 })
      .toEqual([['GET', '/api/*', '503, 503, passthrough', '100 %']]);
    expect(await panel.evaluate(text, false, '[role="tab"]')).toEqual(['Requests', 'Faults (1)']);
    expect(
      await panel.evaluate(text, false, '[data-testid="faults-banner"] .rl-faults-banner__text'),
    ).toEqual([
      '1 fault rule active: matching requests get injected failures — shown as injected. Rules are removed when DevTools closes.',
    ]);

    // The page's requests take the rule's attempts: the first two answered by injection, the
    // third by the server, which sees one request.
    await expect.poll(() => tab.evaluate(call, '/api/orders'), { timeout: 10_000 }).toEqual(FAULTED);
    expect(await tab.evaluate(call, '/api/checked')).toEqual(FAULTED);
    expect(server.requests('/api/checked')).toHaveLength(1);
    await panel.evaluate(click, false, 'tab-requests');
    await expect
      .poll(() => panel.evaluate(rowAttempts, '/api/checked'), { timeout: 10_000 })
      .toEqual([true, true, false]);

    // The msw test the panel exports is the one for the rules it shows.
    const exported = await panel.evaluate(panelFaults);
    expect(exported?.set).toEqual(RULES);
    expect(exported?.mswTest).toBe(mswSnippet(RULES));

    // A second panel of the tab, docked small, shows the same rule, and fits.
    const docked = await browser.open(browser.extensionUrl('panel.html'));
    await docked.evaluate(dockPanel, browser.extensionUrl(`panel.html?tabId=${id}`));
    await expect.poll(() => docked.evaluate(panelRows, true), { timeout: 10_000 }).toBeGreaterThan(0);
    await expect.poll(() => docked.evaluate(text, true, '[role="tab"]')).toEqual(['Requests', 'Faults (1)']);
    const onRequests = await docked.evaluate(dockedLayout);
    expect(onRequests.viewport).toEqual({ width: 400, height: 250 });
    expect(onRequests.spillsSideways).toBe(false);
    expect(onRequests.banner).not.toBeNull();
    expect(onRequests.faults).toBeNull();
    // Docked this short, the tabs share the status line: the list keeps the height between the
    // toolbar and the banner above and that line below.
    expect(onRequests.tabs?.top).toBeGreaterThanOrEqual(onRequests.list?.bottom ?? 250);
    expect(onRequests.tabs?.bottom).toBeLessThanOrEqual(250);
    expect(onRequests.tabs?.bottom).toBeGreaterThan(225);
    expect(onRequests.list?.bottom).toBeGreaterThan(200);
    await docked.evaluate(click, true, 'tab-faults');
    await expect
      .poll(() => docked.evaluate(shownRules, true))
      .toEqual([['GET', '/api/*', '503, 503, passthrough', '100 %']]);
    const onFaults = await docked.evaluate(dockedLayout);
    expect(onFaults.spillsSideways).toBe(false);
    expect(onFaults.list).toBeNull();
    expect(onFaults.faults?.bottom).toBeLessThanOrEqual(onFaults.tabs?.top ?? 0);
    for (const part of [onFaults.url, onFaults.steps, onFaults.add, onFaults.remove]) {
      expect(part).not.toBeNull();
      expect(part?.left).toBeGreaterThanOrEqual(0);
      expect(part?.right).toBeLessThanOrEqual(400);
    }
    // The form's fields are on screen without scrolling.
    expect(onFaults.add?.bottom).toBeLessThanOrEqual(onFaults.faults?.bottom ?? 0);
    await docked.close();

    // A page that opted out is untouched, in the same tab, with the rule set.
    await tab.goto(`${server.url}/opted-out`);
    await expect.poll(() => tab.evaluate(hasPage)).toBe(true);
    expect(await tab.evaluate(call, '/api/orders')).toEqual(UNTOUCHED);

    // Back on the app, the rule applies (the first panel still holds it); closing that panel takes
    // it away.
    await tab.goto(`${server.url}/`);
    await expect.poll(() => tab.evaluate(hasPage)).toBe(true);
    await expect.poll(() => tab.evaluate(call, '/api/orders'), { timeout: 10_000 }).toEqual(FAULTED);
    await panel.close();
    await expect.poll(() => tab.evaluate(call, '/api/orders'), { timeout: 10_000 }).toEqual(UNTOUCHED);
    await tab.close();
  }, 120_000);

  it('from the Faults tab, / shows the Requests tab with the filter focused', async () => {
    const { tab, id } = await appTab();
    const panel = await browser.open(browser.extensionUrl(`panel.html?tabId=${id}`));
    await expect.poll(() => panel.evaluate(text, false, '[role="tab"]'), { timeout: 10_000 }).toHaveLength(2);
    await panel.evaluate(click, false, 'tab-faults');
    expect(await panel.evaluate(text, false, '[role="tab"][aria-selected="true"]')).toEqual([
      expect.stringMatching(/^Faults/),
    ]);

    // The filter is out of view in the Faults tab: the shortcut shows it before focusing it.
    expect(await panel.evaluate(pressSlash)).toBe(true);
    await expect.poll(() => panel.evaluate(focused)).toEqual({ testId: 'filter', drawn: true });
    expect(await panel.evaluate(text, false, '[role="tab"][aria-selected="true"]')).toEqual(['Requests']);
    await panel.close();
    await tab.close();
  }, 60_000);
});
