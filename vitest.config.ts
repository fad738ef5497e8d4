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
    include: ['packages/*/src/**/*.test.ts', 'test/**/*.test.ts'],
    restoreMocks: true,
    testTimeout: 20_000,
  },
});
