/**
 * Mounts the panel into a page: shared by the DevTools panel's entry and the standalone viewer's,
 * which differ only in where their data comes from.
 */

import { render } from 'preact';
import { App, type PanelApi } from './app';
import type { PanelSource } from './sources';

declare global {
  interface Window {
    /** The panel's API, for the end-to-end test and the benchmark. */
    __retrylinePanel?: PanelApi;
  }
}

export interface MountOptions {
  /** A recording to open at start (`?src=`). */
  readonly src?: string;
  /** Shows a URL's requests in DevTools' Network panel (absent outside DevTools). */
  readonly reveal?: (url: string) => void;
}

/** DevTools' Network panel, as far as the panel uses it: Chrome's `show({ filter })`, where it exists. */
export interface NetworkPanelApi {
  show?: (options?: { filter?: string }) => unknown;
}

/**
 * A function that reveals a URL in the Network panel (filtered to it), or undefined where the
 * browser has no such API (Firefox, older Chrome, the standalone viewer): the button is then not shown.
 */
export function networkRevealer(network: NetworkPanelApi | undefined): ((url: string) => void) | undefined {
  const show = network?.show;
  if (typeof show !== 'function') return undefined;
  return (url) => {
    try {
      void show.call(network, { filter: url });
    } catch {
      // The panel went away with DevTools: nothing to reveal in.
    }
  };
}

export function mountPanel(root: Element, source: PanelSource, options: MountOptions = {}): void {
  render(
    <App
      source={source}
      {...(options.src === undefined ? {} : { src: options.src })}
      {...(options.reveal === undefined ? {} : { reveal: options.reveal })}
      onApi={(api) => {
        window.__retrylinePanel = api;
      }}
    />,
    root,
  );
}

/**
 * Follows DevTools' theme when the page runs inside it (`'dark'`, or Chrome's `'default'` and
 * Firefox's `'light'`); without a theme name, theme.css follows `prefers-color-scheme`.
 */
export function applyTheme(themeName: string | undefined): void {
  if (themeName === undefined) return;
  document.documentElement.dataset.theme = themeName === 'dark' ? 'dark' : 'light';
}

/**
 * The part of `devtools.panels` that tells of DevTools' theme. Firefox fires `onThemeChanged`;
 * Chrome has no such event (reading it gives undefined) but calls the one handler given to
 * `setThemeChangeHandler` with the new theme's name.
 */
export interface ThemePanels {
  readonly themeName?: string;
  readonly onThemeChanged?: { addListener(listener: (themeName: string) => void): void };
  readonly setThemeChangeHandler?: (handler?: (themeName: string) => void) => void;
}

/**
 * Applies DevTools' theme now and on every change, through whichever API the browser has (both
 * where both exist: the theme is applied idempotently). Returns which were used.
 */
export function followDevtoolsTheme(
  panels: ThemePanels | undefined,
  apply: (themeName: string | undefined) => void = applyTheme,
): { readonly event: boolean; readonly handler: boolean } {
  apply(panels?.themeName);
  const onChange = (themeName: unknown) => apply(typeof themeName === 'string' ? themeName : undefined);
  const event = typeof panels?.onThemeChanged?.addListener === 'function';
  if (event) panels?.onThemeChanged?.addListener(onChange);
  const handler = typeof panels?.setThemeChangeHandler === 'function';
  if (handler) panels?.setThemeChangeHandler?.(onChange);
  return { event, handler };
}

/** The `?src=` parameter, when present. */
export function srcParameter(search: string): string | undefined {
  return new URLSearchParams(search).get('src') ?? undefined;
}
