// The guides take their text from the README, which stays the one source of truth: a page says
// `<!--@readme: Running a fleet-->` on a line of its own, and the README section under that heading
// is put there at build time. A heading the README no longer has fails the build, naming it.
//
// What changes on the way in, so the text reads right on the site:
// - the section's own heading is dropped (the page has its title) and its sub-headings move up a
//   level (`### What is retried` becomes `## What is retried`);
// - `#anchor` links go to the page (and heading) of the site that holds that part of the README;
// - links to the site's own pages (`docs/playground.md`) stay on the site; links to other files of
//   the repository go to the package's API page, or to the file on GitHub when the packages name
//   their repository, or else become plain text;
// - images and `<img src>` point at the repository file, so Vite bundles it.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

/** A `##` or deeper heading of the README, and the lines up to the next heading of its level or above. */
interface Section {
  readonly level: number;
  readonly text: string;
  readonly slug: string;
  /** Lines of the section, its heading line excluded. */
  readonly lines: readonly string[];
}

/** Where the site shows one README heading. */
interface Placement {
  /** The page, as an absolute link to its Markdown file (`/guide/fetch.md`). */
  readonly page: string;
  /** The heading's anchor on that page; none for a section's own heading (the page is it). */
  readonly hash: string;
}

const MARKER = /^<!--@readme:\s*(.+?)\s*-->\s*$/;
const FENCE = /^\s*(```|~~~)/;

/**
 * GitHub's heading anchors (github-slugger): lower case, punctuation dropped, spaces to hyphens.
 * The site uses it for every heading, so an anchor that works in the README works here.
 */
export function slugify(text: string): string {
  return text
    .trim()
    .toLowerCase()
    .replace(/<[^>]*>/g, '')
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** The README's headings of level 2 and below, each with its lines (fenced code is not searched). */
export function readmeSections(readme: string): Section[] {
  const lines = readme.split('\n');
  const headings: Array<{ index: number; level: number; text: string }> = [];
  let fenced = false;
  lines.forEach((line, index) => {
    if (FENCE.test(line)) fenced = !fenced;
    const match = fenced ? null : /^(#{2,6})\s+(.+?)\s*#*\s*$/.exec(line);
    if (match?.[1] && match[2]) headings.push({ index, level: match[1].length, text: match[2] });
  });
  return headings.map((heading, i) => {
    const next = headings.slice(i + 1).find((later) => later.level <= heading.level);
    return {
      level: heading.level,
      text: heading.text,
      slug: slugify(heading.text.replace(/`/g, '')),
      lines: lines.slice(heading.index + 1, next?.index ?? lines.length),
    };
  });
}

/** Every Markdown page under `dir` (the generated API pages and dot-folders left out). */
function markdownPages(dir: string, base = dir): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (entry.name.startsWith('.') || entry.name === 'node_modules') return [];
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return relative(base, path) === 'api' ? [] : markdownPages(path, base);
    return entry.name.endsWith('.md') ? [path] : [];
  });
}

export interface ReadmeIncludeOptions {
  /** The repository's root. */
  readonly root: string;
  /** The site's source folder (docs/). */
  readonly srcDir: string;
  /** `https://github.com/owner/repo`, when the packages name their repository. */
  readonly repositoryUrl: string | undefined;
  /** The branch links to repository files point at. @default 'main' */
  readonly branch?: string;
  /** The packages that have an API page: `packages/<dir>` links go there. */
  readonly apiPages: ReadonlyMap<string, string>;
}

/**
 * Reads the README and every page's markers once, and returns the function that expands a page's
 * markers (for `markdown.config`).
 */
