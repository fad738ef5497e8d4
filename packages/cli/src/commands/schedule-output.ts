import type { BackoffStrategy, PolicyOptions, Schedule } from '@retryline/core';
import type { ResolvedPolicy } from '@retryline/core/adapter';
import { DEFAULTS } from '@retryline/core/adapter';
import { formatDuration, formatMinutes } from '../format-duration';
import { type Cell, formatTable } from '../format-table';

/** Everything `retryline schedule` prints, computed; rendering adds no numbers of its own. */
export interface SchedulePreview {
  /** The core options built from the flags (what `--format json` shows). */
  readonly options: PolicyOptions;
  /** The same options resolved by core, defaults filled in (what the table's header shows). */
  readonly policy: ResolvedPolicy;
  readonly schedule: Schedule;
  /** The seed random jitter drew from, and whether the CLI picked it; absent without jitter. */
  readonly seed?: { readonly value: number | string; readonly picked: boolean };
  /** Whether `--jitter` was left to the CLI's default, none. */
  readonly jitterDefaulted: boolean;
}

const STRATEGY_TITLES: Record<BackoffStrategy | 'custom', string> = {
  constant: 'Constant',
  linear: 'Linear',
  polynomial: 'Polynomial',
  exponential: 'Exponential',
  custom: 'Custom',
};

/**
 * The schedule as a table: a header naming the policy, one row per retry, the mean delay, why the
 * policy stops early (if it does) and a reminder that retry n is attempt n + 1.
 */
export function renderScheduleTable(preview: SchedulePreview): string {
  const { schedule } = preview;
  const rows: Cell[][] = schedule.rows.map((row) => [
    String(row.retry),
    String(row.attempt),
    formatDuration(row.delay),
    { value: formatDuration(row.cumulative), note: minutesNote(row.cumulative) },
  ]);
  const lines = [describePolicy(preview)];
  if (preview.seed !== undefined) lines.push(describeSeed(preview.seed));
  lines.push('', formatTable(['Retry', 'Attempt', 'Backoff', 'Cumulative'], rows), '');
  lines.push(`Mean Delay: ${formatDuration(schedule.meanDelay)}`);
  if (schedule.stop !== undefined) lines.push(describeStop(preview, schedule.stop));
  const retries = schedule.rows.length;
  lines.push(
    `retry n is attempt n + 1: ${plural(retries, 'retry', 'retries')} = ${plural(retries + 1, 'attempt', 'attempts')}`,
  );
  return `${lines.join('\n')}\n`;
}

/** `retry,attempt,delay_ms,cumulative_ms`, one row per retry, delays exact (not rounded). */
export function renderScheduleCsv(preview: SchedulePreview): string {
  const rows = preview.schedule.rows.map(
    (row) => `${row.retry},${row.attempt},${row.delay},${row.cumulative}`,
  );
  return `${['retry,attempt,delay_ms,cumulative_ms', ...rows].join('\n')}\n`;
}

/** The options built from the flags, the jitter's seed if any, and the schedule, delays in ms. */
export function renderScheduleJson(preview: SchedulePreview): string {
  const document = {
    options: preview.options,
    ...(preview.seed === undefined ? {} : { seed: preview.seed.value }),
    ...preview.schedule,
  };
  return `${JSON.stringify(document, null, 2)}\n`;
}

function describePolicy(preview: SchedulePreview): string {
  const { backoff, maxDelay, onMaxDelay, deadline, jitter } = preview.policy;
  const parts = [`base ${formatDuration(backoff.base)}`];
  if (backoff.strategy === 'linear') parts.push(`step ${formatDuration(backoff.step)}`);
  if (backoff.strategy === 'polynomial') parts.push(`exponent ${backoff.exponent}`);
  if (backoff.strategy === 'exponential') parts.push(`factor ${backoff.factor}`);
  parts.push(`max delay ${formatDuration(maxDelay)} (${onMaxDelay})`);
  if (deadline !== undefined) parts.push(`deadline ${formatDuration(deadline)}`);
  if (jitter.type === 'none') {
    // The library jitters by default; say so, or the table reads as what a default policy waits.
    parts.push(
      preview.jitterDefaulted
        ? `jitter none (the library default is ${DEFAULTS.jitter}: pass --jitter ${DEFAULTS.jitter} to sample it)`
        : 'jitter none',
    );
  } else if (jitter.type === 'constant') {
    parts.push(`jitter constant (spread ${formatDuration(jitter.spread)})`);
  } else if (jitter.type === 'proportional') {
    parts.push(`jitter proportional (ratio ${jitter.ratio})`);
  } else {
    parts.push(`jitter ${jitter.type}`);
  }
  return `${STRATEGY_TITLES[backoff.strategy]} backoff: ${parts.join(', ')}`;
}

function describeSeed(seed: NonNullable<SchedulePreview['seed']>): string {
  return seed.picked ? `seed ${seed.value} (pass --seed ${seed.value} to reproduce)` : `seed ${seed.value}`;
}

function describeStop(preview: SchedulePreview, stop: NonNullable<Schedule['stop']>): string {
  const before = `Gives up before retry ${stop.retry}`;
  if (stop.reason === 'deadline') {
    const end = preview.schedule.totalDelay + stop.delay;
    const deadline = preview.policy.deadline ?? Number.POSITIVE_INFINITY;
    return `${before}: its ${formatDuration(stop.delay)} wait would end at ${formatDuration(end)}, not before the deadline ${formatDuration(deadline)}`;
  }
  const maxDelay = formatDuration(preview.policy.maxDelay);
  return Number.isFinite(stop.raw)
    ? `${before}: backoff ${formatDuration(stop.raw)} passes max delay ${maxDelay}`
    : `${before}: the next backoff passes max delay ${maxDelay}`;
}

function minutesNote(ms: number): string {
  const minutes = formatMinutes(ms);
  return minutes === '' ? '' : `(${minutes})`;
}

function plural(count: number, one: string, many: string): string {
  return `${count} ${count === 1 ? one : many}`;
}
