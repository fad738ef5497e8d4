// dist/vitest.d.ts augments `module 'vitest'` but imports nothing from it: the value import of
// `expect` is dropped from the declarations. Without an import the matchers' types applied only
// when a test file imported vitest before '@retryline/msw/vitest', as the README's examples do not.
// This puts a type-only import of vitest at the top of both declaration files.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const IMPORT = "import type {} from 'vitest';\n";
for (const name of ['vitest.d.ts', 'vitest.d.cts']) {
  const file = fileURLToPath(new URL(`../dist/${name}`, import.meta.url));
  // A build without declarations (`pnpm demo`'s) has none to fix.
  if (!existsSync(file)) continue;
  const text = readFileSync(file, 'utf8');
  if (!text.startsWith(IMPORT)) writeFileSync(file, IMPORT + text);
}
