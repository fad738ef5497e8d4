// The documented entry points, read from the packages' own `exports` (their `@retryline/source`
// condition): a subpath a package adds is documented without an edit here. The CLI and the devtools
// extension are programs, not libraries, and stay out of the API reference.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');
export const DOCUMENTED_PACKAGES = ['core', 'fetch', 'axios', 'ky', 'msw', 'redis', 'otel'];

/** The first sentence of a file's opening comment, without the specifier it may start with. */
function openingSentence(path) {
  const lines = [];
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    const text = /^\s*(?:\/\/|\/\*\*|\*)\s?(.*)$/.exec(line)?.[1];
    if (text === undefined || line.includes('*/')) break;
    lines.push(text);
  }
  const comment = lines
    .join(' ')
    .replace(/\{@link\s+([^}\s|]+)[^}]*\}/g, '$1')
    .trim()
    .replace(/^`@retryline\/[^`]+`:\s*/, '')
    .trim();
  return /^.*?\.(?=\s|$)/.exec(comment)?.[0] ?? comment;
}

/**
 * Every documented entry point: the specifier users import (`@retryline/core/adapter`), its short
 * name (`core/adapter`), the API page it gets (`core.adapter`, under docs/api/), the source file
 * (relative to the repository), and what it is for: the package's description for a package's root,
 * the first sentence of the entry file's opening comment for a subpath.
 * @returns {Array<{ specifier: string, name: string, page: string, file: string, description: string }>}
 */
export function entryPoints() {
  return DOCUMENTED_PACKAGES.flatMap((dir) => {
    const manifest = JSON.parse(readFileSync(join(ROOT, 'packages', dir, 'package.json'), 'utf8'));
    return Object.entries(manifest.exports)
      .filter(([, target]) => typeof target === 'object' && target !== null && target['@retryline/source'])
      .map(([subpath, target]) => {
        const specifier = subpath === '.' ? manifest.name : `${manifest.name}/${subpath.slice(2)}`;
        const name = specifier.replace(/^@retryline\//, '');
        const file = join('packages', dir, target['@retryline/source']);
        return {
          specifier,
          name,
          page: name.replaceAll('/', '.'),
          file,
          description: subpath === '.' ? (manifest.description ?? '') : openingSentence(join(ROOT, file)),
        };
      });
  });
}
