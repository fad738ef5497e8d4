// The playground's simulations run here, in a worker, so the page stays responsive while thousands
// of virtual requests go through Retryline. One request in, one or more answers out (one per
// storm policy as it finishes, then `done`).
import type { PolicyOptions } from '@retryline/core';
import { HERD_STRATEGIES, type HerdResult, simulateHerd, simulateStorm, stormPolicies } from './simulations';

export type SimRequest =
  | {
      readonly kind: 'herd';
      readonly base: number;
      readonly cap: number;
      readonly clients: readonly number[];
    }
  | { readonly kind: 'storm'; readonly options: PolicyOptions };

/** What the storm chart needs of one policy's run. */
export interface StormSummary {
  readonly policy: string;
  /** Attempts that reached the server in each 100 ms bucket. */
  readonly sent: readonly number[];
  /** Requests waiting for a worker at the end of each bucket. */
  readonly queue: readonly number[];
  readonly bucketMs: number;
  readonly stallAt: number;
  readonly stallMs: number;
  readonly incidentAmplification: number;
  readonly recoveredAfterMs: number | null;
  readonly successRate: number;
}

export type SimAnswer =
  | { readonly kind: 'herd'; readonly rows: readonly HerdResult[] }
  | { readonly kind: 'storm'; readonly summary: StormSummary }
  | { readonly kind: 'done'; readonly ms: number }
  | { readonly kind: 'error'; readonly message: string };

const post = (answer: SimAnswer) => postMessage(answer);

async function run(request: SimRequest): Promise<void> {
  const started = performance.now();
  if (request.kind === 'herd') {
    const rows: HerdResult[] = [];
    for (const clients of request.clients) {
      for (const strategy of HERD_STRATEGIES) {
        rows.push(await simulateHerd({ clients, strategy, base: request.base, cap: request.cap }));
      }
    }
    post({ kind: 'herd', rows });
  } else {
    for (const policy of stormPolicies(request.options)) {
      const report = await simulateStorm({ policy });
      post({
        kind: 'storm',
        summary: {
          policy: report.policy,
          sent: report.timeline.map((bucket) => bucket.sent),
          queue: report.timeline.map((bucket) => bucket.queue),
          bucketMs: (report.timeline[1]?.t ?? 100) - (report.timeline[0]?.t ?? 0),
          stallAt: report.scenario.stallAt,
          stallMs: report.scenario.stallMs,
          incidentAmplification: report.incidentAmplification,
          recoveredAfterMs: report.recoveredAfterMs,
          successRate: report.successRate,
        },
      });
    }
  }
  post({ kind: 'done', ms: performance.now() - started });
}

addEventListener('message', (event: MessageEvent<SimRequest>) => {
  run(event.data).catch((error: unknown) => {
    post({
      kind: 'error',
      message: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
    });
  });
});
