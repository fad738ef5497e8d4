import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

// The core is read in small pieces: no function (or method) in its sources is longer than 80
// lines, so each step of a request is a screen or so to read and to test.
const core = fileURLToPath(new URL('../packages/core/src/', import.meta.url));
const LIMIT = 80;

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return /\.ts$/.test(entry.name) && !/\.test(-d)?\.ts$/.test(entry.name) ? [path] : [];
  });
}

/** Every function-like node with a body, and its length in lines. */
function functionLengths(path: string): { name: string; lines: number }[] {
  const source = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
  const found: { name: string; lines: number }[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const name = node.name ? node.name.getText(source) : '(anonymous)';
      found.push({ name: `${relative(core, path)}: ${name}`, lines: end - start + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('@retryline/core shape', () => {
  const all = sources(core).flatMap(functionLengths);

  it('finds the functions it measures', () => {
    expect(all.length).toBeGreaterThan(200);
    expect(all.some((fn) => fn.name.endsWith('attempt-loop.ts: runAttemptLoop'))).toBe(true);
  });

  it(`has no function longer than ${LIMIT} lines`, () => {
    const long = all.filter((fn) => fn.lines > LIMIT).map((fn) => `${fn.name} (${fn.lines} lines)`);
    expect(long).toEqual([]);
  });
});
