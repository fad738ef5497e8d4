import { existsSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/** How npm names this CLI. Never `npx retryline`: that asks npm for the unscoped `retryline`, not ours. */
export const NPX_COMMAND = 'npx @retryline/cli';

/** How a clone of the repository runs it: the root package.json's `retryline` script. */
export const CLONE_COMMAND = 'pnpm retryline';

/**
 * The root of the Retryline clone this CLI runs from, or `undefined` when it runs as an installed
 * package (from npm, npx or a global install, all of which put it under a `node_modules`). A clone
 * has the CLI at `packages/cli`, two folders below the workspace's `pnpm-workspace.yaml`.
 */
export function cloneRoot(moduleUrl: string = import.meta.url): string | undefined {
  // Up from this module (src/ or dist/) to the folder of the CLI's package.json.
  let folder = dirname(fileURLToPath(moduleUrl));
  while (!existsSync(join(folder, 'package.json'))) {
    const parent = dirname(folder);
    if (parent === folder) return undefined;
    folder = parent;
  }
  if (folder.split(sep).includes('node_modules')) return undefined;
  const root = resolve(folder, '..', '..');
  return existsSync(join(root, 'pnpm-workspace.yaml')) ? root : undefined;
}

/** `text` as one shell word: as it is when it needs no quoting, in single quotes otherwise. */
function shellWord(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`;
}

/**
 * The command a user pastes to run `retryline <args> <file>` from the folder they are in (`cwd`):
 * `npx @retryline/cli …` with the file as they gave it, or in a clone (`root`, see {@link cloneRoot})
 * `pnpm retryline …`, which pnpm runs in the clone's root, so the file is given from there
 * (absolute when outside it).
 *
 * @example
 * ```ts
 * commandLine(['view'], 'retryline-demo.json'); // 'pnpm retryline view retryline-demo.json' in a clone
 * ```
 */
export function commandLine(
  args: readonly string[],
  file: string,
  { root, cwd }: { root: string | undefined; cwd: string } = { root: cloneRoot(), cwd: process.cwd() },
): string {
  const words = (prefix: string, path: string) => [prefix, ...[...args, path].map(shellWord)].join(' ');
  if (root === undefined) return words(NPX_COMMAND, file);
  const path = resolve(cwd, file);
  const fromRoot = relative(root, path);
  const outside = fromRoot === '..' || fromRoot.startsWith(`..${sep}`) || isAbsolute(fromRoot);
  return words(CLONE_COMMAND, outside ? path : fromRoot);
}
