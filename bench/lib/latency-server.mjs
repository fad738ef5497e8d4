// Loopback HTTP servers with a chosen latency, in a child process, for bench/balance.mjs and
// bench/hedge.mjs: each answers 200 'ok' after a timer (no CPU, no capacity limit), so what a client
// sees is the latency it was given plus loopback and timer lateness. The child is a separate process
// so that the client's work in the bench process does not delay the servers' timers (and the servers'
// parsing does not bill the client).
//
// Each server is `{ name, baseMs, spread = 0.1 }`: an answer takes `baseMs × (1 − spread + 2·spread·u)`
// (u uniform in [0, 1)), except, with `tailShare` set, that in every run of `round(1 / tailShare)`
// requests exactly one, at a place drawn at random, takes `tailMs` instead. Runs of a fixed length
// rather than a coin per request, so 100·k requests get exactly the stated share of slow answers and
// a p99 measured over them is not decided by a binomial draw landing above or below 1 %. The draws
// are seeded, one sequence per variant (the `x-bench-variant` header; requests without it share
// one) shared by all the servers: a variant's n-th request draws the same whichever server it
// reaches, and whatever the other variants send in between, so runs repeat.
//
// It counts per server and variant the requests that arrived, were answered, were slow, and were
// abandoned (the client closed the connection before the answer: an aborted fetch destroys its
// socket), and keeps the connections it has: open, and busy with a request (in flight). Keep-alive
// is on (60 s), so an idle connection stays open until the client closes it. The parent asks over
// IPC (`stats()`); the child exits when the parent disconnects (or dies), so it never outlives the
// bench.
//
//   const servers = await startLatencyServers({ seed: 1, tailShare: 0.01, tailMs: 100, servers: [{ name: 'a', baseMs: 5 }] });
//   fetch(servers.urls.a, { headers: { [VARIANT_HEADER]: 'x' } }); … await servers.stats(); await servers.close();
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';
import { forkChild } from './child-process.mjs';

const SELF = fileURLToPath(import.meta.url);

/** The header naming the bench variant a request belongs to (its own counts and draws). */
export const VARIANT_HEADER = 'x-bench-variant';

/** Forks the servers; resolves once all listen, with their base URLs by name, `stats()` and `close()`. */
export async function startLatencyServers(settings) {
  const { ready, ask, child, close } = await forkChild(SELF, settings, 'the latency servers');
  const ports = ready.ports;
  return {
    /** Base URL (no trailing slash) of each server, by name. */
    urls: Object.fromEntries(Object.entries(ports).map(([name, port]) => [name, `http://127.0.0.1:${port}`])),
    pid: child.pid,
    /** Per server: counts by variant, open and busy connections, requests in flight, timer lateness. */
    stats: () => ask({ type: 'stats' }).then((message) => message.stats),
    close,
  };
}

// --- The child ---------------------------------------------------------------------------------

async function serve({ seed, servers, tailShare = 0, tailMs = 0 }) {
  // Loaded here, not at the top: the parent needs none of the core.
  const { seededRandom } = await import('../../packages/core/dist/index.js');
  const block = tailShare > 0 ? Math.round(1 / tailShare) : 0;
  const streams = new Map(); // variant → { random, count, slowAt }
  /** The next draw of `variant`: whether its answer is one of the tail's, and u for the others. */
  const draw = (variant) => {
    let stream = streams.get(variant);
    if (!stream) {
      stream = { random: seededRandom(`${seed}/${variant}`), count: 0, slowAt: -1 };
      streams.set(variant, stream);
    }
    if (block > 0 && stream.count % block === 0) stream.slowAt = Math.floor(stream.random() * block);
    const slow = block > 0 && stream.count % block === stream.slowAt;
    stream.count++;
    return { slow, u: stream.random() };
  };
  const ports = {};
  const all = [];
  for (const spec of servers) {
    const { name, baseMs, spread = 0.1 } = spec;
    const byVariant = {};
    const lateness = [];
    const connections = new Set();
    const busy = new Map(); // socket → requests in flight on it
    let accepted = 0;
    let inFlight = 0;

    const server = createServer((request, response) => {
      const variant = String(request.headers[VARIANT_HEADER] ?? '');
      byVariant[variant] ??= { arrived: 0, answered: 0, slow: 0, abandoned: 0 };
      const counts = byVariant[variant];
      counts.arrived++;
      const socket = request.socket;
      busy.set(socket, (busy.get(socket) ?? 0) + 1);
      inFlight++;
      const { slow, u } = draw(variant);
      const ms = slow ? tailMs : baseMs * (1 - spread + 2 * spread * u);
      if (slow) counts.slow++;
      const due = performance.now() + ms;
      const timer = setTimeout(() => {
        lateness.push(performance.now() - due);
        response.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' });
        response.end('ok');
      }, ms);
      // 'close' comes once the answer is written or the connection is gone, whichever is first.
      response.once('close', () => {
        inFlight--;
        const left = (busy.get(socket) ?? 1) - 1;
        if (left > 0) busy.set(socket, left);
        else busy.delete(socket);
        if (response.writableFinished) counts.answered++;
        else {
          counts.abandoned++;
          clearTimeout(timer);
        }
      });
    });
    server.keepAliveTimeout = 60_000;
    server.on('connection', (socket) => {
      accepted++;
      connections.add(socket);
      socket.once('close', () => connections.delete(socket));
    });
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    ports[name] = server.address().port;
    all.push({
      name,
      server,
      stats: () => {
        const sorted = [...lateness].sort((a, b) => a - b);
        const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
        return {
          byVariant,
          connectionsAccepted: accepted,
          openConnections: connections.size,
          busyConnections: busy.size,
          inFlight,
          timerLatenessMs: { p50: at(0.5), p99: at(0.99), max: sorted.at(-1) ?? 0 },
        };
      },
    });
  }
  process.on('message', (message) => {
    if (message.type === 'stats') {
      process.send({ stats: Object.fromEntries(all.map((entry) => [entry.name, entry.stats()])) });
    }
  });
  process.on('disconnect', () => process.exit(0));
  process.send({ ports });
}

if (process.argv[1] === SELF && process.send) {
  await serve(JSON.parse(process.argv[2]));
}
