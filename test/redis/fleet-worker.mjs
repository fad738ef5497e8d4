// One member of the fleet in fleet.test.ts: its own Node process with its own ioredis connection,
// running the built packages (dist) as an application would. It takes one JSON command per line
// on stdin and answers each with one JSON line on stdout:
//   { "action": "budget", "store": "redis" | "memory", "prefix", "url", "requests", "budget" }
//     answers { outcomes: { "status 503 stoppedBy budget": n, … } }: how the requests ended
//   { "action": "open", "prefix", "url", "breaker" }    sends until the breaker refuses
//   { "action": "probe", "prefix", "url", "breaker" }   one call
//   { "action": "gate-call", "prefix", "url", "gate" }  one call through this worker's gate client
//     for the prefix (made on first use, kept): answers { status, attempts }
//   { "action": "gate-park", "prefix", "url", "gate" }  starts one call through another gate client
//     for the prefix, and answers { parked: { attempt, failures } } once its retry is parked
//   { "action": "gate-result" }                         that call's end: { status, body, attempts, events }
//   { "action": "exit" }
import { createInterface } from 'node:readline';
import { circuitBreaker, memoryStore, recoveryGate, retryBudget } from '@retryline/core';
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
    // About the budget alone: retries are not parked by the (shared) recovery gate.
    gate: false,
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

// One redisStore per prefix in this process, kept: the gate's clients share it, as an app's would.
const stores = new Map();
const storeFor = (prefix) => {
  if (!stores.has(prefix)) stores.set(prefix, redisStore(client, { prefix }));
  return stores.get(prefix);
};

// Recovery-gate clients, kept per prefix: what one has seen of a key (its failures) stays with it.
const gateClients = new Map();
const gateClient = ({ prefix, gate, retries = 3, maxDelay }, onEvent) =>
  retryFetch(fetch, {
    store: storeFor(prefix),
    retries,
    backoff: { strategy: 'constant', base: 1 },
    jitter: 'none',
    ...(maxDelay === undefined ? {} : { maxDelay }),
    budget: false,
    gate: recoveryGate(gate),
    ...(onEvent ? { onEvent } : {}),
  });

async function gateCall(command) {
  if (!gateClients.has(command.prefix)) gateClients.set(command.prefix, gateClient(command));
  const response = await gateClients.get(command.prefix)(command.url);
  await response.text();
  return { status: response.status, attempts: getRetryInfo(response)?.attempts };
}

// The call gate-park started: its events, and how it ended.
let pending;

async function gatePark(command) {
  const events = [];
  let parked;
  const isParked = new Promise((resolve) => {
    parked = resolve;
  });
  const api = gateClient(command, (event) => {
    if (event.type === 'retry-parked' || event.type === 'retry-released') {
      events.push({
        type: event.type,
        attempt: event.attempt,
        failures: event.failures,
        reason: event.reason,
      });
    }
    if (event.type === 'retry-parked') parked({ attempt: event.attempt, failures: event.failures });
  });
  const call = (async () => {
    const response = await api(command.url);
    return {
      status: response.status,
      body: await response.text(),
      attempts: getRetryInfo(response)?.attempts,
      events,
    };
  })();
  pending = call.catch((error) => ({ error: String(error?.stack ?? error), events }));
  // Parked, or ended without being parked (answered as it ended).
  return Promise.race([isParked.then((event) => ({ parked: event })), pending]);
}

const gateResult = () => pending;

const actions = {
  budget,
  open,
  probe,
  'gate-call': gateCall,
  'gate-park': gatePark,
  'gate-result': gateResult,
};
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
