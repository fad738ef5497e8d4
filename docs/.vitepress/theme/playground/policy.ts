// The playground's policy: what the form holds, the options object it stands for (only what differs
// from Retryline's defaults, which come from core itself), and that object written out as code to
// paste. The chart is drawn from the very object the text shows, so the two cannot disagree.
import type { BackoffStrategy, JitterType, PolicyOptions } from '@retryline/core';
import { DEFAULTS, type OnMaxDelay } from '@retryline/core/adapter';

/** Everything the visitor can set. Durations in milliseconds; `deadline` 0 means none. */
export interface PolicyForm {
  strategy: BackoffStrategy;
  base: number;
  factor: number;
  step: number;
  exponent: number;
  jitter: JitterType;
  spread: number;
  ratio: number;
  retries: number;
  maxDelay: number;
  onMaxDelay: OnMaxDelay;
  deadline: number;
}

type StrategyParameter = 'factor' | 'step' | 'exponent';

/** Each strategy's formula and its one parameter, if any: a strategy without a row does not compile. */
export const STRATEGIES: Readonly<
  Record<BackoffStrategy, { readonly formula: string; readonly parameter?: StrategyParameter }>
> = {
  constant: { formula: 'base' },
  linear: { formula: 'base + step · n', parameter: 'step' },
  polynomial: { formula: 'base · n^exponent', parameter: 'exponent' },
  exponential: { formula: 'base · factor^n', parameter: 'factor' },
};

type JitterParameter = 'spread' | 'ratio';

/** Each jitter's formula (d: the capped backoff) and its parameter, if any. */
export const JITTERS: Readonly<
  Record<JitterType, { readonly formula: string; readonly parameter?: JitterParameter }>
> = {
  none: { formula: 'd' },
  full: { formula: 'U(0, d)' },
  equal: { formula: 'd/2 + U(0, d/2)' },
  decorrelated: { formula: 'min(maxDelay, U(base, 3 · previous))' },
  proportional: { formula: 'd · U(1 − ratio, 1 + ratio)', parameter: 'ratio' },
  constant: { formula: 'd + U(0, spread)', parameter: 'spread' },
};

export const STRATEGY_NAMES = Object.keys(STRATEGIES) as BackoffStrategy[];
export const JITTER_NAMES = Object.keys(JITTERS) as JitterType[];

/** The form as it opens: Retryline's defaults, with enough retries to see a curve. */
export function initialForm(): PolicyForm {
  return {
    strategy: DEFAULTS.strategy,
    base: DEFAULTS.base,
    factor: DEFAULTS.factor,
    step: DEFAULTS.base,
    exponent: DEFAULTS.exponent,
    jitter: DEFAULTS.jitter,
    spread: DEFAULTS.spread,
    ratio: DEFAULTS.ratio,
    retries: 8,
    maxDelay: DEFAULTS.maxDelay,
    onMaxDelay: DEFAULTS.onMaxDelay,
    deadline: 0,
  };
}

/** A strategy parameter's default: the step defaults to the base, the others are constants. */
function parameterDefault(form: PolicyForm, parameter: StrategyParameter): number {
  return parameter === 'step' ? form.base : DEFAULTS[parameter];
}

/**
 * The options the form stands for, leaving out what equals Retryline's default: paste them and
 * get this policy. A backoff, once it differs, names its strategy and base.
 */
export function policyOptions(form: PolicyForm): PolicyOptions {
  const options: PolicyOptions = {};
  if (form.retries !== DEFAULTS.retries) options.retries = form.retries;

  const parameter = STRATEGIES[form.strategy].parameter;
  const parameterChanged = parameter !== undefined && form[parameter] !== parameterDefault(form, parameter);
  if (form.strategy !== DEFAULTS.strategy || form.base !== DEFAULTS.base || parameterChanged) {
    options.backoff = {
      strategy: form.strategy,
      base: form.base,
      ...(parameter && parameterChanged ? { [parameter]: form[parameter] } : {}),
    };
  }
  if (form.maxDelay !== DEFAULTS.maxDelay) options.maxDelay = form.maxDelay;
  if (form.onMaxDelay !== DEFAULTS.onMaxDelay) options.onMaxDelay = form.onMaxDelay;

  const jitterParameter = JITTERS[form.jitter].parameter;
  if (jitterParameter !== undefined && form[jitterParameter] !== DEFAULTS[jitterParameter]) {
    options.jitter =
      jitterParameter === 'spread'
        ? { type: form.jitter, spread: form.spread }
        : { type: form.jitter, ratio: form.ratio };
  } else if (form.jitter !== DEFAULTS.jitter) {
    options.jitter = form.jitter;
  }
  if (form.deadline > 0) options.deadline = form.deadline;
  return options;
}

/**
 * The clients whose call the options are shown in: the imports, and the call given the options
 * object's source (`undefined` for none).
 */
export const CLIENTS = {
  fetch: {
    imports: ["import { retryFetch } from '@retryline/fetch';"],
    call: (options?: string) => `const api = retryFetch(fetch${options ? `, ${options}` : ''});`,
  },
  axios: {
    imports: ["import { attachRetry } from '@retryline/axios';", "import axios from 'axios';"],
    call: (options?: string) =>
      `const api = axios.create();\nattachRetry(api${options ? `, ${options}` : ''});`,
  },
  ky: {
    imports: ["import { retryline } from '@retryline/ky';", "import ky from 'ky';"],
    call: (options?: string) => `const api = ky.create({ ...retryline(${options ?? ''}) });`,
  },
  retry: {
    imports: ["import { retry } from '@retryline/core';"],
    call: (options?: string) => `const result = await retry(operation${options ? `, ${options}` : ''});`,
  },
} as const satisfies Record<string, { imports: readonly string[]; call: (options?: string) => string }>;

export type Client = keyof typeof CLIENTS;

/** A number as the README writes it: `20_000`, `0.2`. */
function formatNumber(value: number): string {
  if (!Number.isInteger(value) || Math.abs(value) < 10_000) return String(value);
  return String(value).replace(/\B(?=(\d{3})+(?!\d))/g, '_');
}

/** A value as JavaScript source, on one line (strings single-quoted, as the README's examples are). */
function formatValue(value: unknown): string {
  if (typeof value === 'number') return formatNumber(value);
  if (typeof value === 'string') return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
  if (value !== null && typeof value === 'object') {
    const fields = Object.entries(value).map(([key, field]) => `${key}: ${formatValue(field)}`);
    return fields.length === 0 ? '{}' : `{ ${fields.join(', ')} }`;
  }
  return String(value);
}

/**
 * The options as code to paste: the client's imports, then its call with one option a line.
 *
 * @example
 * ```ts
 * formatOptions({ retries: 5, maxDelay: 10_000 }, 'fetch');
 * // import { retryFetch } from '@retryline/fetch';
 * //
 * // const api = retryFetch(fetch, {
 * //   retries: 5,
 * //   maxDelay: 10_000,
 * // });
 * ```
 */
export function formatOptions(options: PolicyOptions, client: Client): string {
  const { imports, call } = CLIENTS[client];
  const entries = Object.entries(options);
  const object =
    entries.length === 0
      ? undefined
      : ['{', ...entries.map(([key, value]) => `  ${key}: ${formatValue(value)},`), '}'].join('\n');
  const code = call(object);
  return `${imports.join('\n')}\n\n${entries.length === 0 ? `${code} // Retryline's defaults` : code}`;
}
