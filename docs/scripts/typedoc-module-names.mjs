// A typedoc plugin: names each module after the specifier users import it with (`core/adapter`, its
// page titled `@retryline/core/adapter`) rather than after its source path
// (`packages/core/src/entry/adapter`), which is what typedoc derives from the entry point files.
import { Converter, ReflectionKind } from 'typedoc';
import { entryPoints } from './entry-points.mjs';

/** typedoc's own name for an entry point: its path without extension, `/index` dropped. */
const pathName = (file) => file.replace(/\.ts$/, '').replace(/\/index$/, '');

/** @param {import('typedoc').Application} app */
export function load(app) {
  const names = new Map(entryPoints().map(({ name, file }) => [pathName(file), name]));
  app.converter.on(Converter.EVENT_RESOLVE_BEGIN, (context) => {
    for (const module of context.project.getReflectionsByKind(ReflectionKind.Module)) {
      const name = names.get(module.name);
      if (name === undefined) throw new Error(`No package specifier for the API module ${module.name}`);
      module.name = name;
    }
  });
}
