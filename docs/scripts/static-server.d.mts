export interface StaticServer {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  close(): Promise<void>;
}

/** Serves a built site from `dir` on a free port of 127.0.0.1 (see static-server.mjs). */
export function serveStatic(dir: string): Promise<StaticServer>;
