/**
 * The page hook's fault rules: what core asks (`DevtoolsHook.fault`) before each attempt of a
 * Retryline request, answered from the rules the panel sent for this tab. Matching happens here,
 * in the extension's page script, never in the app's bundle; core only asks and applies.
 *
 * Per request: the first enabled rule whose method and URL match and whose draw succeeds (its
 * `probability`, drawn once per request) is the request's for all its attempts; attempt n takes
 * the rule's step n (the last past the end). The choice is remembered by request id until the
 * request's `request-end` passes through the hook (at most {@link MAX_REMEMBERED} requests).
 *
 * A page opts out with `<meta name="retryline-faults" content="off">`: read at each request the
 * rules would touch, so it holds wherever in the document it is and whenever it was added. It
 * covers the document's frames of its origin too (an app's shell opts out its own frames): each
 * hook reads its own document's and each same-origin ancestor's.
 *
 * A `slow` step carries the signal of the rule set's own controller: when the set is replaced or
 * removed, or the panel goes ({@link PageFaults.stop}), the waits in progress end at once and their
 * attempts go to the server as usual, as the rules' going promises.
 */

import { seededRandom } from '@retryline/core';
import type { FaultQuery, FaultStep } from '@retryline/core/instrument';
import {
  type FaultRule,
  type FaultRuleSet,
  parseFaultRules,
  type RequestFacts,
  requestMatcher,
  stepFor,
} from '../shared/faults';

/** The most requests whose rule is remembered at once (the oldest is forgotten first). */
export const MAX_REMEMBERED = 1000;

/** The meta element a page opts out with. */
export const OPT_OUT_META = 'retryline-faults';

/** What the fault rules need from the page, captured before any page script runs. */
export interface FaultWorld {
  /** A draw in [0, 1) (the page's `Math.random`, as it was at document_start). */
  readonly random: () => number;
  /** Whether the page opted out (see {@link OPT_OUT_META}). */
  readonly optedOut: () => boolean;
  /** A new `AbortController` (a rule set's, whose signal ends its `slow` steps' waits). */
  readonly controller: () => AbortController;
}

/** The page's rules and the question core asks. */
export interface PageFaults {
  /** Takes a rule set from the relay (checked here: a page can post one too). Returns whether it took it. */
  set(value: unknown): boolean;
  /** Core's question before an attempt is sent: the step to answer it with, or `undefined`. */
  fault(query: FaultQuery): FaultStep | undefined;
  /** A request ended (its `request-end` passed through the hook): its choice is forgotten. */
  ended(requestId: string): void;
  /** How many rules apply now (for tests and the hook's fast path). */
  active(): number;
  /** Ends the waits of `slow` steps in progress (the panel went): their attempts are sent at once. */
  stop(): void;
}

interface CompiledRule {
  readonly rule: FaultRule;
  readonly matches: (request: RequestFacts) => boolean;
}

/** The request's rule, chosen under one rule set (a new set chooses again). */
interface Choice {
  readonly rules: readonly CompiledRule[];
  readonly rule: CompiledRule | undefined;
}

function compile(set: FaultRuleSet): CompiledRule[] {
  const compiled: CompiledRule[] = [];
  for (const rule of set.rules) {
    if (rule.enabled === false) continue;
    const matches = requestMatcher(rule.url);
    // Checked already (parseFaultRules): a pattern that cannot match is left out all the same.
    if (typeof matches === 'function') compiled.push({ rule, matches });
  }
  return compiled;
}

export function createPageFaults(world: FaultWorld): PageFaults {
  let rules: readonly CompiledRule[] = [];
  let current = '';
  let random = world.random;
  const choices = new Map<string, Choice>();
  // The rule set's controller, made when a slow step first needs it; aborted when the set goes.
  let waits: AbortController | undefined;
  const stop = () => {
    waits?.abort();
    waits = undefined;
  };

  const choose = (query: FaultQuery): CompiledRule | undefined => {
    for (const candidate of rules) {
      const { rule } = candidate;
      if (rule.method !== undefined && rule.method !== query.method) continue;
      if (!candidate.matches(query)) continue;
      if (rule.probability === undefined || random() < rule.probability) return candidate;
    }
    return undefined;
  };

  return {
    set(value) {
      const set = parseFaultRules(value);
      if (!set) return false;
      const text = JSON.stringify(set);
      // The same rules again (the panel reconnecting): requests keep the rule they were given.
      if (text === current) return true;
      current = text;
      stop();
      rules = compile(set);
      random = set.seed === undefined ? world.random : seededRandom(set.seed);
      choices.clear();
      return true;
    },
    fault(query) {
      if (rules.length === 0 || world.optedOut()) return undefined;
      let choice = choices.get(query.requestId);
      if (choice === undefined || choice.rules !== rules) {
        choice = { rules, rule: choose(query) };
        choices.delete(query.requestId);
        choices.set(query.requestId, choice);
        if (choices.size > MAX_REMEMBERED) choices.delete(choices.keys().next().value as string);
      }
      if (choice.rule === undefined) return undefined;
      const step = stepFor(choice.rule.rule, query.attempt);
      if (step.step !== 'slow') return step.step === 'passthrough' ? undefined : step;
      waits ??= world.controller();
      return { ...step, signal: waits.signal };
    },
    ended(requestId) {
      choices.delete(requestId);
    },
    active: () => rules.length,
    stop,
  };
}

/** A window as the opt-out reads it: its document, and the window it is a frame of (itself at the top). */
export interface FrameLike {
  readonly document: {
    querySelector(selector: string): { getAttribute(name: string): string | null } | null;
  };
  readonly parent: FrameLike;
}

/** How many windows up the opt-out looks at most (a page may fake its `parent` chain, even a loop). */
const MAX_DEPTH = 64;

/**
 * Whether `frame`'s document, or that of one of its ancestors up to the top one, carries
 * `<meta name="retryline-faults" content="off">`. An ancestor of another origin cannot be read
 * (its `document` throws): its opt-out is its own, and the walk goes on above it.
 */
export function optedOutBy(frame: FrameLike) {
  return (): boolean => {
    for (let at = frame, depth = 0; depth < MAX_DEPTH; depth += 1) {
      try {
        const meta = at.document.querySelector(`meta[name="${OPT_OUT_META}" i]`);
        if (meta?.getAttribute('content')?.trim().toLowerCase() === 'off') return true;
      } catch {
        // Another origin's document.
      }
      // The top window is its own parent. (A detached frame's is null: reading it throws, and the
      // hook, which catches, faults nothing.)
      if (at.parent === at) return false;
      at = at.parent;
    }
    return false;
  };
}
