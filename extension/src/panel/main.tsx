/**
 * The DevTools panel's entry (`panel.html`). It shows the inspected tab's live timeline; with no
 * tab (the page opened on its own, e.g. by a test with `?tabId=N`, or without one at all) it
 * takes the tab from the query string, else runs as a viewer.
 */

import browser from 'webextension-polyfill';
import {
  followDevtoolsTheme,
  mountPanel,
  type NetworkPanelApi,
  networkRevealer,
  srcParameter,
} from './mount';
import { connectWorker, staticSource } from './sources';

/** `?tabId=N` first (tests open panel.html as a page), then the inspected window's tab. */
function tabIdOf(search: string): number | undefined {
  const raw = new URLSearchParams(search).get('tabId');
  if (raw !== null && /^\d+$/.test(raw)) return Number(raw);
  // Outside DevTools (a plain extension page) `devtools` is absent.
  const tabId = browser.devtools?.inspectedWindow?.tabId;
  return typeof tabId === 'number' && tabId >= 0 ? tabId : undefined;
}

// webextension-polyfill passes Chrome's `setThemeChangeHandler` through, as it does any function
// it does not wrap; Firefox's `browser` has `onThemeChanged` itself.
followDevtoolsTheme(browser.devtools?.panels);

const root = document.getElementById('root');
if (root) {
  const tabId = tabIdOf(location.search);
  const src = srcParameter(location.search);
  // Chrome's `devtools.panels.network`, passed through by the polyfill as it is (Firefox has none).
  const panels = browser.devtools?.panels as { network?: NetworkPanelApi } | undefined;
  const reveal = networkRevealer(panels?.network);
  mountPanel(root, tabId === undefined ? staticSource([], 'viewer') : connectWorker(tabId, browser.runtime), {
    ...(src === undefined ? {} : { src }),
    ...(reveal === undefined ? {} : { reveal }),
  });
}
