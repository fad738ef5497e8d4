import { readdirSync, readFileSync } from 'node:fs';
import { run } from '@retryline/cli';
import { describe, expect, it } from 'vitest';

const root = new URL('../', import.meta.url);
const readme = readFileSync(new URL('README.md', root), 'utf8');
const blocks = (lang: string) =>
  [...readme.matchAll(new RegExp(`^\`\`\`${lang}\\n([\\s\\S]*?)^\`\`\`$`, 'gm'))].map(
    (match) => match[1] ?? '',
  );

describe('README.md', () => {
  it('has a quick start of exactly two commands', () => {
    const section = readme.split('<!-- quick-start:begin -->')[1]?.split('<!-- quick-start:end -->')[0] ?? '';
    const commands = section.split('\n').filter((line) => line.trim() !== '' && !line.startsWith('```'));
    expect(commands).toEqual([
      'npm install -g pnpm@10.34.9 && pnpm install && pnpm bootstrap && pnpm demo',
      'pnpm test',
    ]);
  });

  it('shows only TypeScript that is compiled: every snippet line is in a type-checked example', () => {
    const examples = readdirSync(new URL('examples/', root))
      .filter((name) => name.endsWith('.ts'))
      .flatMap((name) => readFileSync(new URL(`examples/${name}`, root), 'utf8').split('\n'))
      .map((line) => line.trim());
    const snippets = blocks('ts');
    expect(snippets.length).toBeGreaterThanOrEqual(3);
    const missing = snippets
      .flatMap((snippet) => snippet.split('\n'))
      .map((line) => line.trim())
      .filter((line) => line !== '' && !examples.includes(line));
    expect(missing).toEqual([]);
  });

  it('prints the schedule exactly as the CLI does', async () => {
    const [block] = blocks('console');
    const [command, ...output] = (block ?? '').trimEnd().split('\n');
    // As a reader runs it: the scoped package through npx (the unscoped `retryline` is not ours).
    expect(command).toMatch(/^\$ npx @retryline\/cli /);
    const argv = (command ?? '').replace(/^\$ npx @retryline\/cli /, '').split(' ');
    let stdout = '';
    const code = await run(argv, { stdout: (text) => (stdout += text), stderr: () => {} });
    expect(code).toBe(0);
    expect(output.join('\n')).toBe(stdout.trimEnd());
  });
});
