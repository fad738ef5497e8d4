// The page of the Replay end-to-end test: one Retryline fetch client, bundled for the browser as an
// app's development build is, that sends a request when the test asks. Each call aborts its own
// signal once its response is read, as a component that unmounts would: a replay must not need it.
// It can also ask the extension's relay what it told the page hook of the tab's panels, as the hook
// asks on load (a page may post the hook's hello too): the relay answers with it again once it
// knows, after the message it gave the hook, so an answer seen here is one the hook already has.
import { retryFetch } from '@retryline/fetch';
import { NAMESPACE, PROTOCOL_VERSION } from '../../extension/src/shared/protocol';

const api = retryFetch({ retries: 3, backoff: { strategy: 'constant', base: 10 }, jitter: 'none' });

async function call(path: string, method = 'GET'): Promise<number> {
  const caller = new AbortController();
  const response = await api(path, { method, signal: caller.signal });
  await response.text();
  caller.abort();
  return response.status;
}

let panel: boolean | undefined;
addEventListener('message', (event: MessageEvent) => {
  const data = event.data as { ns?: unknown; kind?: unknown; open?: unknown } | null;
  if (event.source === window && data?.ns === NAMESPACE && data.kind === 'panel') panel = data.open === true;
});

/** What the relay last said of the tab's panels (`undefined`: nothing yet), asking it to say it again. */
function panelOpen(): boolean | undefined {
  postMessage({ ns: NAMESPACE, v: PROTOCOL_VERSION, kind: 'hook-hello' }, location.origin);
  return panel;
}

(window as unknown as { replayPage: { call: typeof call; panel: typeof panelOpen } }).replayPage = {
  call,
  panel: panelOpen,
};
