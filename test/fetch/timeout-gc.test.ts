import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

// TOOLCHAIN: on Node 20, AbortSignal.any([s, AbortSignal.timeout(ms)]) can silently never fire once
// the timeout signal is garbage-collected. Retryline's per-attempt timeout holds its own timer; this
// proves it in a child process started with --expose-gc, forcing collections while 20 attempts hang.
const dist = fileURLToPath(new URL('../../packages/fetch/dist/index.js', import.meta.url));

const script = `
import { createServer } from 'node:http';
import { retryFetch, isRetrylineError } from ${JSON.stringify(dist)};
const sockets = new Set();
const server = createServer(() => {}); // never answers: every attempt hangs until its timeout
server.on('connection', (socket) => { sockets.add(socket); socket.on('close', () => sockets.delete(socket)); });
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const url = 'http://127.0.0.1:' + server.address().port + '/hang';
// gate: false: the recovery gate would park the retries of an origin that never answers; this is
// about the attempts' own timers.
const client = retryFetch(fetch, { retries: 1, timeout: 200, backoff: 10, jitter: 'none', gate: false });
const started = Date.now();
const runs = Array.from({ length: 20 }, () =>
  client(url).then(() => 'resolved', (error) => isRetrylineError(error, 'RetriesExhaustedError') && error.cause?.name === 'AttemptTimeoutError' ? 'timed out' : String(error)),
);
for (const at of [50, 120, 260, 330]) setTimeout(() => globalThis.gc(), at);
const outcomes = await Promise.race([Promise.all(runs), new Promise((resolve) => setTimeout(() => resolve('hung'), 5000))]);
for (const socket of sockets) socket.destroy();
server.close();
console.log(JSON.stringify({ outcomes, elapsed: Date.now() - started }));
process.exit(0);
`;

describe('per-attempt timeout under garbage collection', () => {
  it('fires for every attempt even when gc() runs between start and deadline', async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--expose-gc', '--input-type=module', '-e', script],
      {
        timeout: 30_000,
      },
    );
    const { outcomes, elapsed } = JSON.parse(stdout) as { outcomes: string[] | 'hung'; elapsed: number };
    expect(outcomes).toEqual(Array.from({ length: 20 }, () => 'timed out'));
    // Two attempts of 200 ms and a 10 ms wait: every request ends after at least 410 ms.
    expect(elapsed).toBeGreaterThanOrEqual(400);
  });
});
