import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { RetrylineEvent } from '@retryline/core';
import type { FaultQuery } from '@retryline/core/instrument';
import { type FetchRetryOptions, retryFetch } from '@retryline/fetch';
import { afterAll, describe, expect, it } from 'vitest';
import { createPageFaults } from '../../extension/src/page/page-faults';
import { parseSteps } from '../../extension/src/shared/fault-shorthand';
import { type FaultRule, type FaultRuleSet, parseFaultRules } from '../../extension/src/shared/faults';
import { mswExport, mswSnippet } from '../../extension/src/shared/msw-snippet';
import { useFaultServer } from '../support/use-fault-server';
import { installHook, removeHookAfterEach } from './fake-hook';

// What was tried in the browser becomes a test: the same rule set, applied by the page hook's own
// fault rules to Retryline's fetch against a real server, and written as an msw snippet that a
// vitest run of its own (a child process, as a developer would run the file) answers with. Each
// request must take the same attempts, with the same answers, both ways.
const server = useFaultServer();
removeHookAfterEach();

const repo = fileURLToPath(new URL('../../', import.meta.url));
const generated = fileURLToPath(new URL('./generated/', import.meta.url));
afterAll(() => rmSync(generated, { recursive: true, force: true }));

const steps = (text: string) => {
  const parsed = parseSteps(text);
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.value;
};

/** A request the page and the generated test both make. */
interface Sent {
  readonly path: string;
  readonly method: 'GET' | 'POST';
}

/** The rules, and one request per rule that they answer. */
const RULES: readonly FaultRule[] = [
  { id: 'items', method: 'GET', url: '/api/items', steps: steps('503, 503, 200') },
  { id: 'flaky', url: '/api/flaky', steps: steps('networkError, 429 retry-after=0, pass') },
  { id: 'orders', method: 'POST', url: '/api/orders', steps: steps('503, 200') },
  { id: 'slow', url: 're:/api/slow$', steps: steps('slow 20 504, slow 10') },
];
const REQUESTS: readonly Sent[] = [
  { path: '/api/items?page=2', method: 'GET' },
  { path: '/api/flaky', method: 'GET' },
  { path: '/api/orders', method: 'POST' },
  { path: '/api/slow', method: 'GET' },
];

/** Each attempt of a request, as its attempt-end events tell: its status, or its error and phase. */
function attemptsOf(events: readonly RetrylineEvent[]): string[] {
  return events.flatMap((event) =>
    event.type === 'attempt-end'
      ? [event.status === undefined ? `${event.error?.name} (${event.phase})` : String(event.status)]
      : [],
  );
}

// The client both runs use: idempotency keys, so the POST may be retried too.
const CLIENT = {
  retries: 5,
  backoff: { strategy: 'constant', base: 1 },
  jitter: 'none',
  idempotencyKey: true,
} as const satisfies FetchRetryOptions;
// The same options as source text, for the generated file.
const CLIENT_FIELDS = JSON.stringify(CLIENT).slice(1, -1);

/** The requests through Retryline's fetch, in Node, with the page's fault rules as the devtools hook. */
async function inThePage(set: FaultRuleSet, requests: readonly Sent[]): Promise<string[][]> {
  const faults = createPageFaults({
    random: () => 0,
    optedOut: () => false,
    controller: () => new AbortController(),
  });
  expect(faults.set(set)).toBe(true);
  installHook({
    push: (event: RetrylineEvent) => {
      if (event.type === 'request-end') faults.ended(event.requestId);
    },
    fault: (query: FaultQuery) => faults.fault(query),
  });
  const results: string[][] = [];
  for (const { path, method } of requests) {
    const events: RetrylineEvent[] = [];
    const api = retryFetch({ ...CLIENT, onEvent: (event) => events.push(event) });
    const response = await api(`${server.url}${path}`, {
      method,
      ...(method === 'POST' ? { body: '{}' } : {}),
    });
    await response.text();
    results.push(attemptsOf(events));
  }
  return results;
}

