// The part of web-ext's Node API the tests call (the package ships no types):
// https://extensionworkshop.com/documentation/develop/web-ext-command-reference/#web-ext-lint
// and https://github.com/mozilla/web-ext#using-web-ext-in-nodejs-code
declare module 'web-ext' {
  /** One finding of addons-linter, which `web-ext lint` runs. */
  export interface LintMessage {
    readonly code: string;
    readonly message: string;
    readonly description?: string;
    readonly file?: string;
    readonly line?: number;
    readonly column?: number;
  }
  export interface LintResult {
    readonly errors: readonly LintMessage[];
    readonly warnings: readonly LintMessage[];
    readonly notices: readonly LintMessage[];
  }
  export const cmd: {
    lint(
      params: { readonly sourceDir: string; readonly output?: 'none' | 'json' | 'text' },
      options?: { readonly shouldExitProgram?: boolean },
    ): Promise<LintResult>;
  };
}
