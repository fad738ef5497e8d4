import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { useFaultServer } from '../support/use-fault-server';
import { useRedisServer } from './redis-server';

/**
 * Four Node processes, each with its own Redis connection, share one retry
 * budget, one breaker and one recovery gate through redisStore(). The processes run the built packages (dist), as an
 * application would: `pnpm test` builds first.
 */

const root = fileURLToPath(new URL('../../', import.meta.url));
const WORKER = fileURLToPath(new URL('./fleet-worker.mjs', import.meta.url));
const PROCESSES = 4;
const REQUESTS = 250;
// One window longer than the run, so the whole run is one window: retries may be at most
// ratio × requests + minPerSecond × windowMs / 1000 = 0.1 × 1000 + 0.1 × 60 = 106.
const BUDGET = { ratio: 0.1, windowMs: 60_000, minPerSecond: 0.1 } as const;
const LIMIT = BUDGET.ratio * PROCESSES * REQUESTS + (BUDGET.minPerSecond * BUDGET.windowMs) / 1000;

const redis = useRedisServer();
const http = useFaultServer();

interface Worker {
  send(command: object): Promise<Record<string, unknown>>;
  readonly child: ChildProcessWithoutNullStreams;
}
const workers: Worker[] = [];

beforeAll(async () => {
  checkBuilt(['core', 'fetch', 'redis']);
  for (let i = 0; i < PROCESSES; i++) workers.push(await startWorker(redis.port));
}, 30_000);

afterAll(async () => {
  await Promise.all(
    workers.map(async ({ child }) => {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.stdin.end(`${JSON.stringify({ action: 'exit' })}\n`);
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    }),
  );
});

it(`${PROCESSES} processes × ${REQUESTS} failing requests through one shared budget retry at most ${LIMIT} times in all`, async () => {
  http.script('/fail', [{ status: 503 }]);
  const shared = await run('redis', '/fail');
  const sentShared = http.requests('/fail').length;
  const retriesShared = sentShared - PROCESSES * REQUESTS;

  // The control: the same fleet with a memory store per process, each with its own floor.
  http.script('/fail-alone', [{ status: 503 }]);
  await run('memory', '/fail-alone');
  const retriesAlone = http.requests('/fail-alone').length - PROCESSES * REQUESTS;

  console.info(
    `[fleet] shared Redis budget: ${retriesShared} retries for ${PROCESSES * REQUESTS} requests (limit ${LIMIT}); a memory store per process: ${retriesAlone}`,
  );
  expect(retriesShared).toBeLessThanOrEqual(LIMIT);
  // The budget was used, not just never reached: every retry it allows was taken.
  expect(retriesShared).toBeGreaterThanOrEqual(LIMIT - PROCESSES);
  // The budget, not something else, stopped the retries: each refused request got its last 503 back.
  const endings = totals(shared);
  expect(endings['status 503 stoppedBy budget']).toBeGreaterThan(0);
  for (const ending of Object.keys(endings)) {
    expect(['status 503 stoppedBy budget', 'status 503 stoppedBy exhausted']).toContain(ending);
  }
  expect(retriesAlone).toBeGreaterThan(LIMIT);
}, 60_000);

it('a breaker opened by one process is open for the others on their next call: nothing sent', async () => {
  http.script('/breaker', [{ status: 503 }]);
  const command = {
    prefix: `fleet:${randomUUID()}`,
    url: `${http.url}/breaker`,
    breaker: { consecutiveFailures: 5, openMs: 60_000 },
  };
  const [opener, ...others] = workers;
  if (!opener) throw new Error('no worker');
  expect(await opener.send({ action: 'open', ...command })).toMatchObject({ sent: 5 });
  expect(http.requests('/breaker')).toHaveLength(5);
  const probes = await Promise.all(others.map((worker) => worker.send({ action: 'probe', ...command })));
  expect(probes).toEqual(others.map(() => ({ outcome: 'CircuitOpenError' })));
  expect(http.requests('/breaker')).toHaveLength(5);
});

