import { fileURLToPath } from 'node:url';
import { defaultServerConditions } from 'vite';
import { defineConfig } from 'vitest/config';

// The vitest config that test/faults/msw-snippet.test.ts runs a generated snippet file with: the
// repository's (packages read from source), and only the files it generates.
const conditions = ['@retryline/source', ...defaultServerConditions];

export default defineConfig({
  root: fileURLToPath(new URL('../../', import.meta.url)),
  resolve: { conditions },
  ssr: { resolve: { conditions } },
  test: { include: ['test/faults/generated/**/*.gen.ts'], testTimeout: 20_000 },
});
