// The server of bench/storm-real.mjs: a loopback HTTP server of fixed capacity, in a child process,
// modelled on the closed-loop storm's server (packages/cli/src/simulate/storm.ts, `createStormServer`)
// but in real time. A FIFO queue in front of `workers` workers; each request holds a worker
// `serviceMs` (a timer, not CPU), then gets 200 'ok'. It does not notice a client giving up: a request
// whose client has disconnected still takes a worker when it reaches the head (wasted work). During
// `[stallAt, stallAt + stallMs)` (ms after the run's start, which the parent sends over IPC) no
// request starts, and one in service when the stall begins finishes `stallMs` later.
//
// Service runs on a nominal clock, so the capacity is `workers / serviceMs` whatever the timers'
// lateness: a worker whose timer fires late starts its next request at the instant it should have
// been free (or at the request's arrival, if later), and its end timer is set from that instant.
// Lateness thus never accumulates into lost capacity; what it does cost shows in `lateness` (how
// long after its nominal end each answer was written). Waits (for the recovery measure) are the
// nominal start minus the arrival.
//
// Per attempt it records the arrival, the nominal start and end of its service, whether the client
// had gone at the start and at the end, and the logical request and attempt it belongs to (the
// `x-storm-request` and `x-storm-attempt` headers); times in ms after the run's start. The parent
// asks for the records over IPC once its clients have settled. A client has gone when its connection
// closed before the answer was written: a client that gives up destroys its socket. Keep-alive is on
// (60 s), so otherwise connections are reused. The child exits when the parent disconnects.
//
//   const server = await startStormServer({ workers: 8, serviceMs: 5, stallAt: 5_000, stallMs: 2_000 });
//   await server.start(t0); … const { records, stats } = await server.report(); await server.close();
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';
import { forkChild } from './child-process.mjs';

const SELF = fileURLToPath(import.meta.url);

/** The header naming the logical request an attempt belongs to (the same on all of its attempts). */
export const REQUEST_HEADER = 'x-storm-request';
/** The header with the attempt's number (1 for the first), where the client can send one. */
export const ATTEMPT_HEADER = 'x-storm-attempt';

/** Milliseconds since the epoch, at sub-millisecond resolution, comparable between the two processes. */
export const epochNow = () => performance.timeOrigin + performance.now();

/**
 * Forks the server with `settings` ({ workers, serviceMs, stallAt, stallMs }). Resolves once it
 * listens, with its URL, `start(t0)` (t0: the run's start as `epochNow()` in this process; resolves
 * once the child has it), `report()` (its records and stats), `clockOffsetMs` (its epoch minus this
 * process's, measured over IPC) and `close()`.
 */
export async function startStormServer(settings) {
  const { ready, ask, child, close } = await forkChild(SELF, settings, 'the storm server');
  const port = ready.port;
  // The two processes' epoch clocks can differ by a little: the offset of the round trip with the
  // least delay, assuming the child read its clock halfway through it.
  let best = { rtt: Number.POSITIVE_INFINITY, offset: 0 };
  for (let i = 0; i < 20; i++) {
    const sent = epochNow();
    const { now } = await ask({ type: 'clock' });
    const received = epochNow();
    if (received - sent < best.rtt) best = { rtt: received - sent, offset: now - (sent + received) / 2 };
  }
  return {
    url: `http://127.0.0.1:${port}/work`,
    pid: child.pid,
    clockOffsetMs: best.offset,
    clockRttMs: best.rtt,
    /** The run starts at `t0` (this process's `epochNow()`), in the child's clock `t0 + offset`. */
    start: (t0) => ask({ type: 'start', t0: t0 + best.offset }),
    report: () => ask({ type: 'report' }),
    close,
  };
}