export function readmeIncludes(options: ReadmeIncludeOptions) {
  const { root, srcDir, repositoryUrl, branch = 'main', apiPages } = options;
  const readmePath = join(root, 'README.md');
  const sections = readmeSections(readFileSync(readmePath, 'utf8'));
  const byText = new Map(sections.map((section) => [section.text, section]));

  // Where each README anchor lands: the first page that includes the section holding it.
  const placements = new Map<string, Placement>();
  for (const file of markdownPages(srcDir)) {
    const page = `/${relative(srcDir, file).split('\\').join('/')}`;
    const included = readFileSync(file, 'utf8')
      .split('\n')
      .flatMap((line) => MARKER.exec(line)?.[1] ?? []);
    included.forEach((text, index) => {
      const section = byText.get(text);
      if (!section) return;
      const own = { page, hash: index === 0 ? '' : `#${section.slug}` };
      if (!placements.has(section.slug)) placements.set(section.slug, own);
      for (const sub of sections) {
        if (
          sub.level > section.level &&
          section.lines.includes(headingLine(sub)) &&
          !placements.has(sub.slug)
        ) {
          placements.set(sub.slug, { page, hash: `#${sub.slug}` });
        }
      }
    });
  }

  const sourceLink = (path: string): string | undefined => {
    const clean = path.replace(/\/$/, '');
    // The site's own pages: `docs/playground.md` is /playground.md here.
    const docsPage = /^docs\/(.+\.md)(#.*)?$/.exec(path);
    if (docsPage?.[1]) return `/${docsPage[1]}${docsPage[2] ?? ''}`;
    if (clean === 'docs') return '/';
    const pkg = /^packages\/([^/]+)(\/README\.md)?$/.exec(clean);
    if (pkg?.[1] && !pkg[2] && apiPages.has(pkg[1])) return apiPages.get(pkg[1]);
    if (repositoryUrl) {
      const isFile = /\.[a-z0-9]+$/i.test(clean);
      return `${repositoryUrl}/${isFile ? 'blob' : 'tree'}/${branch}/${clean}`;
    }
    if (pkg?.[1] && apiPages.has(pkg[1])) return apiPages.get(pkg[1]);
    return undefined;
  };

  /** A README link target, as seen from the site. `undefined`: no place for it, keep the text alone. */
  const target = (href: string): string | undefined => {
    if (/^[a-z][a-z0-9+.-]*:/i.test(href)) return href;
    if (href.startsWith('#')) {
      const placement = placements.get(href.slice(1));
      if (placement) return `${placement.page}${placement.hash}`;
      return repositoryUrl ? `${repositoryUrl}${href}` : undefined;
    }
    return sourceLink(href);
  };

  const rewriteLinks = (line: string, pageFile: string): string => {
    const asset = (path: string) => {
      if (/^[a-z][a-z0-9+.-]*:/i.test(path) || path.startsWith('/')) return path;
      const relativePath = relative(dirname(pageFile), join(root, path)).split('\\').join('/');
      return relativePath.startsWith('.') ? relativePath : `./${relativePath}`;
    };
    return (
      line
        // Images first, so the link rule below does not take `![alt](src)` for a link.
        .replace(
          /!\[([^\]]*)\]\(([^)\s]+)\)/g,
          (_all, alt: string, src: string) => `![${alt}](${asset(src)})`,
        )
        .replace(/(<img\b[^>]*\bsrc=")([^"]+)(")/g, (_all, open: string, src: string, close: string) => {
          return `${open}${asset(src)}${close}`;
        })
        .replace(/(?<!!)\[((?:[^\]`]|`[^`]*`)+)\]\(([^)\s]+)\)/g, (all, text: string, href: string) => {
          const to = target(href);
          if (to === undefined) return text;
          return to === href ? all : `[${text}](${to})`;
        })
    );
  };

  /** Expands the markers of one page's Markdown. */
  return function expand(markdown: string, pageFile: string): string {
    if (!markdown.includes('<!--@readme:')) return markdown;
    return markdown
      .split('\n')
      .flatMap((line) => {
        const text = MARKER.exec(line)?.[1];
        if (text === undefined) return [line];
        const section = byText.get(text);
        if (!section) {
          throw new Error(
            `${relative(root, pageFile)} includes the README section "${text}", which ${relative(root, readmePath)} does not have`,
          );
        }
        let fenced = false;
        return section.lines.map((body) => {
          if (FENCE.test(body)) fenced = !fenced;
          if (fenced || FENCE.test(body)) return body;
          const heading = /^(#{3,6})(\s.*)$/.exec(body);
          const lifted = heading?.[1] ? `${heading[1].slice(section.level - 1)}${heading[2]}` : body;
          return rewriteLinks(lifted, pageFile);
        });
      })
      .join('\n');
  };
}

const headingLine = (section: Section) => `${'#'.repeat(section.level)} ${section.text}`;
