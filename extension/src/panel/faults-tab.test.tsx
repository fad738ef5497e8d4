// @vitest-environment happy-dom
import { act, cleanup, fireEvent, render, screen, within } from '@testing-library/preact';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { toRecording } from '../model/export';
import { scenario } from '../model/fixtures';
import { type FaultRule, type FaultRuleSet, MAX_RULES, NO_RULES } from '../shared/faults';
import { mswSnippet } from '../shared/msw-snippet';
import type { PanelRequest, TimelineEntry } from '../shared/protocol';
import { App, type PanelApi } from './app';
import {
  connectWorker,
  type FaultsBinding,
  type PanelPort,
  type PanelSource,
  type SourceUpdate,
  staticSource,
} from './sources';

afterEach(() => {
  cleanup();
  localStorage.clear();
});

const API_RULE: FaultRule = {
  id: 'rule-1',
  method: 'GET',
  url: 'orders',
  steps: [{ step: 'status', status: 503 }, { step: 'status', status: 503 }, { step: 'passthrough' }],
};

/** Rules bound to the page's origin, which it is on. */
const APPLIED: FaultsBinding = { origin: 'https://app.example', applied: true };

/**
 * A live tab whose worker the test plays: what the panel asks it to set is recorded, and the
 * rules it has are what the test says it has (as after the worker's `faults` update). The panel
 * wants what it last asked for until the worker says what the tab has.
 */
function faultSource(entries: TimelineEntry[] = scenario(), initial: FaultRuleSet = NO_RULES) {
  const listeners = new Set<(update: SourceUpdate) => void>();
  const sent: FaultRuleSet[] = [];
  let shown = initial;
  let asked: FaultRuleSet | undefined;
  const source: PanelSource = {
    live: true,
    label: 'tab 1',
    subscribe(listener) {
      listeners.add(listener);
      listener({ kind: 'reset', entries });
      listener({ kind: 'settings', settings: { preserveLog: false, record: true } });
      if (shown.rules.length > 0) listener({ kind: 'faults', set: shown, ...APPLIED });
      return () => listeners.delete(listener);
    },
    clear: vi.fn(),
    updateSettings: vi.fn(),
    close: vi.fn(),
    faults: {
      set(set) {
        asked = set;
        sent.push(set);
      },
      wanted: () => asked ?? shown,
    },
  };
  /** The worker tells the panel the tab's rules (its answer to a change, or another panel's change). */
  const worker = (set: FaultRuleSet, binding: FaultsBinding = APPLIED) => {
    shown = set;
    asked = undefined;
    act(() => {
      for (const listener of listeners) listener({ kind: 'faults', set, ...binding });
    });
  };
  /** The worker takes what the panel sent last. */
  const answer = () => worker(sent.at(-1) ?? NO_RULES);
  return { source, sent, worker, answer };
}

function mount(source: PanelSource) {
  let api: PanelApi | undefined;
  const save = vi.fn();
  const copy = vi.fn(async (_text: string) => {});
  const view = render(
    <App
      source={source}
      onApi={(a) => {
        api = a;
      }}
      save={save}
      copy={copy}
      now={() => 0}
    />,
  );
  if (!api) throw new Error('the panel did not expose its API');
  return { ...view, api, save, copy };
}

const openFaults = () => fireEvent.click(screen.getByRole('tab', { name: /^Faults/ }));
const form = () => screen.getByRole('form', { name: 'Add a fault rule' });
const type = (testId: string, value: string, within: HTMLElement = form()) =>
  fireEvent.input(within.querySelector(`[data-testid="${testId}"]`) as HTMLElement, { target: { value } });
const chooseMethod = (method: string, within: HTMLElement = form()) =>
  fireEvent.change(within.querySelector('[data-testid="fault-method-input"]') as HTMLElement, {
    target: { value: method },
  });
const submitButton = (within: HTMLElement = form()) =>
  within.querySelector('[data-testid="fault-submit"]') as HTMLButtonElement;
const shownRules = () =>
  screen
    .queryAllByTestId('fault-rule')
    .map((item) =>
      ['fault-method', 'fault-pattern', 'fault-steps', 'fault-probability'].map(
        (testId) => item.querySelector(`[data-testid="${testId}"]`)?.textContent,
      ),
    );

