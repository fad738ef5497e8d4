/**
 * The standalone viewer's entry (`viewer.html`, what `retryline view` serves): the same panel on a
 * fixed timeline, from `?src=<same-origin URL>` or an imported file. A plain web page: no
 * extension API here, and webextension-polyfill (which throws outside an extension) is never loaded.
 */

import { mountPanel, srcParameter } from '../panel/mount';
import { staticSource } from '../panel/sources';

const root = document.getElementById('root');
if (root) {
  const src = srcParameter(location.search);
  mountPanel(root, staticSource([], 'viewer'), src === undefined ? {} : { src });
}
