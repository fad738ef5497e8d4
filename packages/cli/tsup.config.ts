import { defineConfig } from 'tsup';
import { libraryBuild } from '../../tsup.base';

// Two builds share dist/. tsup may run them in parallel, so each one's clean must spare the
// other's files: the library build cleans everything but the binary, the binary build cleans nothing.
export default defineConfig([
  // shims: import.meta.url (where the viewer is) in the CommonJS build too.
  { ...libraryBuild, clean: ['!cli.js', '!cli.js.map'], platform: 'node', shims: true },
  {
    entry: ['src/cli.ts'],
    format: ['esm'],
    dts: false,
    clean: false,
    sourcemap: true,
    target: 'es2022',
    platform: 'node',
    tsconfig: 'tsconfig.json',
    banner: { js: '#!/usr/bin/env node' },
  },
]);
