import { defineConfig } from 'tsup';
import { libraryBuild } from '../../tsup.base';

// The root and the five subpaths (package.json `exports`). Split into shared chunks, CommonJS as
// well as ESM: the subpaths and the root must be one module (one event emitter, one set of error
// classes), not a copy each.
export default defineConfig({
  ...libraryBuild,
  entry: {
    index: 'src/index.ts',
    adapter: 'src/entry/adapter.ts',
    store: 'src/entry/store.ts',
    instrument: 'src/entry/instrument.ts',
    presets: 'src/entry/presets.ts',
    failover: 'src/entry/failover.ts',
  },
  splitting: true,
  treeshake: true,
});