/** The child: the server itself. */
function serve({ workers, serviceMs, stallAt, stallMs }) {
  const stallEnd = stallAt + stallMs;
  let t0 = epochNow();
  const now = () => epochNow() - t0;

  /** Every attempt, in order of arrival. */
  const records = [];
  const queue = [];
  let head = 0;
  let peakQueue = 0;
  // Idle workers, by the nominal time each became free (the earliest first).
  const idle = Array.from({ length: workers }, () => Number.NEGATIVE_INFINITY);
  const lateness = [];
  let wake;

  const finish = (job, freeAt) => {
    const at = now();
    job.record.finished = true;
    job.record.goneAtEnd = job.gone;
    lateness.push(at - job.record.end);
    if (!job.gone) {
      job.response.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' });
      job.response.end('ok');
    }
    job.response = undefined;
    idle.push(freeAt);
    idle.sort((a, b) => a - b);
    startWork();
  };

  function startWork() {
    const at = now();
    while (idle.length > 0 && head < queue.length) {
      const job = queue[head];
      let start = Math.max(idle[0], job.record.arrival);
      if (start >= stallAt && start < stallEnd) start = stallEnd;
      if (start > at) {
        // Only the stall puts a start in the future: the workers resume at its end.
        wake ??= setTimeout(
          () => {
            wake = undefined;
            startWork();
          },
          Math.ceil(start - at),
        );
        return;
      }
      idle.shift();
      queue[head++] = undefined;
      if (head > 4_096 && head * 2 > queue.length) {
        queue.splice(0, head);
        head = 0;
      }
      // Service in progress when the stall begins pauses for the whole stall.
      const end = start + serviceMs + (start < stallAt && start + serviceMs > stallAt ? stallMs : 0);
      Object.assign(job.record, { start, end, goneAtStart: job.gone });
      finishAt(job, end);
    }
  }

  // Timers count whole milliseconds on a clock read at the event loop's turn, so one may fire a
  // fraction of a millisecond early: an answer is never written before its nominal end. One whose
  // end has passed already (a worker catching up after a late timer) finishes in a microtask, so
  // `startWork` is never re-entered.
  function finishAt(job, end) {
    const left = end - now();
    if (left <= 0) queueMicrotask(() => finish(job, end));
    else setTimeout(() => finishAt(job, end), Math.ceil(left));
  }

  const server = createServer({ noDelay: true }, (request, response) => {
    const id = Number(request.headers[REQUEST_HEADER]);
    const attempt = Number(request.headers[ATTEMPT_HEADER]);
    const record = {
      id: Number.isInteger(id) && id >= 0 ? id : -1,
      attempt: Number.isInteger(attempt) && attempt > 0 ? attempt : 0,
      arrival: now(),
      start: null,
      end: null,
      goneAtStart: null,
      goneAtEnd: null,
      finished: false,
    };
    records.push(record);
    const job = { record, response, gone: false };
    // 'close' before the answer is written: the client destroyed the connection (it gave up).
    response.once('close', () => {
      if (!response.writableEnded) job.gone = true;
    });
    request.resume();
    queue.push(job);
    peakQueue = Math.max(peakQueue, queue.length - head);
    startWork();
  });
  server.keepAliveTimeout = 60_000;
  server.headersTimeout = 65_000;

  /** The records as columns (compact over IPC); `null` where a request has not started or finished. */
  const columns = () => {
    const column = (name) => records.map((record) => record[name]);
    return {
      id: column('id'),
      attempt: column('attempt'),
      arrival: column('arrival'),
      start: column('start'),
      end: column('end'),
      goneAtStart: column('goneAtStart'),
      goneAtEnd: records.map((record) => (record.finished ? record.goneAtEnd : null)),
    };
  };

  process.on('message', (message) => {
    if (message.type === 'clock') process.send({ now: epochNow() });
    else if (message.type === 'start') {
      t0 = message.t0;
      process.send({ started: true });
    } else if (message.type === 'report') {
      const sorted = [...lateness].sort((a, b) => a - b);
      const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
      process.send({
        records: columns(),
        stats: {
          peakQueue,
          waiting: queue.length - head,
          lateness: { p50: at(0.5), p99: at(0.99), max: sorted.at(-1) ?? 0 },
        },
      });
    }
  });
  process.on('disconnect', () => {
    clearTimeout(wake);
    server.closeAllConnections();
    server.close(() => process.exit(0));
  });
  server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
}

if (process.argv[1] === SELF && process.send) serve(JSON.parse(process.argv[2]));
