import { describe, expect, it } from 'vitest';
import { readTheme } from './theme-file';

// The breaker's states are told apart by colour on its lane (and by text where a band has room):
// WCAG 2.2's 1.4.11 asks 3:1 for such graphics against what is next to them, and 1.4.3 4.5:1 for
// small text. Read from the stylesheet's own variables, for both themes.

/** The custom properties declared in the block that opens with `selector {`. */
function variables(selector: string): Record<string, string> {
  const at = css.indexOf(`${selector} {`);
  if (at < 0) throw new Error(`theme.css has no ${selector} block`);
  const body = css.slice(at, css.indexOf('}', at));
  return Object.fromEntries(
    [...body.matchAll(/(--rl-[\w-]+):\s*([^;]+);/g)].map((m) => [m[1], m[2]?.trim()]),
  );
}

function luminance(hex: string): number {
  const match = /^#([\da-f]{6})$/i.exec(hex);
  if (!match?.[1]) throw new Error(`${hex} is not a #rrggbb colour`);
  const channel = (i: number) => {
    const c = Number.parseInt(match[1]?.slice(i, i + 2) ?? '', 16) / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * channel(0) + 0.7152 * channel(2) + 0.0722 * channel(4);
}

function contrast(a: string, b: string): number {
  const [high, low] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (high + 0.05) / (low + 0.05);
}

const css = await readTheme();

const themes = {
  light: variables(':root'),
  dark: variables(':root[data-theme="dark"]'),
};

describe.each(Object.entries(themes))('the %s theme’s breaker lane', (_, v) => {
  const colour = (name: string) => v[`--rl-${name}`] ?? '';

  it.each([
    ['band-open', 'band-closed', 3],
    ['band-half-open', 'band-closed', 3],
    ['band-open', 'bg', 3],
    ['band-half-open', 'bg', 3],
    // The state's name, on its band.
    ['band-fg', 'band-open', 4.5],
    ['band-fg', 'band-half-open', 4.5],
    // The budget's sparkline, against the panel.
    ['accent', 'bg', 3],
  ] as const)('%s against %s: at least %d:1', (a, b, least) => {
    expect(contrast(colour(a), colour(b))).toBeGreaterThanOrEqual(least);
  });
});

/** The variable a rule's `property` takes its colour from: `outline: 1px dashed var(--rl-fg)` → `fg`. */
function colourOf(selector: string, property: string): string {
  const at = css.indexOf(`${selector} {`);
  if (at < 0) throw new Error(`theme.css has no ${selector} rule`);
  const body = css.slice(at, css.indexOf('}', at));
  const match = new RegExp(`\\b${property}:[^;]*var\\(--rl-([\\w-]+)\\)`).exec(body);
  if (!match?.[1]) throw new Error(`${selector} takes no ${property} colour from a variable`);
  return match[1];
}

// An attempt the panel's fault injection answered is told apart by its dashed outline, drawn on the
// row's background (offset from the bar): a graphic, so 3:1 against every background a row has.
describe.each(Object.entries(themes))('the %s theme’s injected-attempt outline', (_, v) => {
  const outline = colourOf('.rl-bar--injected', 'outline');

  it.each(['bg', 'bg-alt', 'bg-hover', 'bg-selected'])('against %s: at least 3:1', (background) => {
    expect(contrast(v[`--rl-${outline}`] ?? '', v[`--rl-${background}`] ?? '')).toBeGreaterThanOrEqual(3);
  });
});

it('gives the system’s dark preference the same colours as DevTools’ dark theme', () => {
  expect(variables(':root:not([data-theme="light"])')).toEqual(themes.dark);
});