describe('the Faults tab', () => {
  it('is a tab beside Requests, moved between with the arrow keys', () => {
    mount(faultSource().source);
    const tabs = screen.getAllByRole('tab');
    expect(tabs.map((tab) => tab.textContent)).toEqual(['Requests', 'Faults']);
    expect(screen.getByRole('tablist').contains(tabs[0] as HTMLElement)).toBe(true);
    expect(tabs.map((tab) => tab.getAttribute('aria-selected'))).toEqual(['true', 'false']);
    expect(tabs.map((tab) => tab.tabIndex)).toEqual([0, -1]);
    const faultsPanel = screen.getByTestId('faults-tab');
    expect(faultsPanel.hidden).toBe(true);
    expect(faultsPanel.getAttribute('role')).toBe('tabpanel');
    expect(faultsPanel.getAttribute('aria-labelledby')).toBe(tabs[1]?.id);

    (tabs[0] as HTMLElement).focus();
    fireEvent.keyDown(tabs[0] as HTMLElement, { key: 'ArrowRight' });
    expect(tabs[1]?.getAttribute('aria-selected')).toBe('true');
    expect(document.activeElement).toBe(tabs[1]);
    expect(faultsPanel.hidden).toBe(false);
    expect(document.querySelector('.rl-app')?.getAttribute('data-tab')).toBe('faults');
    fireEvent.keyDown(tabs[1] as HTMLElement, { key: 'ArrowRight' });
    expect(document.activeElement).toBe(tabs[0]);
    expect(faultsPanel.hidden).toBe(true);
    fireEvent.keyDown(tabs[0] as HTMLElement, { key: 'End' });
    expect(document.activeElement).toBe(tabs[1]);
    fireEvent.keyDown(tabs[1] as HTMLElement, { key: 'Home' });
    expect(document.activeElement).toBe(tabs[0]);
    // The requests' own panel is the list.
    expect(document.getElementById(tabs[0]?.getAttribute('aria-controls') ?? '')?.className).toBe('rl-main');
  });

  it('is not there for a recording, nor while an imported file is viewed', () => {
    const { api } = mount(staticSource(scenario(), 'run.json'));
    expect(screen.queryByRole('tablist')).toBeNull();
    expect(screen.queryByTestId('faults-tab')).toBeNull();
    expect(api.faults()).toBeUndefined();
    cleanup();

    const { source, worker } = faultSource();
    const live = mount(source);
    worker({ rules: [API_RULE] });
    openFaults();
    act(() => live.api.importText(JSON.stringify(toRecording(scenario(), 'run'))));
    expect(screen.getByTestId('imported')).toBeTruthy();
    expect(screen.queryByRole('tablist')).toBeNull();
    expect(screen.queryByTestId('faults-tab')).toBeNull();
    // The rules still act on the tab, so the banner stays.
    expect(screen.getByTestId('faults-banner').textContent).toMatch(/^1 fault rule active/);
    fireEvent.click(screen.getByRole('button', { name: 'Back to the live page' }));
    expect(screen.getByRole('tab', { name: 'Faults (1)' }).getAttribute('aria-selected')).toBe('true');
  });

  it('adds a rule typed in the form, and lists it once the worker has it', () => {
    const { source, sent, answer } = faultSource();
    const { api } = mount(source);
    openFaults();
    expect(screen.getByTestId('no-fault-rules').textContent).toMatch(/No rules/);
    expect(submitButton().disabled).toBe(true);

    // The pattern is the filter's: how many of the list's rows it names shows as it is typed.
    type('fault-url', 'api.example');
    expect(within(form()).getByTestId('fault-matches').textContent).toBe(
      'Matches 2 of the 3 requests in the list.',
    );
    chooseMethod('GET');
    expect(within(form()).getByTestId('fault-matches').textContent).toBe(
      'Matches 1 of the 3 requests in the list.',
    );
    type('fault-url', 'orders');
    type('fault-steps-input', '503, 503, 200');
    expect(submitButton().disabled).toBe(false);
    fireEvent.click(submitButton());

    expect(sent).toEqual([{ rules: [API_RULE] }]);
    // The form is empty again; the list waits for the worker's word.
    expect((within(form()).getByTestId('fault-url') as HTMLInputElement).value).toBe('');
    expect(shownRules()).toEqual([]);
    answer();
    expect(shownRules()).toEqual([['GET', 'orders', '503, 503, passthrough', '100 %']]);
    expect(screen.getByRole('tab', { name: 'Faults (1)' })).toBeTruthy();
    expect(api.faults()).toEqual({ set: { rules: [API_RULE] }, mswTest: mswSnippet({ rules: [API_RULE] }) });

    // A second rule, any method, half of the requests, with its own id.
    type('fault-url', 'pay');
    type('fault-steps-input', 'networkError');
    type('fault-percent', '50');
    fireEvent.click(submitButton());
    expect(sent.at(-1)).toEqual({
      rules: [API_RULE, { id: 'rule-2', url: 'pay', steps: [{ step: 'networkError' }], probability: 0.5 }],
    });
    answer();
    expect(shownRules()).toEqual([
      ['GET', 'orders', '503, 503, passthrough', '100 %'],
      ['Any', 'pay', 'networkError', '50 %'],
    ]);
  });

  it('says what is wrong with the steps, the pattern or the probability, and will not add until it is right', () => {
    const { source, sent } = faultSource();
    mount(source);
    openFaults();
    type('fault-url', 'orders');
    type('fault-steps-input', '503, 50x');
    const steps = within(form()).getByTestId('fault-steps-input');
    expect(steps.getAttribute('aria-invalid')).toBe('true');
    const note = within(form()).getByTestId('fault-steps-note');
    expect(note.textContent).toBe(
      'step 2 ("50x"): expected a status in [200, 599], networkError, slow <ms> or passthrough',
    );
    expect(steps.getAttribute('aria-describedby')).toBe(note.id);
    expect(submitButton().disabled).toBe(true);
    fireEvent.submit(form());
    expect(sent).toEqual([]);

    type('fault-steps-input', '429 retry-after=2, slow 3s 503');
    expect(steps.getAttribute('aria-invalid')).toBe('false');
    expect(submitButton().disabled).toBe(false);

    type('fault-percent', '150');
    expect(within(form()).getByTestId('fault-percent-error').textContent).toBe(
      'Expected a percentage from 0 to 100.',
    );
    expect(submitButton().disabled).toBe(true);
    type('fault-percent', '100');

    type('fault-url', 're:(');
    expect(within(form()).getByTestId('fault-matches').textContent).toMatch(/^Invalid regular expression/);
    expect(submitButton().disabled).toBe(true);
    type('fault-url', 'is:nonsense');
    expect(within(form()).getByTestId('fault-matches').textContent).toMatch(/^Unknown is:nonsense/);
    expect(submitButton().disabled).toBe(true);
  });

  it('tries a pattern on each row as its request started, as the page matches a rule', () => {
    const { source, sent } = faultSource();
    mount(source);
    openFaults();
    type('fault-steps-input', '503');
    // The list's 404 came back after the request started: no rule would have matched it by it.
    type('fault-url', '404');
    expect(within(form()).getByTestId('fault-matches').textContent).toBe(
      'Matches 0 of the 3 requests in the list.',
    );
    type('fault-url', 'pending');
    expect(within(form()).getByTestId('fault-matches').textContent).toBe(
      'Matches 3 of the 3 requests in the list.',
    );
    type('fault-url', 'orders status:503');
    const url = within(form()).getByTestId('fault-url');
    expect(url.getAttribute('aria-invalid')).toBe('true');
    expect(within(form()).getByTestId('fault-matches').textContent).toBe(
      'status:503 is known only after an attempt; a rule is matched as the request starts',
    );
    expect(submitButton().disabled).toBe(true);
    fireEvent.submit(form());
    expect(sent).toEqual([]);
  });

  it('checks the whole set before sending it, and shows why it was not sent', () => {
    const full = Array.from({ length: MAX_RULES }, (_, n) => ({ ...API_RULE, id: `rule-${n + 1}` }));
    const { source, sent } = faultSource(scenario(), { rules: full });
    mount(source);
    openFaults();
    type('fault-url', 'orders');
    type('fault-steps-input', '503');
    fireEvent.click(submitButton());
    expect(sent).toEqual([]);
    expect(within(form()).getByRole('alert').textContent).toBe(`rules: expected at most ${MAX_RULES} rules`);
  });

  it('switches a rule off and on, removes one, and removes them all, sending each new set', () => {
    const other: FaultRule = { id: 'rule-2', url: 'pay', steps: [{ step: 'networkError' }] };
    const { source, sent, answer } = faultSource(scenario(), { rules: [API_RULE, other] });
    mount(source);
    openFaults();
    const toggle = screen.getByRole('checkbox', { name: 'Apply GET orders → 503, 503, passthrough' });
    expect((toggle as HTMLInputElement).checked).toBe(true);
    fireEvent.click(toggle);
    expect(sent.at(-1)).toEqual({ rules: [{ ...API_RULE, enabled: false }, other] });
    answer();
    expect(screen.getAllByTestId('fault-rule')[0]?.className).toContain('rl-fault-rule--off');
    // One rule left on: the banner counts only those.
    expect(screen.getByTestId('faults-banner').textContent).toMatch(/^1 fault rule active/);
    fireEvent.click(screen.getByRole('checkbox', { name: 'Apply GET orders → 503, 503, passthrough' }));
    expect(sent.at(-1)).toEqual({ rules: [API_RULE, other] });
    answer();

    fireEvent.click(screen.getByRole('button', { name: 'Remove Any method pay → networkError' }));
    expect(sent.at(-1)).toEqual({ rules: [API_RULE] });
    answer();
    expect(shownRules()).toEqual([['GET', 'orders', '503, 503, passthrough', '100 %']]);

    fireEvent.click(screen.getByTestId('remove-all-faults'));
    expect(sent.at(-1)).toEqual({ rules: [] });
    answer();
    expect(screen.getByTestId('no-fault-rules')).toBeTruthy();
    expect(screen.queryByTestId('faults-banner')).toBeNull();
    expect(screen.getByRole('tab', { name: 'Faults' })).toBeTruthy();
  });

  it('adds up changes made before the worker answers', () => {
    const other: FaultRule = { id: 'rule-2', url: 'pay', steps: [{ step: 'networkError' }] };
    const { source, sent } = faultSource(scenario(), { rules: [API_RULE, other] });
    mount(source);
    openFaults();
    fireEvent.click(screen.getByRole('button', { name: 'Remove Any method pay → networkError' }));
    fireEvent.click(screen.getByRole('checkbox', { name: 'Apply GET orders → 503, 503, passthrough' }));
    expect(sent).toEqual([{ rules: [API_RULE] }, { rules: [{ ...API_RULE, enabled: false }] }]);
  });

  it('builds a change made between the worker’s answers on the rules it last asked for', () => {
    // A live tab's own source, over a port whose worker the test plays.
    const posted: PanelRequest[] = [];
    let reply: (message: unknown) => void = () => {};
    const port: PanelPort = {
      postMessage: (message) => posted.push(message),
      disconnect: () => {},
      onMessage: {
        addListener: (callback) => {
          reply = callback;
        },
      },
      onDisconnect: { addListener: () => {} },
    };
    mount(connectWorker(7, { connect: () => port }));
    openFaults();
    const add = (url: string) => {
      type('fault-url', url);
      type('fault-steps-input', 'networkError');
      fireEvent.click(submitButton());
    };
    const urls = (request: PanelRequest | undefined) =>
      request?.kind === 'faults' ? request.rules.map((each) => `${each.id} ${each.url}`) : [];
    add('orders');
    add('pay');
    const first = posted.at(-2);
    // The worker's answer to the first change comes after the second was asked for.
    act(() => reply(first));
    add('cart');
    expect(urls(posted.at(-1))).toEqual(['rule-1 orders', 'rule-2 pay', 'rule-3 cart']);
    // Nor is the rule set of an answer the worker has since replaced shown.
    expect(shownRules()).toEqual([]);
    act(() => reply(posted.at(-2)));
    act(() => reply(posted.at(-1)));
    expect(shownRules().map((shown) => shown[1])).toEqual(['orders', 'pay', 'cart']);
  });

  it('edits a rule in place, keeping its id; Escape leaves it as it was', () => {
    const { source, sent, answer } = faultSource(scenario(), { rules: [API_RULE] });
    mount(source);
    openFaults();
    fireEvent.click(screen.getByRole('button', { name: 'Edit GET orders → 503, 503, passthrough' }));
    const edit = screen.getByRole('form', { name: 'Edit GET orders → 503, 503, passthrough' });
    const url = within(edit).getByTestId('fault-url') as HTMLInputElement;
    expect(url.value).toBe('orders');
    expect(document.activeElement).toBe(url);
    expect((within(edit).getByTestId('fault-steps-input') as HTMLInputElement).value).toBe(
      '503, 503, passthrough',
    );
    expect((within(edit).getByTestId('fault-method-input') as HTMLSelectElement).value).toBe('GET');

    fireEvent.keyDown(url, { key: 'Escape' });
    expect(screen.queryByRole('form', { name: /^Edit/ })).toBeNull();
    expect(document.activeElement).toBe(screen.getByTestId('fault-edit'));
    expect(sent).toEqual([]);

    fireEvent.click(screen.getByTestId('fault-edit'));
    const again = screen.getByRole('form', { name: /^Edit/ });
    type('fault-steps-input', '429 retry-after=1, 200', again);
    chooseMethod('', again);
    fireEvent.click(submitButton(again));
    expect(sent).toEqual([
      {
        rules: [
          {
            id: 'rule-1',
            url: 'orders',
            steps: [
              { step: 'status', status: 429, headers: { 'retry-after': '1' } },
              { step: 'passthrough' },
            ],
          },
        ],
      },
    ]);
    expect(screen.queryByRole('form', { name: /^Edit/ })).toBeNull();
    answer();
    expect(shownRules()).toEqual([['Any', 'orders', '429 retry-after=1, passthrough', '100 %']]);
  });

  it('shows the rules the worker has, whichever panel set them', () => {
    const { source, worker } = faultSource();
    mount(source);
    openFaults();
    worker({ rules: [API_RULE] });
    expect(shownRules()).toEqual([['GET', 'orders', '503, 503, passthrough', '100 %']]);
    // Another panel removed the rule being edited here: its form goes with it.
    fireEvent.click(screen.getByTestId('fault-edit'));
    worker({ rules: [] });
    expect(screen.queryByRole('form', { name: /^Edit/ })).toBeNull();
    expect(screen.getByTestId('no-fault-rules')).toBeTruthy();
  });

  it('says when the rules are paused because the page left the origin they were set for', () => {
    const { source, worker } = faultSource();
    mount(source);
    openFaults();
    worker({ rules: [API_RULE] });
    expect(screen.queryByTestId('faults-paused')).toBeNull();
    worker({ rules: [API_RULE] }, { origin: 'https://app.example', applied: false });
    expect(screen.getByTestId('faults-paused').textContent).toContain(
      'Paused: these rules were set for https://app.example, and the page is now on another origin.',
    );
    // Still listed: they apply again when the page comes back.
    expect(shownRules()).toHaveLength(1);
    worker({ rules: [API_RULE] }, { applied: false });
    expect(screen.getByTestId('faults-paused').textContent).toContain('Paused: waiting for the page');
    worker({ rules: [API_RULE] });
    expect(screen.queryByTestId('faults-paused')).toBeNull();
    worker({ rules: [] }, { applied: false });
    expect(screen.queryByTestId('faults-paused')).toBeNull();
  });

  it('exports the rules as an msw test, saved or copied, as the panel’s API hands it out', async () => {
    const off: FaultRule = { id: 'rule-2', url: 'pay', steps: [{ step: 'networkError' }], enabled: false };
    const set = { rules: [API_RULE, off] };
    const { source } = faultSource(scenario(), set);
    const { save, copy, api } = mount(source);
    openFaults();
    fireEvent.click(screen.getByTestId('export-msw'));
    expect(save).toHaveBeenCalledWith('retryline-faults.test.ts', mswSnippet(set), 'text/typescript');
    expect(screen.getByTestId('faults-said').textContent).toBe('Saved retryline-faults.test.ts.');
    fireEvent.click(screen.getByTestId('copy-msw'));
    expect(copy).toHaveBeenCalledWith(mswSnippet(set));
    await act(async () => {});
    expect(screen.getByTestId('faults-said').textContent).toBe('Copied the msw test.');
    expect(api.faults()?.mswTest).toBe(mswSnippet(set));
    // The rule switched off is not in it.
    expect(mswSnippet(set)).toContain('http.get(/orders/i, rule1)');
    expect(mswSnippet(set)).not.toContain('pay');
  });

  it('says at each rule what the msw test cannot reproduce, and as an error a rule that never applies', () => {
    const someClients: FaultRule = {
      id: 'rule-2',
      url: 'pay client:ky',
      steps: [{ step: 'networkError' }],
      probability: 0.5,
    };
    const never: FaultRule = {
      id: 'rule-3',
      method: 'GET',
      url: 'method:post',
      steps: [{ step: 'networkError' }],
    };
    const set = { rules: [API_RULE, someClients, never] };
    const { source } = faultSource(scenario(), set);
    const { save } = mount(source);
    openFaults();
    const notes = (testId: string) =>
      screen
        .getAllByTestId('fault-rule')
        .map((item) =>
          [...item.querySelectorAll(`[data-testid="${testId}"]`)].map((note) => note.textContent),
        );
    expect(notes('fault-warning')).toEqual([
      [],
      [
        "msw cannot reproduce this exactly: “client:ky” depends on the request's client (ky) in the page; msw cannot tell which client sent a request, so it is not checked here · in the page it applies to 50 % of matching requests; the handler answers every one",
      ],
      [],
    ]);
    expect(notes('fault-never')).toEqual([
      [],
      [],
      ["Never applies in the page: “method:post” asks for POST, and the rule's method is GET"],
    ]);
    expect(screen.getByTestId('fault-never').className).toContain('rl-field__error');
    // Read out with the rule's switch.
    const toggle = screen.getByRole('checkbox', { name: 'Apply GET method:post → networkError' });
    expect(toggle.getAttribute('aria-describedby')).toBe(screen.getByTestId('fault-never').id);
    expect(
      screen.getByRole('checkbox', { name: /^Apply Any method pay/ }).getAttribute('aria-describedby'),
    ).toBe(screen.getByTestId('fault-warning').id);
    expect(screen.getByRole('checkbox', { name: /^Apply GET orders/ }).hasAttribute('aria-describedby')).toBe(
      false,
    );
    // The file saved is the one the warnings are about.
    fireEvent.click(screen.getByTestId('export-msw'));
    expect(save).toHaveBeenCalledWith('retryline-faults.test.ts', mswSnippet(set), 'text/typescript');
  });

  it('has nothing to export while no rule is on', () => {
    const { source } = faultSource(scenario(), { rules: [{ ...API_RULE, enabled: false }] });
    mount(source);
    openFaults();
    expect((screen.getByTestId('export-msw') as HTMLButtonElement).disabled).toBe(true);
    expect((screen.getByTestId('copy-msw') as HTMLButtonElement).disabled).toBe(true);
  });

  it('tells, from the Requests tab too, that rules are active, and what the tab touches', () => {
    const { source, worker } = faultSource();
    mount(source);
    expect(screen.queryByTestId('faults-banner')).toBeNull();
    worker({ rules: [API_RULE, { ...API_RULE, id: 'rule-2' }] });
    const banner = screen.getByTestId('faults-banner');
    expect(banner.textContent).toBe(
      '2 fault rules active: matching requests get injected failures — shown as injected. Rules are removed when DevTools closes.Show rules',
    );
    fireEvent.click(within(banner).getByRole('button', { name: 'Show rules' }));
    expect(screen.getByTestId('faults-tab').hidden).toBe(false);
    expect(within(banner).queryByRole('button', { name: 'Show rules' })).toBeNull();
    expect(screen.getByTestId('faults-notes').textContent).toBe(
      'Only requests sent through Retryline’s adapters (fetch, axios, ky) in this tab are faulted; others are untouched. A page opts out with <meta name="retryline-faults" content="off">. Production builds leave fault injection out. The rules last while DevTools is open on this tab.',
    );
  });

  it('says when the list has no request to try a pattern on', () => {
    mount(faultSource([]).source);
    openFaults();
    type('fault-url', '/api/*');
    expect(within(form()).getByTestId('fault-matches').textContent).toBe(
      'As in the filter box; no request in the list yet to try it on.',
    );
  });

  it('keeps what is being typed while the Requests tab is shown', () => {
    mount(faultSource().source);
    openFaults();
    type('fault-steps-input', '503');
    fireEvent.click(screen.getByRole('tab', { name: 'Requests' }));
    openFaults();
    expect((within(form()).getByTestId('fault-steps-input') as HTMLInputElement).value).toBe('503');
  });
});

