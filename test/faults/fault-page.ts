// The page of the fault-injection end-to-end test: Retryline's fetch, bundled for the browser as an
// app's development build is, making one request when the test asks and telling how it went. The
// same script runs in the page's frames, which the test reaches through the top page (a frame of
// another origin is out of the test's reach otherwise): the top page asks a frame over
// `postMessage`, and the frame answers its parent.
import type { RetrylineEvent } from '@retryline/core';
import { getRetryInfo, retryFetch } from '@retryline/fetch';

/** How one request went: its final status, its attempts, and which of them were injected. */
export interface CallResult {
  readonly status: number;
  readonly attempts: number;
  readonly injected: readonly number[];
}

/** What a frame is asked: to make a request, or to tell which fault messages its window saw. */
type FrameQuestion = { readonly what: 'call'; readonly path: string } | { readonly what: 'faults' };

/** The messages of kind `faults` a document's window saw, recorded from its start (see the test's pages). */
type Recorded = Window & { faultMessages?: unknown[] };

async function call(path: string): Promise<CallResult> {
  const events: RetrylineEvent[] = [];
  const api = retryFetch({
    retries: 3,
    backoff: { strategy: 'constant', base: 10 },
    jitter: 'none',
    onEvent: (event) => events.push(event),
  });
  const response = await api(path);
  await response.text();
  const injected = events.flatMap((event) =>
    event.type === 'attempt-end' && event.injected === true ? [event.attempt] : [],
  );
  return { status: response.status, attempts: getRetryInfo(response)?.attempts ?? 0, injected };
}

/** The fault messages this window saw: what a script of the page could read. */
function faults(): unknown[] {
  return (window as Recorded).faultMessages ?? [];
}

async function answer(question: FrameQuestion): Promise<unknown> {
  return question.what === 'call' ? call(question.path) : faults();
}

/** Asks the page's `index`th frame `question`, and resolves with its answer. */
function askFrame(index: number, question: FrameQuestion): Promise<unknown> {
  const frame = document.querySelectorAll('iframe')[index]?.contentWindow;
  if (!frame) return Promise.reject(new Error(`no frame ${index}`));
  const id = Math.random();
  return new Promise((resolve) => {
    const onAnswer = (event: MessageEvent) => {
      const data = event.data as { faultPageAnswer?: number; result?: unknown } | null;
      if (event.source !== frame || data?.faultPageAnswer !== id) return;
      window.removeEventListener('message', onAnswer);
      resolve(data.result);
    };
    window.addEventListener('message', onAnswer);
    frame.postMessage({ faultPageQuestion: id, question }, '*');
  });
}

/** Loads the page's `index`th frame again (a new document in it), once it has loaded. */
function reloadFrame(index: number): Promise<void> {
  const frame = document.querySelectorAll('iframe')[index];
  if (!frame) return Promise.reject(new Error(`no frame ${index}`));
  return new Promise((resolve) => {
    frame.addEventListener('load', () => resolve(), { once: true });
    frame.setAttribute('src', frame.src);
  });
}

// A frame answers its parent's questions.
window.addEventListener('message', (event) => {
  const data = event.data as { faultPageQuestion?: number; question?: FrameQuestion } | null;
  if (window.parent === window || event.source !== window.parent) return;
  if (typeof data?.faultPageQuestion !== 'number' || !data.question) return;
  const id = data.faultPageQuestion;
  void answer(data.question).then((result) =>
    window.parent.postMessage({ faultPageAnswer: id, result }, '*'),
  );
});

(window as unknown as { faultPage: unknown }).faultPage = {
  call,
  faults,
  /** Whether the page and its frames have loaded (a frame's script then answers). */
  loaded: () => document.readyState === 'complete',
  frameCall: (index: number, path: string) => askFrame(index, { what: 'call', path }),
  frameFaults: (index: number) => askFrame(index, { what: 'faults' }),
  reloadFrame,
};
