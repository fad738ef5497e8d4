// The parent's side of a bench server run in a child process (so the client's CPU is measured
// alone): forks `module` with its settings, answers each `ask` with the child's next message, and
// waits for the child's first message (what it listens on) before handing it back.
import { fork } from 'node:child_process';

/**
 * Starts `module` as a child with `settings` (JSON in argv); `name` says what it is in errors.
 * Resolves once the child sends its first message, with that message, `ask(message)` (one
 * request, one answer at a time), the child and `close()`.
 */
export async function forkChild(module, settings, name) {
  const child = fork(module, [JSON.stringify(settings)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  let pending;
  child.on('message', (message) => {
    const resolve = pending;
    pending = undefined;
    resolve?.(message);
  });
  const ask = (message) =>
    new Promise((resolve) => {
      pending = resolve;
      child.send(message);
    });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const ready = await new Promise((resolve, reject) => {
    pending = resolve;
    child.once('error', reject);
    exited.then((code) => reject(new Error(`[bench] ${name} exited (code ${code}) before listening`)));
  });
  return {
    ready,
    ask,
    child,
    close: () => {
      child.disconnect();
      return exited;
    },
  };
}
