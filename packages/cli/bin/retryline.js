#!/usr/bin/env node
// The `retryline` command. This file is committed (dist/ is not) so that package managers can
// link the bin on install, before anything is built: a bin pointing into dist/ made `pnpm install`
// in a fresh clone warn "Failed to create bin". The command itself is dist/cli.js.
import { existsSync } from 'node:fs';

const cli = new URL('../dist/cli.js', import.meta.url);
if (!existsSync(cli)) {
  // Only in a clone of the repository: the published package always ships dist/.
  console.error('retryline: the command is not built yet (dist/cli.js is missing): run `pnpm build` first');
  process.exit(1);
}
await import(cli.href);
