/**
 * What an id names depends on who sent it, so a row is keyed by the frame's origin and the request
 * id together. A request id is the sending frame's own: a caller may choose it
 * (`requestId`, or an incoming `X-Request-Id` passed on with `requestIdHeader`), so another
 * frame (a cross-origin ad or widget in the same tab) can know it and send events under it.
 * Guard keys are the same: each frame runs its own breaker and budget for `https://api.example`.
 * Every place that groups events (the worker's ring, the panel's rows and lanes, an import)
 * keys them with this one function, so none of them can fall back to the id alone.
 *
 * `origin` is the entry's `origin`: the worker sets it from what the browser says of the sender
 * (see `senderOrigin`), never from the event, which the page writes.
 */
export function frameKey(origin: string, id: string): string {
  // The origin's length first: the key is unambiguous whatever either string holds (an imported
  // origin is free text, and may contain any separator one could choose).
  return `${origin.length}:${origin} ${id}`;
}
