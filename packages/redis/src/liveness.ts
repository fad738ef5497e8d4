/**
 * Whether Redis is alive, judged by Redis's own answers rather than by how long each caller waited.
 *
 * A timer per command measures the caller's view: the time a busy process spent on other work
 * (2,000 responses to parse at the peak of a burst) counts as Redis's. Worse, when a busy stretch
 * ends, Node runs expired timers *before* it reads the sockets that became readable meanwhile
 * (timers, then poll; https://nodejs.org/en/learn/asynchronous-work/event-loop-timers-and-nexttick),
 * so a reply that arrived within 1 ms still loses to its 250 ms timer. So:
 *
 * - a command is given up only when Redis has answered *nothing* (no reply to any command on the
 *   connection, no connect) for `timeoutMs` since the command was sent: replies to other commands
 *   arriving mean Redis is alive, and one connection's replies come in the order it sent them;
 * - the judgement runs in the check phase (`setImmediate`), after the poll phase has read whatever
 *   Redis sent while the process was busy; the one timer only says when to look. A command found
 *   overdue is given up at a later check, `min(50 ms, timeoutMs / 5)` on, if still nothing came.
 *
 * How long Redis took to start a command it did receive is measured by Redis itself, on its clock:
 * each script carries a deadline and answers `late` past it (see `scripts/lua.ts`).
 */
export interface Liveness {
  /** Redis answered something: a reply (an error reply too), a connect, a ready check. */
  heard(): void;
  /**
   * Watches one command asked for now (written in this tick, or held until the connection is
   * ready). `giveUp` is called once, if Redis answers nothing at all for `timeoutMs` from the next
   * check phase or from the last answer, whichever is later. The function returned is for when the
   * command settles: it stops the watch and says whether the command was still watched (false: it
   * was given up).
   */
  watch(timeoutMs: number, giveUp: (silentMs: number) => void): () => boolean;
  /** Since when Redis has been silent, if a command was given up and nothing was heard since. */
  readonly silentSince: number | undefined;
}

interface Watched {
  since: number;
  readonly timeoutMs: number;
  readonly giveUp: (silentMs: number) => void;
  /** Found overdue at a check: given up at a check from `confirmAt` on, if still nothing is heard. */
  suspected?: { readonly quietSince: number; readonly confirmAt: number };
}

// How long an overdue command is given to be answered before it is given up: the poll phase before
// the check may itself have written it (a socket whose kernel buffer was full takes the rest of its
// data only when a poll phase finds it writable, which a busy process reaches late), and an answer
// cannot have come back in the same phase.
const confirmMs = (timeoutMs: number) => Math.min(50, timeoutMs / 5);

/** What a check-phase callback is scheduled with; Node's, typed here (this package's lib is DOM). */
const setImmediateOf = (globalThis as { setImmediate?: (callback: () => void) => unknown }).setImmediate;
const afterPoll: (callback: () => void) => void = setImmediateOf
  ? (callback) => void setImmediateOf(callback)
  : (callback) => void setTimeout(callback, 0);

/** A {@link Liveness} on the clock `now` (the local clock; a test may pass its own). */
export function createLiveness(now: () => number): Liveness {
  const watched = new Set<Watched>();
  let heardAt = Number.NEGATIVE_INFINITY;
  let silentSince: number | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let timerAt = Number.POSITIVE_INFINITY;
  // Commands watched since the last check phase. Their silence counts from the next one, not from
  // the call: what the process does until then is its own work, not Redis's, and a command may be
  // written only then (ioredis's enableAutoPipelining, on a Cluster, writes from setImmediate).
  let unstamped: Watched[] = [];
  const stamp = () => {
    const at = now();
    for (const command of unstamped) command.since = Math.max(command.since, at);
    unstamped = [];
  };

  const disarm = () => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    timerAt = Number.POSITIVE_INFINITY;
  };
  const arm = (at: number) => {
    if (at >= timerAt) return;
    disarm();
    timerAt = at;
    // The timer only says when to look; the looking waits for the poll phase (see above).
    timer = setTimeout(
      () => {
        timer = undefined;
        timerAt = Number.POSITIVE_INFINITY;
        afterPoll(judge);
      },
      Math.max(0, at - now()),
    );
  };

  function judge() {
    const at = now();
    let next = Number.POSITIVE_INFINITY;
    for (const command of watched) {
      const quietSince = Math.max(command.since, heardAt);
      const due = quietSince + command.timeoutMs;
      if (at < due) {
        next = Math.min(next, due);
        continue;
      }
      if (command.suspected?.quietSince !== quietSince) {
        command.suspected = { quietSince, confirmAt: at + confirmMs(command.timeoutMs) };
      }
      if (at < command.suspected.confirmAt) {
        next = Math.min(next, command.suspected.confirmAt);
        continue;
      }
      watched.delete(command);
      silentSince ??= quietSince;
      command.giveUp(at - quietSince);
    }
    if (next !== Number.POSITIVE_INFINITY) arm(next);
  }

  return {
    heard() {
      heardAt = now();
      silentSince = undefined;
    },
    watch(timeoutMs, giveUp) {
      const command: Watched = { since: now(), timeoutMs, giveUp };
      watched.add(command);
      if (unstamped.push(command) === 1) afterPoll(stamp);
      arm(command.since + timeoutMs);
      return () => {
        const still = watched.delete(command);
        if (watched.size === 0) disarm();
        return still;
      };
    },
    get silentSince() {
      return silentSince;
    },
  };
}
