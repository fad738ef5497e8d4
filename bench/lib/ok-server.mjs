// A loopback HTTP server in a child process that answers every request at once with 200 'ok', for
// benches that measure the client's CPU: process.cpuUsage() counts every thread of the process it is
// called in, so a server in the same process would bill its own parsing and writing to whichever
// variant happened to be running. startOkServer() forks this file; run as that child, it listens on
// 127.0.0.1 (port 0), sends its port over the IPC channel and exits when the parent disconnects (or
// dies), so it never outlives the bench.
import { fork } from 'node:child_process';
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';

const SELF = fileURLToPath(import.meta.url);

/** Forks the server; resolves with its URL and a close() that ends the child. */
export async function startOkServer() {
  const child = fork(SELF, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const port = await new Promise((resolve, reject) => {
    child.once('message', (message) => resolve(message.port));
    child.once('error', reject);
    child.once('exit', (code, signal) =>
      reject(new Error(`[bench] the loopback server exited (${signal ?? `code ${code}`}) before listening`)),
    );
  });
  child.removeAllListeners('exit');
  return {
    url: `http://127.0.0.1:${port}/ok`,
    pid: child.pid,
    close: () =>
      new Promise((resolve) => {
        child.once('exit', resolve);
        child.disconnect();
      }),
  };
}

if (process.argv[1] === SELF && process.send) {
  const server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' });
    response.end('ok');
  });
  // A round leaves each client's connection idle while the other variants run; a long keep-alive
  // keeps reconnections (and their CPU) out of the batches.
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
  process.on('disconnect', () => process.exit(0));
}
