// Types for bench/lib/bundle-size.mjs, so TypeScript tests (test/size-budget.test.ts) can import it.

/** One thing whose bundle size is measured. */
export interface EntryPoint {
  name: string;
  /** Retryline's own packages are held to a budget; peers are measured for comparison. */
  kind: 'retryline' | 'peer';
  /** The ESM snippet that is bundled, e.g. `export { retryFetch } from '@retryline/fetch';`. */
  contents: string;
  /** Imports left out of the bundle (the HTTP client an adapter wraps). */
  external: string[];
  /** Set only for an entry that cannot be bundled for the browser. */
  platform?: 'browser' | 'node' | 'neutral';
  note?: string;
}

export interface BundleSize {
  /** The minified bundle. */
  text: string;
  minBytes: number;
  gzipBytes: number;
  /** Each input file's bytes in the minified output, largest first (none of 0 bytes). */
  modules: { path: string; bytes: number }[];
}

export const REPO_ROOT: string;
export const ENTRY_POINTS: EntryPoint[];
export function bundleSize(
  contents: string,
  options?: { external?: string[]; platform?: 'browser' | 'node' | 'neutral' },
): Promise<BundleSize>;
export function measure(result: unknown): BundleSize;
/** Bundles `contents` from TypeScript source, to tell which source modules it carries. */
export function sourceBundle(contents: string): Promise<BundleSize>;
/** The guard modules a default `retryFetch` must not carry. */
export const OPT_IN_GUARD_MODULES: string[];
/** The devtools extension's page hook, injected into every page: held to a budget of its own. */
export const PAGE_HOOK: { name: string; kind: 'extension'; file: string; source: string };
/** Sizes of a built file, its path relative to the repository root. */
export function fileSize(path: string): { minBytes: number; gzipBytes: number };
/** The page hook bundled from source as a release build bundles it, to tell which modules it carries. */
export function pageHookBundle(): Promise<BundleSize>;
