// One member of the fleet in fleet.test.ts: its own Node process with its own ioredis connection,
// running the built packages (dist) as an application would. It takes one JSON command per line
// on stdin and answers each with one JSON line on stdout:
//   { "action": "budget", "store": "redis" | "memory", "prefix", "url", "requests", "budget" }
//     answers { outcomes: { "status 503 stoppedBy budget": n, … } }: how the requests ended
//   { "action": "open", "prefix", "url", "breaker" }    sends until the breaker refuses
//   { "action": "probe", "prefix", "url", "breaker" }   one call
//   { "action": "exit" }
import { createInterface } from 'node:readline';
import { circuitBreaker, memoryStore, retryBudget } from '@retryline/core';
import { getRetryInfo, retryFetch } from '@retryline/fetch';
import { redisStore } from '@retryline/redis';
import { Redis } from 'ioredis';

const client = new Redis(Number(process.argv[2]), '127.0.0.1');
await client.ping();

const answer = (value) => process.stdout.write(`${JSON.stringify(value)}\n`);
const outcome = (error) => (error instanceof Error ? error.name : String(error));

async function budget({ store, prefix, url, requests, budget }) {
  const api = retryFetch(fetch, {
    store: store === 'memory' ? memoryStore() : redisStore(client, { prefix }),
    retries: 3,
    backoff: { strategy: 'constant', base: 1 },
    jitter: 'none',
    budget: retryBudget(budget),
  });
  const outcomes = {};
  for (let i = 0; i < requests; i++) {
    let name;
    try {
      // A refused retry hands back the last response: why no retry followed is in
      // getRetryInfo(), e.g. 'status 503 stoppedBy budget'.
      const response = await api(url);
      await response.text();
      const stoppedBy = getRetryInfo(response)?.stoppedBy;
      name = `status ${response.status}${stoppedBy === undefined ? '' : ` stoppedBy ${stoppedBy}`}`;
    } catch (error) {
      name = outcome(error);
    }
    outcomes[name] = (outcomes[name] ?? 0) + 1;
  }
  return { outcomes };
}

// A breaker value per client, its state in the client's (Redis) store: shared across processes by it.
const breakerClient = ({ prefix, breaker }) =>
  retryFetch(fetch, {
    store: redisStore(client, { prefix }),
    retries: 0,
    budget: false,
    breaker: circuitBreaker(breaker),
  });

async function open(command) {
  const api = breakerClient(command);
  for (let sent = 0; sent < 100; sent++) {
    try {
      await api(command.url);
    } catch (error) {
      if (outcome(error) === 'CircuitOpenError') return { sent, retryAt: error.retryAt };
      throw error;
    }
  }
  throw new Error('the breaker never opened');
}

async function probe(command) {
  try {
    const response = await breakerClient(command)(command.url);
    return { outcome: `status ${response.status}` };
  } catch (error) {
    return { outcome: outcome(error) };
  }
}

const actions = { budget, open, probe };
answer({ ready: true, pid: process.pid });
for await (const line of createInterface({ input: process.stdin })) {
  const command = JSON.parse(line);
  if (command.action === 'exit') break;
  try {
    answer(await actions[command.action](command));
  } catch (error) {
    answer({ error: String(error?.stack ?? error) });
  }
}
await client.quit();
process.exit(0); // stdin may still be open: nothing else should keep the process
