/**
 * The DevTools page: adds the Retryline panel. The panel learns its tab from the query string, so
 * the same page also opens outside DevTools (in tests, as `chrome-extension://<id>/panel.html?tabId=N`).
 */

import browser from 'webextension-polyfill';

browser.devtools.panels
  .create('Retryline', '', `panel.html?tabId=${browser.devtools.inspectedWindow.tabId}`)
  .catch((error: unknown) => console.warn('[Retryline] could not add the panel:', error));
