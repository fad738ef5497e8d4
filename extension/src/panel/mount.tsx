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
}

export function mountPanel(root: Element, source: PanelSource, options: MountOptions = {}): void {
  render(
    <App
      source={source}
      {...(options.src === undefined ? {} : { src: options.src })}
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

/** The `?src=` parameter, when present. */
export function srcParameter(search: string): string | undefined {
  return new URLSearchParams(search).get('src') ?? undefined;
}
