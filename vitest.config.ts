import { defaultServerConditions } from 'vite';
import { defineConfig } from 'vitest/config';

// Tests run against each package's TypeScript source through the `@retryline/source`
// export condition, so no build is needed for unit tests. Vitest 4 reads the condition
// from both resolve.conditions and ssr.resolve.conditions.
const conditions = ['@retryline/source', ...defaultServerConditions];

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions } },
  test: {
    include: [
      'packages/*/src/**/*.test.ts',
      'test/**/*.test.ts',
      'examples/**/*.test.ts',
      'extension/src/**/*.test.{ts,tsx}',
    ],
    restoreMocks: true,
    // CI also writes a JSON report, from which .ci/run prints its closing pass/fail counts.
    reporters: process.env.CI
      ? ['default', ['json', { outputFile: 'node_modules/.cache/vitest/results.json' }]]
      : ['default'],
    testTimeout: 20_000,
  },
});
