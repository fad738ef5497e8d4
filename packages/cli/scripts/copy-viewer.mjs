// Copies the standalone viewer (built by @retryline/devtools) next to the CLI's dist/, where
// `retryline view` serves it from. The root build runs the extension's build first.

import { existsSync } from 'node:fs';
import { cp, rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

const from = fileURLToPath(new URL('../../../extension/dist/viewer/', import.meta.url));
const to = fileURLToPath(new URL('../viewer/', import.meta.url));
if (!existsSync(from)) {
  console.error(`copy-viewer: ${from} is missing: build @retryline/devtools first (pnpm build does)`);
  process.exit(1);
}
await rm(to, { recursive: true, force: true });
await cp(from, to, { recursive: true });
