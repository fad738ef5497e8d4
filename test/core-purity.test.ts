import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// The core decides with injected time and randomness: only its clock and random
// modules may touch the real ones, and it ships with no runtime dependency.
const core = fileURLToPath(new URL('../packages/core/', import.meta.url));
const ALLOWED = new Set(['src/time/clock.ts', 'src/time/random.ts', 'src/time/virtual-clock.ts']);
const FORBIDDEN = [
  /\bDate\.now\b/,
  /\bnew Date\(\s*\)/,
  /\bMath\.random\b/,
  /\bperformance\.now\b/,
  /\bsetTimeout\b/,
  /\bsetInterval\b/,
  /\bsetImmediate\b/,
];

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return /\.ts$/.test(entry.name) && !/\.test(-d)?\.ts$/.test(entry.name) ? [path] : [];
  });
}

// Comments may name what the code must not call; only code counts.
const stripComments = (code: string) =>
  code.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');

describe('@retryline/core purity', () => {
  const files = sources(join(core, 'src')).map((path) => ({
    name: relative(core, path),
    code: readFileSync(path, 'utf8'),
  }));

  it('finds the core sources it checks', () => {
    expect(files.map((file) => file.name)).toContain('src/retry.ts');
    expect(files.length).toBeGreaterThan(10);
  });

  it('calls Date.now, Math.random and timers only in its clock and random modules', () => {
    const offences = files
      .filter((file) => !ALLOWED.has(file.name))
      .flatMap((file) =>
        FORBIDDEN.filter((pattern) => pattern.test(stripComments(file.code))).map(
          (pattern) => `${file.name}: ${pattern}`,
        ),
      );
    expect(offences).toEqual([]);
  });

  it('imports no node: module and no package', () => {
    const imports = files.flatMap((file) =>
      [...stripComments(file.code).matchAll(/\bfrom\s+['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]/g)]
        .map((match) => match[1] ?? match[2] ?? '')
        .filter((specifier) => !specifier.startsWith('.'))
        .map((specifier) => `${file.name}: ${specifier}`),
    );
    expect(imports).toEqual([]);
  });

  it('declares no runtime dependencies', () => {
    const manifest = JSON.parse(readFileSync(join(core, 'package.json'), 'utf8'));
    expect(manifest.dependencies ?? {}).toEqual({});
    expect(manifest.peerDependencies ?? {}).toEqual({});
    expect(manifest.optionalDependencies ?? {}).toEqual({});
  });

  it('would catch an offence (the check is not vacuous)', () => {
    const sample = 'export const delay = () => Math.random() * 10; // fine in a comment: Date.now()';
    expect(FORBIDDEN.some((pattern) => pattern.test(stripComments(sample)))).toBe(true);
    expect(FORBIDDEN.some((pattern) => pattern.test(stripComments('// Date.now() only here')))).toBe(false);
  });
});
