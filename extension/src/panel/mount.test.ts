// @vitest-environment happy-dom
import { afterEach, describe, expect, it, vi } from 'vitest';
import { followDevtoolsTheme, type ThemePanels } from './mount';

afterEach(() => {
  delete document.documentElement.dataset.theme;
  vi.unstubAllGlobals();
});

const theme = () => document.documentElement.dataset.theme;

/** Chrome's `chrome.devtools.panels`: a theme name and `setThemeChangeHandler`, no `onThemeChanged`. */
function chromePanels(themeName: string) {
  let handler: ((themeName: string) => void) | undefined;
  const panels = {
    themeName,
    setThemeChangeHandler: vi.fn((callback?: (themeName: string) => void) => {
      handler = callback;
    }),
  };
  return { panels, change: (name: string) => handler?.(name) };
}

describe('following DevTools’ theme', () => {
  it('in Chrome, through setThemeChangeHandler (it has no onThemeChanged)', () => {
    const { panels, change } = chromePanels('default');
    expect(followDevtoolsTheme(panels)).toEqual({ event: false, handler: true });
    expect(theme()).toBe('light');
    change('dark');
    expect(theme()).toBe('dark');
    change('default');
    expect(theme()).toBe('light');
  });

  it('in Chrome, through webextension-polyfill, which passes setThemeChangeHandler through', async () => {
    const { panels, change } = chromePanels('dark');
    // What the polyfill needs to see to wrap `chrome` (an extension page's runtime id).
    vi.stubGlobal('chrome', { runtime: { id: 'retryline-test' }, devtools: { panels } });
    vi.resetModules();
    const { default: browser } = await import('webextension-polyfill');
    followDevtoolsTheme(browser.devtools.panels as ThemePanels);
    expect(theme()).toBe('dark');
    change('default');
    expect(theme()).toBe('light');
    expect(panels.setThemeChangeHandler).toHaveBeenCalledOnce();
  });

  it('in Firefox, through onThemeChanged', () => {
    const listeners: ((themeName: string) => void)[] = [];
    const panels: ThemePanels = {
      themeName: 'light',
      onThemeChanged: { addListener: (listener) => listeners.push(listener) },
    };
    expect(followDevtoolsTheme(panels)).toEqual({ event: true, handler: false });
    expect(theme()).toBe('light');
    for (const listener of listeners) listener('dark');
    expect(theme()).toBe('dark');
  });

  it('outside DevTools, leaves the theme to prefers-color-scheme', () => {
    expect(followDevtoolsTheme(undefined)).toEqual({ event: false, handler: false });
    expect(theme()).toBeUndefined();
  });
});
