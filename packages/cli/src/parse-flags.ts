import { parseArgs } from 'node:util';
import { UsageError } from './usage-error';

/** A command's option: a flag that takes a value (`--base 1s`) or a switch (`--help`). */
export interface FlagSpec {
  readonly type: 'string' | 'boolean';
  readonly short?: string;
}

/** The values read for each option: strings for value flags, `true` for switches given. */
export type FlagValues<S extends Readonly<Record<string, FlagSpec>>> = {
  -readonly [K in keyof S]?: S[K]['type'] extends 'boolean' ? boolean : string;
};

/**
 * Reads a command's flags with `node:util` parseArgs, then checks them here so every mistake is a
 * {@link UsageError} with a message a user can act on. parseArgs runs non-strict because strict
 * mode refuses `--retries -1` as "ambiguous"; reading the value lets the command say what it
 * expected instead. The last of a repeated flag wins.
 */
export function parseFlags<S extends Readonly<Record<string, FlagSpec>>>(
  args: readonly string[],
  specs: S,
  command: string,
): { values: FlagValues<S>; positionals: string[] } {
  const { tokens } = parseArgs({
    args: [...args],
    options: specs,
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  const values: Record<string, string | boolean> = {};
  const positionals: string[] = [];
  for (const token of tokens) {
    if (token.kind === 'positional') {
      positionals.push(token.value);
    } else if (token.kind === 'option') {
      const spec = Object.hasOwn(specs, token.name) ? specs[token.name] : undefined;
      if (spec === undefined) throw new UsageError(unknownOption(token.rawName, specs, command));
      if (spec.type === 'string') {
        if (token.value === undefined) throw new UsageError(`Option '${token.rawName}' needs a value`);
        values[token.name] = token.value;
      } else {
        if (token.value !== undefined) throw new UsageError(`Option '${token.rawName}' takes no value`);
        values[token.name] = true;
      }
    }
  }
  return { values: values as FlagValues<S>, positionals };
}

function unknownOption(rawName: string, specs: Readonly<Record<string, FlagSpec>>, command: string): string {
  // Library options are camelCase (maxDelay); their flags are kebab-case (--max-delay).
  const kebab = rawName.replace(/^--/, '').replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`);
  const hint =
    rawName.startsWith('--') && Object.hasOwn(specs, kebab) && `--${kebab}` !== rawName
      ? ` (did you mean '--${kebab}'?)`
      : '';
  return `Unknown option '${rawName}'${hint}: see '${command} --help'`;
}
