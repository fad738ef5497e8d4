import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

// What a user's tsc sees: the published declarations (dist/), resolved as a package consumer's
// NodeNext project resolves them, with the README's import order.
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const project = fileURLToPath(new URL('./types/tsconfig.json', import.meta.url));

describe('@retryline/msw/vitest declarations', () => {
  it("give expect() the matchers when imported before vitest, as the README's examples do", async () => {
    const run = promisify(execFile)(process.execPath, [tsc, '-p', project], { timeout: 60_000 });
    await expect(run).resolves.toMatchObject({ stdout: '' });
  }, 60_000);
});
