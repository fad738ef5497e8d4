// Generates the API reference: typedoc reads each package's TSDoc from its TypeScript source and
// typedoc-plugin-markdown writes one Markdown page per entry point into docs/api/, which VitePress
// then builds like any other page. Run by `pnpm docs:build` and `pnpm docs:dev`; the output is not
// committed (.gitignore). A comment's broken `{@link}` is reported as a warning, not a failure.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Application } from 'typedoc';
import { entryPoints, ROOT } from './entry-points.mjs';

const OUT = join(ROOT, 'docs/api');
const entries = entryPoints();

const app = await Application.bootstrapWithPlugins({
  name: 'API reference',
  entryPoints: entries.map(({ file }) => join(ROOT, file)),
  entryPointStrategy: 'resolve',
  tsconfig: join(ROOT, 'docs/scripts/tsconfig.typedoc.json'),
  basePath: ROOT,
  out: OUT,
  plugin: ['typedoc-plugin-markdown', join(ROOT, 'docs/scripts/typedoc-module-names.mjs')],
  // One page per entry point (`core.adapter.md`): a reader finds a name with the page's outline
  // or the site's search.
  outputFileStrategy: 'modules',
  flattenOutputFiles: true,
  pageTitleTemplates: { module: '@retryline/{rawName}' },
  readme: 'none',
  entryFileName: 'index',
  excludePrivate: true,
  excludeInternal: true,
  excludeExternals: true,
  disableSources: true,
  hidePageHeader: true,
  hideBreadcrumbs: true,
  useCodeBlocks: true,
  parametersFormat: 'table',
  interfacePropertiesFormat: 'table',
  classPropertiesFormat: 'table',
  typeDeclarationFormat: 'table',
  sanitizeComments: true,
  validation: { notExported: false, invalidLink: true, notDocumented: false },
  // `pnpm typecheck` checks the sources; typedoc only reads them.
  skipErrorChecking: true,
  logLevel: 'Warn',
});

const project = await app.convert();
if (!project) throw new Error('typedoc could not convert the packages (see the errors above)');
await app.generateOutputs(project);

// typedoc's own index lists the modules by name alone; this one says what each package is for.
const rows = entries.map(
  ({ specifier, page, description }) =>
    `| [\`${specifier}\`](./${page}.md) | ${description.replaceAll('|', '\\|')} |`,
);
writeFileSync(
  join(OUT, 'index.md'),
  [
    '# API reference',
    '',
    "Generated from the packages' TSDoc on every build of this site: each option with its default",
    'and an example. An application imports its adapter (`@retryline/fetch`, `@retryline/axios`,',
    '`@retryline/ky`), which re-exports the application API of `@retryline/core`, its presets and',
    'its failover; `@retryline/core/adapter`, `/store` and `/instrument` are for the authors of',
    'adapters, stores and instrumentation.',
    '',
    '| entry point | what it is |',
    '| --- | --- |',
    ...rows,
    '',
  ].join('\n'),
);
console.log(`API reference: ${entries.length} entry points in ${OUT}`);
