import type { Options } from 'tsup';

/** Every library package builds the same way: ESM + CJS with declarations, from src/index.ts. */
export const libraryBuild = {
  entry: ['src/index.ts'],
  format: ['esm', 'cjs'],
  dts: true,
  clean: true,
  sourcemap: true,
  target: 'es2022',
  platform: 'neutral',
  tsconfig: 'tsconfig.json',
} satisfies Options;
