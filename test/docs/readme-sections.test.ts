import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readmeIncludes, slugify } from '../../docs/.vitepress/readme-sections';

/** A repository with a README and a docs folder holding the given pages. */
function repository(readme: string, pages: Record<string, string>) {
  const root = mkdtempSync(join(tmpdir(), 'retryline-docs-'));
  writeFileSync(join(root, 'README.md'), readme);
  for (const [path, text] of Object.entries(pages)) {
    mkdirSync(join(root, 'docs', path, '..'), { recursive: true });
    writeFileSync(join(root, 'docs', path), text);
  }
  return root;
}

const README = [
  '# Project',
  '',
  '## Install',
  '',
  'See [the guards](#guards-budget-and-breaker) and [Redirects](#what-is-retried), or [the quick start](#quick-start).',
  'The example is [`examples/a.ts`](examples/a.ts); the store is [`@x/redis`](packages/redis).',
  'Try [the playground](docs/playground.md) on [the site](docs/).',
  '![chart](bench/charts/a.svg)',
  '',
  '```sh',
  '## not a heading',
  '```',
  '',
  '### What is retried',
  '',
  'Everything.',
  '',
  '## Guards: budget and breaker',
  '',
  '<img src="docs/panel.png" width="10">',
  '',
  '## Quick start',
  '',
  'Two commands.',
].join('\n');

describe('README sections on the docs site', () => {
  it('slugs headings as GitHub does', () => {
    expect(slugify('Guards: recovery gate, retry budget, circuit breaker')).toBe(
      'guards-recovery-gate-retry-budget-circuit-breaker',
    );
    expect(slugify('Failover across endpoints, and hedged requests')).toBe(
      'failover-across-endpoints-and-hedged-requests',
    );
    expect(slugify('Presets: Stripe, GitHub, AWS, Google Cloud, OpenAI')).toBe(
      'presets-stripe-github-aws-google-cloud-openai',
    );
  });

  it('puts a section on its page: sub-headings lifted, anchors and files pointed at the site', () => {
    const root = repository(README, {
      'guide/install.md': '# Install\n\n<!--@readme: Install-->\n',
      'guide/guards.md': '# Guards\n\n<!--@readme: Guards: budget and breaker-->\n',
    });
    const expand = readmeIncludes({
      root,
      srcDir: join(root, 'docs'),
      repositoryUrl: undefined,
      apiPages: new Map([['redis', '/api/redis.md']]),
    });
    const page = join(root, 'docs/guide/install.md');
    const out = expand('# Install\n\n<!--@readme: Install-->\n', page);
    expect(out).toContain('[the guards](/guide/guards.md)');
    expect(out).toContain('[Redirects](/guide/install.md#what-is-retried)');
    // No page holds the quick start and no repository is named: the words stay, unlinked.
    expect(out).toContain('or the quick start.');
    expect(out).toContain('The example is `examples/a.ts`;');
    expect(out).toContain('[`@x/redis`](/api/redis.md)');
    expect(out).toContain('![chart](../../bench/charts/a.svg)');
    expect(out).toContain('Try [the playground](/playground.md) on [the site](/).');
    expect(out).toContain('## What is retried');
    expect(out).toContain('```sh\n## not a heading\n```');
    expect(out).not.toContain('Two commands');

    const guards = expand('<!--@readme: Guards: budget and breaker-->', join(root, 'docs/guide/guards.md'));
    expect(guards).toContain('<img src="../panel.png" width="10">');
  });

  it('links repository files on GitHub once the packages name their repository', () => {
    const root = repository(README, { 'guide/install.md': '<!--@readme: Install-->\n' });
    const expand = readmeIncludes({
      root,
      srcDir: join(root, 'docs'),
      repositoryUrl: 'https://github.com/owner/repo',
      apiPages: new Map(),
    });
    const out = expand('<!--@readme: Install-->', join(root, 'docs/guide/install.md'));
    expect(out).toContain('[`examples/a.ts`](https://github.com/owner/repo/blob/main/examples/a.ts)');
    expect(out).toContain('[`@x/redis`](https://github.com/owner/repo/tree/main/packages/redis)');
    expect(out).toContain('[the quick start](https://github.com/owner/repo#quick-start)');
  });

  it('fails the build, naming the heading, when the README no longer has a section a page includes', () => {
    const root = repository(README, { 'guide/gone.md': '<!--@readme: Renamed-->\n' });
    const expand = readmeIncludes({
      root,
      srcDir: join(root, 'docs'),
      repositoryUrl: undefined,
      apiPages: new Map(),
    });
    expect(() => expand('<!--@readme: Renamed-->', join(root, 'docs/guide/gone.md'))).toThrow(
      'docs/guide/gone.md includes the README section "Renamed", which README.md does not have',
    );
  });
});
