/**
 * The worker's writes to `storage.session`: throttled, one at a time, retried until they succeed.
 *
 * - A write that fails keeps its changes marked (`writeFailed`), and is tried again later: a
 *   failed write is never the end of the rows it carried.
 * - A write refused for the quota (10 MiB, shared by every tab) makes room in the tab that wrote:
 *   its own oldest requests go, then it writes again. No tab's write drops another tab's rows, and
 *   new rows are kept rather than old ones.
 * - Writes run in order, each after the one before has settled, so a later write never races an
 *   earlier one's removals, and a closed tab's keys are removed after its last write.
 *
 * The storage and the timer are passed in, so the tests run it against a fake quota.
 */

import { chunkKeysOf, indexKey, planWrite, writeFailed } from './persistence';
import { makeRoom, type TabLog } from './store';

/** The part of `storage.session` the writer uses. */
export interface SessionArea {
  get(keys: string | string[]): Promise<Record<string, unknown>>;
  set(items: Record<string, unknown>): Promise<void>;
  remove(keys: string | string[]): Promise<void>;
}

export interface SessionWriterOptions {
  readonly area: SessionArea;
  /** The log of a tab, if the worker has it. */
  readonly logOf: (tabId: number) => TabLog | undefined;
  /** Runs `callback` after `ms`. @default setTimeout */
  readonly schedule?: (callback: () => void, ms: number) => void;
  /** Told once per kind of failure (the worker logs it). */
  readonly onError?: (what: string, error: unknown) => void;
  /** Told when a tab's own oldest requests were dropped to make room (the worker tells its panels). */
  readonly onEvicted?: (tabId: number) => void;
}

export interface SessionWriter {
  /** Marks a tab's log for writing: within {@link WRITE_DELAY_MS}, or at once (`now`). */
  persist(tabId: number, now?: boolean): void;
  /** Writes every marked tab now; settles when done (or failed and scheduled again). */
  flush(): Promise<void>;
  /** Removes a closed tab's keys, after any write of it already started. */
  forget(tabId: number): Promise<void>;
  /** Settles when the writes and removals started so far have. */
  idle(): Promise<void>;
}

/** How long changes gather before one write: a request is stored at most this long after it happened. */
export const WRITE_DELAY_MS = 100;

/** The wait before trying a failed write again: 0.5 s, doubling to 30 s. */
export const retryDelay = (failures: number): number => Math.min(30_000, 500 * 2 ** (failures - 1));

/** Chrome: "Session storage quota bytes exceeded…"; Firefox and the DOM: QuotaExceededError. */
export function isQuotaError(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return /quota/i.test(String(error));
  const { name, message } = error as { name?: unknown; message?: unknown };
  return name === 'QuotaExceededError' || /quota/i.test(String(message));
}

export function createSessionWriter(options: SessionWriterOptions): SessionWriter {
  const { area, logOf } = options;
  const schedule = options.schedule ?? ((callback, ms) => void setTimeout(callback, ms));
  const warned = new Set<string>();
  const warn = (what: string, error: unknown) => {
    if (warned.has(what)) return;
    warned.add(what);
    options.onError?.(what, error);
  };
  const dirty = new Set<number>();
  let queue: Promise<void> = Promise.resolve();
  let timer = false;
  let failures = 0;

  /**
   * Writes what changed in one tab; `false` when that failed and must be tried again. Changes made
   * while it runs are marked, and written by the next flush (their `persist` armed it).
   */
  const writeTab = async (tabId: number, log: TabLog): Promise<boolean> => {
    for (;;) {
      const plan = planWrite(tabId, log);
      if (!plan) return true;
      try {
        if (plan.remove.length > 0) await area.remove(plan.remove);
        await area.set(plan.set);
        return true;
      } catch (error) {
        writeFailed(log, plan);
        // Out of room: this tab drops its own oldest rows and writes again; each round is smaller.
        if (isQuotaError(error) && makeRoom(log)) {
          warn('storage.session is full: dropping the oldest rows of the tab that wrote', error);
          options.onEvicted?.(tabId);
          continue;
        }
        warn('could not save the timeline (will retry)', error);
        return false;
      }
    }
  };

  const writeDirty = async (): Promise<void> => {
    const tabs = [...dirty];
    dirty.clear();
    let failed = false;
    for (const tabId of tabs) {
      const log = logOf(tabId);
      if (!log) continue;
      if (!(await writeTab(tabId, log))) {
        dirty.add(tabId);
        failed = true;
      }
    }
    if (!failed) {
      failures = 0;
      return;
    }
    failures += 1;
    arm(retryDelay(failures));
  };

  const flush = (): Promise<void> => {
    queue = queue.then(writeDirty, writeDirty);
    return queue;
  };

  const arm = (ms: number) => {
    if (timer) return;
    timer = true;
    schedule(() => {
      timer = false;
      void flush();
    }, ms);
  };

  return {
    persist(tabId, now = false) {
      dirty.add(tabId);
      if (now) void flush();
      else arm(WRITE_DELAY_MS);
    },
    flush,
    forget(tabId) {
      dirty.delete(tabId);
      const key = indexKey(tabId);
      const remove = async () => {
        try {
          const stored = await area.get(key);
          await area.remove([key, ...(chunkKeysOf(tabId, stored[key]) ?? [])]);
        } catch (error) {
          warn('could not forget a closed tab', error);
        }
      };
      queue = queue.then(remove, remove);
      return queue;
    },
    idle: () => queue,
  };
}
