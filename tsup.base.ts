import type { Options } from 'tsup';

/** Every library package builds the same way: ESM + CJS with declarations, from src/index.ts. */
export const libraryBuild = {
  entry: ['src/index.ts'],
  format: ['esm', 'cjs'],
  // `pnpm demo` builds JavaScript only (RETRYLINE_BUILD_DTS=0): it runs the packages, it ships no types.
  dts: process.env.RETRYLINE_BUILD_DTS !== '0',
  clean: true,
  sourcemap: true,
  target: 'es2022',
  platform: 'neutral',
  tsconfig: 'tsconfig.json',
} satisfies Options;
