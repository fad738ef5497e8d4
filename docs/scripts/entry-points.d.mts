export declare const ROOT: string;
export declare const DOCUMENTED_PACKAGES: readonly string[];

export interface EntryPoint {
  /** What users import: `@retryline/core/adapter`. */
  readonly specifier: string;
  /** `core/adapter` */
  readonly name: string;
  /** The API page under docs/api/: `core.adapter`. */
  readonly page: string;
  /** The source file, relative to the repository. */
  readonly file: string;
  /** The package's description. */
  readonly description: string;
}

/** Every documented entry point (see entry-points.mjs). */
export declare function entryPoints(): EntryPoint[];