it("a retry in one process is parked by another process's failures, and released by its success", async () => {
  http.script('/gate', [{ status: 503, body: 'down' }]);
  const prefix = `fleet:${randomUUID()}`;
  const url = `${http.url}/gate`;
  const [a, b] = workers;
  if (!a || !b) throw new Error('no workers');
  // A: four attempts (three retries), the origin failing each time: after the third failure in a
  // row the key is held, the fourth attempt is its probe, and that probe's failure puts the next
  // probe 5 to 15 minutes off.
  expect(
    await a.send({ action: 'gate-call', prefix, url, gate: { holdAfter: 3, probeMs: 600_000 } }),
  ).toEqual({ status: 503, attempts: 4 });
  expect(http.requests('/gate')).toHaveLength(4);
  // B, in another process, has seen nothing fail: its first attempt fails (one failure of its
  // own), and its retry is parked, since A's failures hold the origin in the shared store. B's gate
  // asks the store again every 10 to 30 ms while parked, for up to a minute.
  const parked = await b.send({
    action: 'gate-park',
    prefix,
    url,
    retries: 1,
    maxDelay: 60_000,
    gate: { holdAfter: 3, probeMs: 20, maxParkMs: 60_000 },
  });
  expect(parked).toEqual({ parked: { attempt: 2, failures: 5 } });
  expect(http.requests('/gate')).toHaveLength(5);
  // The origin is back; A's next call succeeds and clears the origin's state: B's parked retry goes.
  http.script('/gate', [{ status: 200, body: 'up' }]);
  expect(await a.send({ action: 'gate-call', prefix, url })).toEqual({ status: 200, attempts: 1 });
  expect(await b.send({ action: 'gate-result' })).toEqual({
    status: 200,
    body: 'up',
    attempts: 2,
    events: [
      { type: 'retry-parked', attempt: 2, failures: 5 },
      { type: 'retry-released', attempt: 2, reason: 'released' },
    ],
  });
  // B sent nothing while parked: its first attempt and its released retry.
  expect(http.requests('/gate')).toHaveLength(7);
}, 60_000);

/** Every worker sends its requests at once, through the given store. */
async function run(store: 'redis' | 'memory', path: string) {
  const prefix = `fleet:${randomUUID()}`;
  const command = {
    action: 'budget',
    store,
    prefix,
    url: `${http.url}${path}`,
    requests: REQUESTS,
    budget: BUDGET,
  };
  const results = await Promise.all(workers.map((worker) => worker.send(command)));
  for (const result of results) if ('error' in result) throw new Error(String(result.error));
  return results as { outcomes: Record<string, number> }[];
}

function totals(results: { outcomes: Record<string, number> }[]): Record<string, number> {
  const sum: Record<string, number> = {};
  for (const { outcomes } of results) {
    for (const [name, count] of Object.entries(outcomes)) sum[name] = (sum[name] ?? 0) + count;
  }
  return sum;
}

async function startWorker(redisPort: number): Promise<Worker> {
  const child = spawn(process.execPath, [WORKER, String(redisPort)], { cwd: root, stdio: 'pipe' });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const next = async (): Promise<Record<string, unknown>> => {
    const line = await lines.next();
    if (line.done) throw new Error(`[fleet] worker ${child.pid} exited (${child.exitCode}):\n${stderr}`);
    return JSON.parse(line.value) as Record<string, unknown>;
  };
  expect(await next()).toMatchObject({ ready: true });
  let queue = Promise.resolve();
  return {
    child,
    send(command) {
      const answer = queue.then(() => {
        child.stdin.write(`${JSON.stringify(command)}\n`);
        return next();
      });
      queue = answer.then(
        () => undefined,
        () => undefined,
      );
      return answer;
    },
  };
}

/** The workers run dist: fail with what to do when it is missing or older than the sources. */
function checkBuilt(packages: readonly string[]): void {
  for (const name of packages) {
    const dist = join(root, 'packages', name, 'dist', 'index.js');
    if (!existsSync(dist)) {
      throw new Error(
        `[fleet] ${dist} is missing: the fleet runs the built packages; run 'pnpm build' first`,
      );
    }
    const built = statSync(dist).mtimeMs;
    const newest = newestSource(join(root, 'packages', name, 'src'));
    if (newest.mtime > built) {
      throw new Error(`[fleet] packages/${name}/dist is older than ${newest.path}: run 'pnpm build' first`);
    }
  }
}

function newestSource(dir: string): { path: string; mtime: number } {
  let newest = { path: dir, mtime: 0 };
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || /\.test(-d)?\.ts$/.test(entry.name)) continue;
    const path = join(entry.parentPath, entry.name);
    const mtime = statSync(path).mtimeMs;
    if (mtime > newest.mtime) newest = { path, mtime };
  }
  return newest;
}