/**
 * The snippet, with a test that makes the same requests, run by vitest in a process of its own.
 * The client takes the options the snippet writes (`retrylineOptions`: the request id its handlers
 * count attempts by), as the snippet asks.
 */
async function underTheSnippet(set: FaultRuleSet, requests: readonly Sent[]): Promise<string[][]> {
  const id = randomUUID();
  const dir = `${generated}${id}/`;
  mkdirSync(dir, { recursive: true });
  const out = `${dir}attempts.json`;
  const test = [
    mswSnippet(set),
    '// The requests, as the page made them (appended by test/faults/msw-snippet.test.ts).',
    "import { writeFileSync } from 'node:fs';",
    "import type { RetrylineEvent } from '@retryline/core';",
    "import { retryFetch } from '@retryline/fetch';",
    "import { expect, it } from 'vitest';",
    '',
    "it('answers each request as the page did', async () => {",
    '  const results: string[][] = [];',
    `  for (const { path, method } of ${JSON.stringify(requests)}) {`,
    '    const events: RetrylineEvent[] = [];',
    `    const api = retryFetch({ ...retrylineOptions, ${CLIENT_FIELDS}, onEvent: (event) => events.push(event) });`,
    // Port 9 (discard): msw answers every request before anything is sent.
    "    const response = await api('http://127.0.0.1:9' + path, { method, ...(method === 'POST' ? { body: '{}' } : {}) });",
    '    await response.text();',
    `    results.push((${attemptsOf.toString()})(events));`,
    '  }',
    `  writeFileSync(${JSON.stringify(out)}, JSON.stringify(results));`,
    `  expect(results).toHaveLength(${requests.length});`,
    '});',
    '',
  ].join('\n');
  writeFileSync(`${dir}replay.gen.ts`, test);
  const vitest = `${repo}node_modules/vitest/vitest.mjs`;
  await promisify(execFile)(
    process.execPath,
    [vitest, 'run', '--config', 'test/faults/snippet.config.ts', `test/faults/generated/${id}/replay.gen.ts`],
    { cwd: repo, env: { ...process.env, CI: '' }, timeout: 60_000 },
  );
  return JSON.parse(readFileSync(out, 'utf8')) as string[][];
}

describe('the msw snippet of a rule set', () => {
  it('reproduces, under vitest, the attempts the page took', async () => {
    const set = parseFaultRules({ rules: RULES });
    if (!set) throw new Error('the rules do not check');
    for (const { path } of REQUESTS)
      server.script(path.split('?')[0] as string, [{ status: 200, body: 'real' }]);

    const page = await inThePage(set, REQUESTS);
    expect(page).toEqual([
      ['503', '503', '200'],
      ['TypeError (unknown)', '429', '200'],
      ['503', '200'],
      ['504', '200'],
    ]);
    // Only the passthrough attempts reached the server.
    expect(server.requests('/api/items')).toHaveLength(1);

    expect(await underTheSnippet(set, REQUESTS)).toEqual(page);
  }, 90_000);

  it('reproduces the README’s rule, GET /api/* → 503, 503, 200, for each of several requests', async () => {
    // README.md, "Inject faults from the panel": the filter's `*` is a wildcard, and each request
    // takes the whole sequence, however many requests the rule answers.
    const set = parseFaultRules({
      rules: [{ id: 'readme', method: 'GET', url: '/api/*', steps: steps('503, 503, 200') }],
    });
    if (!set) throw new Error('the rule does not check');
    const requests: readonly Sent[] = [
      { path: '/api/items?page=2', method: 'GET' },
      { path: '/api/items?page=3', method: 'GET' },
      { path: '/api/orders/7', method: 'GET' },
    ];
    server.script('/api/items', [{ status: 200, body: 'real' }]);
    server.script('/api/orders/7', [{ status: 200, body: 'real' }]);

    const page = await inThePage(set, requests);
    expect(page).toEqual([
      ['503', '503', '200'],
      ['503', '503', '200'],
      ['503', '503', '200'],
    ]);
    expect(mswExport(set).warnings).toEqual([]);
    expect(await underTheSnippet(set, requests)).toEqual(page);
  }, 90_000);
});
