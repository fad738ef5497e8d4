// `setImmediate` for the browser, where the simulations' clock (packages/cli/src/simulate/sim-clock.ts)
// settles each virtual instant with it: its callback must run once every pending promise
// continuation has run. A MessageChannel message is a task, so it comes after the microtask queue
// has drained, as setImmediate's callback does in Node, and unlike setTimeout it is not clamped to
// 4 ms once nested.
const scope = globalThis as { setImmediate?: (callback: () => void) => unknown };

if (typeof scope.setImmediate !== 'function') {
  const queue: Array<() => void> = [];
  const channel = new MessageChannel();
  channel.port1.onmessage = () => queue.shift()?.();
  scope.setImmediate = (callback: () => void) => {
    queue.push(callback);
    channel.port2.postMessage(null);
  };
}