describe('the Faults tab from the keyboard', () => {
  const rule = (id: string, url: string): FaultRule => ({ id, url, steps: [{ step: 'networkError' }] });
  const remove = (url: string) =>
    screen.getByRole('button', { name: `Remove Any method ${url} → networkError` });
  /** Presses a rule's Remove button as the keyboard does: the focus is on it. */
  const pressRemove = (url: string) => {
    const button = remove(url);
    button.focus();
    fireEvent.click(button);
  };

  it('moves the focus from the banner’s Show rules, which goes, to the Faults tab', () => {
    const { source, worker } = faultSource();
    mount(source);
    worker({ rules: [API_RULE] });
    const show = screen.getByRole('button', { name: 'Show rules' });
    show.focus();
    fireEvent.click(show);
    expect(show.isConnected).toBe(false);
    expect(document.activeElement).toBe(screen.getByRole('tab', { name: 'Faults (1)' }));
    expect(screen.getByTestId('faults-tab').hidden).toBe(false);
  });

  it('shows the Requests tab and focuses the filter for / and Ctrl+F pressed in the Faults tab', () => {
    mount(faultSource().source);
    openFaults();
    const faultsTab = screen.getByRole('tab', { name: /^Faults/ });
    faultsTab.focus();
    expect(fireEvent.keyDown(faultsTab, { key: '/' })).toBe(false);
    expect(screen.getByRole('tab', { name: 'Requests' }).getAttribute('aria-selected')).toBe('true');
    expect(screen.getByTestId('faults-tab').hidden).toBe(true);
    expect(document.activeElement).toBe(screen.getByTestId('filter'));

    // In a field of the Faults tab, / is typed; Ctrl+F still goes to the filter.
    openFaults();
    const url = within(form()).getByTestId('fault-url');
    url.focus();
    expect(fireEvent.keyDown(url, { key: '/' })).toBe(true);
    expect(screen.getByTestId('faults-tab').hidden).toBe(false);
    expect(document.activeElement).toBe(url);
    expect(fireEvent.keyDown(url, { key: 'f', ctrlKey: true })).toBe(false);
    expect(document.querySelector('.rl-app')?.getAttribute('data-tab')).toBe('requests');
    expect(document.activeElement).toBe(screen.getByTestId('filter'));
  });

  it('moves the focus from a removed rule’s Remove button to the next rule’s, else the previous one’s, else the Add form', () => {
    const rules = [rule('rule-1', 'orders'), rule('rule-2', 'pay'), rule('rule-3', 'cart')];
    const { source, answer } = faultSource(scenario(), { rules });
    mount(source);
    openFaults();

    pressRemove('pay');
    answer();
    expect(document.activeElement).toBe(remove('cart'));
    pressRemove('cart');
    answer();
    expect(document.activeElement).toBe(remove('orders'));
    pressRemove('orders');
    answer();
    expect(screen.getByTestId('no-fault-rules')).toBeTruthy();
    expect(document.activeElement).toBe(within(form()).getByTestId('fault-method-input'));
  });

  it('moves the focus to the Add form after Remove all, and leaves it where it was moved before the worker answered', () => {
    const rules = [rule('rule-1', 'orders'), rule('rule-2', 'pay')];
    const { source, answer } = faultSource(scenario(), { rules });
    mount(source);
    openFaults();

    pressRemove('orders');
    const steps = within(form()).getByTestId('fault-steps-input');
    steps.focus();
    answer();
    expect(document.activeElement).toBe(steps);

    const removeAll = screen.getByTestId('remove-all-faults');
    removeAll.focus();
    fireEvent.click(removeAll);
    answer();
    expect(document.activeElement).toBe(within(form()).getByTestId('fault-method-input'));
  });
});
