import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

// A caller's abort keeps reaching a response's body after the request (the link to the signal its
// last attempt was sent with stays while the response lives). With one signal shared by every
// request, that link must not keep the responses alive: run in a child process with --expose-gc,
// weak references to sampled responses show whether they are collected.
const dist = fileURLToPath(new URL('../../packages/fetch/dist/index.js', import.meta.url));

const script = `
import { retryFetch } from ${JSON.stringify(dist)};
const shared = new AbortController();
const fake = async () => new Response('ok');
const cases = {
  'a shared signal': retryFetch(fake, { retries: 1 }),
  'a shared signal and a timeout': retryFetch(fake, { retries: 1, timeout: 60_000 }),
  'a shared signal and a deadline': retryFetch(fake, { retries: 1, deadline: 60_000 }),
};
const turn = () => new Promise((resolve) => setTimeout(resolve, 20));
const alive = {};
for (const [name, client] of Object.entries(cases)) {
  const refs = [];
  for (let i = 0; i < 500; i++) {
    const response = await client('http://127.0.0.1:1/x', { signal: shared.signal });
    await response.text();
    if (i % 50 === 0) refs.push(new WeakRef(response));
    if (i % 100 === 0) await turn();
  }
  for (let i = 0; i < 3; i++) { await turn(); globalThis.gc(); }
  alive[name] = refs.filter((ref) => ref.deref() !== undefined).length;
}
console.log(JSON.stringify(alive));
`;

describe('responses of requests that share one signal', () => {
  it('are collected once dropped, whatever keeps the signal linked to their bodies', async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--expose-gc', '--input-type=module', '-e', script],
      { timeout: 30_000 },
    );
    expect(JSON.parse(stdout)).toEqual({
      'a shared signal': 0,
      'a shared signal and a timeout': 0,
      'a shared signal and a deadline': 0,
    });
  });
});
