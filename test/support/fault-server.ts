import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createNetServer, type Socket } from 'node:net';

/**
 * A real loopback HTTP server for retry tests, not a mock: each path follows a script of
 * responses and transport faults, and every request that arrives is recorded, so a test can assert
 * both what the client saw and what the server received.
 *
 * @example
 * const server = await startFaultServer();
 * server.script('/flaky', [{ fault: 'reset-before-headers' }, { status: 200, body: 'ok' }]);
 * await fetch(`${server.url}/flaky`).catch(() => undefined);
 * const response = await fetch(`${server.url}/flaky`);
 * server.requests('/flaky').length; // 2
 * await server.close();
 */

/** Responds normally, after an optional delay that starts once the request body has been read. */
export interface ResponseStep {
  status: number;
  /** @default { 'content-type': 'text/plain; charset=utf-8' } (merged; names are case-insensitive) */
  headers?: Record<string, string>;
  /** @default '' */
  body?: string;
  /** @default 0 */
  delayMs?: number;
}

/** Reads the whole request, then resets the connection (RST) without writing a byte. */
export interface ResetBeforeHeadersStep {
  fault: 'reset-before-headers';
}

/**
 * Resets the connection (RST) as soon as at least `afterBytes` bytes of the request body have
 * arrived: the "maybe sent" failure, where the server may already have acted on part of the body.
 * A request whose body is shorter than `afterBytes` (a GET, say) is reset once it has been read.
 */
export interface ResetMidRequestBodyStep {
  fault: 'reset-mid-request-body';
  /** @default 1 */
  afterBytes?: number;
}

/**
 * Sends the status line, headers (announcing a content-length larger than what follows) and
 * `partialBody`, then resets the connection (RST) `resetDelayMs` later.
 */
export interface ResetMidResponseBodyStep {
  fault: 'reset-mid-response-body';
  /** @default 200 */
  status?: number;
  /** @default 'partial' */
  partialBody?: string;
  /**
   * How long after the partial body has been written the RST is sent. The pause lets the client
   * read the bytes first: when data and RST are already queued together, libuv (so every Node
   * client) reads the data and then reports a clean end, not ECONNRESET. 0 resets at once, which
   * reproduces that case for a client in the same process.
   * @default 50
   */
  resetDelayMs?: number;
}

/**
 * Reads the request, then sends nothing for `ms`; if the client is still there, responds 200 `late`.
 * Without `ms` it waits until the client goes away or the server closes.
 */
export interface StallHeadersStep {
  fault: 'stall-headers';
  /** @default Infinity */
  ms?: number;
}

/**
 * Sends the status line and headers (with the body's content-length) at once, then nothing for `ms`,
 * then the body. Without `ms` the body never comes.
 */
export interface StallBodyStep {
  fault: 'stall-body';
  /** @default Infinity */
  ms?: number;
  /** @default 200 */
  status?: number;
  /** @default 'late' */
  body?: string;
}

/** Reads the request, then ends the connection cleanly (FIN) without a response. */
export interface CloseBeforeHeadersStep {
  fault: 'close-before-headers';
}

export type FaultStep =
  | ResetBeforeHeadersStep
  | ResetMidRequestBodyStep
  | ResetMidResponseBodyStep
  | StallHeadersStep
  | StallBodyStep
  | CloseBeforeHeadersStep;

export type Step = ResponseStep | FaultStep;

export interface ScriptOptions {
  /**
   * Whether the last step answers every request after the script has run out; if not, those get
   * 500 `script exhausted`.
   * @default true
   */
  repeatLast?: boolean;
}

/** One request as the server received it. Fields of a request still arriving fill in as it does. */
export interface AttemptRecord {
  /** 1-based arrival number since the server started; `clear()` does not reset it. */
  readonly seq: number;
  readonly method: string;
  /** The path without the query string: what scripts are keyed by. */
  readonly path: string;
  /** The request target as sent: path and query. */
  readonly url: string;
  /** Lower-cased names; the values of a repeated header joined with `, ` in arrival order. */
  readonly headers: Readonly<Record<string, string>>;
  /** Names and values alternating, as received. */
  readonly rawHeaders: readonly string[];
  /** The body bytes that arrived (all of them once `completed`). */
  readonly body: Buffer;
  readonly bodyText: string;
  /** `performance.timeOrigin + performance.now()` when the request head was parsed, in ms. */
  readonly receivedAt: number;
  /** 0-based count of earlier requests to this path since it was last scripted. */
  readonly attempt: number;
  /** Index of the script step that answered; -1 when none did (unscripted, static, exhausted). */
  readonly step: number;
  /** Whether the whole request body was received. */
  readonly completed: boolean;
}

export interface FaultServer {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  readonly port: number;
  /** Every request that arrived, in arrival order. The same array for the server's lifetime. */
  readonly log: readonly AttemptRecord[];
  /**
   * The n-th request to `path` (query string ignored) gets `steps[n]`. Scripting a path again
   * replaces its script and restarts its count.
   */
  script(path: string, steps: readonly Step[], options?: ScriptOptions): void;
  /** Serves `body` with status 200 at `path` to any method, where no script is set for it. */
  static(path: string, body: string, contentType: string): void;
  /** The requests to `path`, in arrival order. */
  requests(path: string): AttemptRecord[];
  /** An `http://127.0.0.1:<port>` URL where nothing listens. */
  refusedUrl(): Promise<string>;
  /** Forgets the log and every script; static paths stay. */
  clear(): void;
  /** Stops listening, destroys every open connection (stalled ones too) and clears every timer. */
  close(): Promise<void>;
}

/** RFC 9110 §5.6.7: the IMF-fixdate form, which `Date#toUTCString` produces. */
export function httpDate(epochMs: number): string {
  return new Date(epochMs).toUTCString();
}

// setTimeout's delay is a signed 32-bit number; anything larger fires at once.
const MAX_TIMER_MS = 2_147_483_647;
const DEFAULT_CONTENT_TYPE = 'text/plain; charset=utf-8';

interface Script {
  readonly steps: readonly Step[];
  readonly repeatLast: boolean;
  count: number;
}

interface MutableRecord {
  seq: number;
  method: string;
  path: string;
  url: string;
  headers: Record<string, string>;
  rawHeaders: string[];
  readonly body: Buffer;
  readonly bodyText: string;
  receivedAt: number;
  attempt: number;
  step: number;
  completed: boolean;
}

interface Exchange {
  readonly res: ServerResponse;
  readonly socket: Socket;
}

export async function startFaultServer(): Promise<FaultServer> {
  const scripts = new Map<string, Script>();
  const statics = new Map<string, { body: string; contentType: string }>();
  const log: MutableRecord[] = [];
  const sockets = new Set<Socket>();
  const timers = new Set<ReturnType<typeof setTimeout>>();
  let seq = 0;
  let closing: Promise<void> | undefined;

  const server: Server = createServer({ noDelay: true }, (req, res) => {
    try {
      handle(req, res);
    } catch (error) {
      fail(res, error);
    }
  });

  server.on('connection', (socket: Socket) => {
    if (closing) {
      socket.destroy();
      return;
    }
    sockets.add(socket);
    // A client that vanishes mid-way must not crash the server; the request/response see it too.
    socket.on('error', ignore);
    socket.on('close', () => sockets.delete(socket));
  });

  /** Runs `fn` after `ms` unless the exchange ends first or the server closes. */
  function after(exchange: Exchange, ms: number, fn: () => void): void {
    if (ms === Number.POSITIVE_INFINITY) return; // wait for the client or close() to end it
    const timer = setTimeout(() => {
      timers.delete(timer);
      exchange.res.off('close', cancel);
      if (writable(exchange)) fn();
    }, ms);
    const cancel = () => {
      clearTimeout(timer);
      timers.delete(timer);
    };
    timers.add(timer);
    exchange.res.once('close', cancel);
  }

  function writable({ res, socket }: Exchange): boolean {
    return !closing && !socket.destroyed && !res.destroyed && !res.writableEnded;
  }

  function handle(req: IncomingMessage, res: ServerResponse): void {
    req.on('error', ignore);
    res.on('error', ignore);
    const socket = req.socket;
    if (closing) {
      socket.destroy();
      return;
    }

    const url = req.url ?? '/';
    const path = pathOf(url);
    const script = scripts.get(path);
    const attempt = script ? script.count++ : 0;
    const stepIndex = script
      ? attempt < script.steps.length
        ? attempt
        : script.repeatLast
          ? script.steps.length - 1
          : -1
      : -1;

    const chunks: Buffer[] = [];
    let size = 0;
    let joined: Buffer | undefined;
    const bodyNow = (): Buffer => {
      if (!joined || joined.length !== size) joined = Buffer.concat(chunks, size);
      return joined;
    };
    const record: MutableRecord = {
      seq: ++seq,
      method: req.method ?? 'GET',
      path,
      url,
      headers: joinHeaders(req.rawHeaders),
      rawHeaders: [...req.rawHeaders],
      get body() {
        return bodyNow();
      },
      get bodyText() {
        return bodyNow().toString('utf8');
      },
      receivedAt: performance.timeOrigin + performance.now(),
      attempt,
      step: stepIndex,
      completed: false,
    };
    log.push(record);

    const step = script && stepIndex >= 0 ? script.steps[stepIndex] : undefined;
    const resetAt =
      step && 'fault' in step && step.fault === 'reset-mid-request-body' ? (step.afterBytes ?? 1) : undefined;

    const bodyRead = new Promise<void>((resolve) => {
      req.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        size += chunk.length;
        if (resetAt !== undefined && size >= resetAt) reset(socket);
      });
      req.on('end', () => {
        record.completed = true;
        resolve();
      });
      // Never settles for a request cut short: whatever waited on its body has nothing to answer.
    });
    const exchange: Exchange = { res, socket };

    if (resetAt === 0) {
      reset(socket);
      return;
    }
    void bodyRead.then(() => {
      try {
        if (!writable(exchange)) return;
        if (script && !step) respond(res, 500, { 'content-type': DEFAULT_CONTENT_TYPE }, 'script exhausted');
        else if (step) play(exchange, step);
        else serveUnscripted(res, path);
      } catch (error) {
        fail(res, error);
      }
    });
  }

  function serveUnscripted(res: ServerResponse, path: string): void {
    const asset = statics.get(path);
    if (asset) respond(res, 200, { 'content-type': asset.contentType }, asset.body);
    else respond(res, 404, { 'content-type': DEFAULT_CONTENT_TYPE }, `no script for ${path}`);
  }

  /** Acts out `step` for a request whose body has been read completely. */
  function play(exchange: Exchange, step: Step): void {
    const { res, socket } = exchange;
    if (!('fault' in step)) {
      const send = () => respond(res, step.status, withContentType(step.headers), step.body ?? '');
      if (step.delayMs) after(exchange, step.delayMs, send);
      else send();
      return;
    }
    switch (step.fault) {
      case 'reset-before-headers':
      case 'reset-mid-request-body': // the body was shorter than afterBytes
        reset(socket);
        return;
      case 'reset-mid-response-body': {
        const partial = Buffer.from(step.partialBody ?? 'partial', 'utf8');
        res.writeHead(step.status ?? 200, {
          'content-type': DEFAULT_CONTENT_TYPE,
          // Announce more than will come, so the client knows the body was cut short.
          'content-length': String(partial.length + 1024),
        });
        // Headers first, even where no body is allowed (HEAD), then reset only once the bytes are in
        // the kernel: an RST discards whatever is still queued.
        res.flushHeaders();
        res.write(partial, () => {
          const delay = step.resetDelayMs ?? 50;
          if (delay === 0) reset(socket);
          else after(exchange, delay, () => reset(socket));
        });
        return;
      }
      case 'stall-headers':
        after(exchange, step.ms ?? Number.POSITIVE_INFINITY, () =>
          respond(res, 200, { 'content-type': DEFAULT_CONTENT_TYPE }, 'late'),
        );
        return;
      case 'stall-body': {
        const body = Buffer.from(step.body ?? 'late', 'utf8');
        res.writeHead(step.status ?? 200, {
          'content-type': DEFAULT_CONTENT_TYPE,
          'content-length': String(body.length),
        });
        res.flushHeaders();
        after(exchange, step.ms ?? Number.POSITIVE_INFINITY, () => res.end(body));
        return;
      }
      case 'close-before-headers':
        socket.end();
        return;
    }
  }

  /** Answers 500 with the error's message when a step could not be played; never throws. */
  function fail(res: ServerResponse, error: unknown): void {
    const message = error instanceof Error ? error.message : String(error);
    try {
      if (!res.headersSent && !res.destroyed && !closing) {
        respond(res, 500, { 'content-type': DEFAULT_CONTENT_TYPE }, `[fault-server] ${message}`);
      } else {
        res.destroy();
      }
    } catch {
      res.destroy();
    }
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  server.on('error', ignore);
  const address = server.address();
  if (address === null || typeof address === 'string') {
    throw new Error(`[fault-server] Expected a TCP address, got ${String(address)}`);
  }
  const port = address.port;

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    log,
    script(path, steps, options = {}) {
      checkPath(path);
      if (steps.length === 0) throw new TypeError('[fault-server] Expected steps to be non-empty, got []');
      steps.forEach(checkStep);
      scripts.set(path, { steps: [...steps], repeatLast: options.repeatLast ?? true, count: 0 });
    },
    static(path, body, contentType) {
      checkPath(path);
      statics.set(path, { body, contentType });
    },
    requests(path) {
      return log.filter((record) => record.path === path);
    },
    refusedUrl,
    clear() {
      log.length = 0;
      scripts.clear();
    },
    close() {
      closing ??= new Promise<void>((resolve) => {
        for (const timer of timers) clearTimeout(timer);
        timers.clear();
        // The callback waits for every connection to end, which the destroys below make prompt.
        server.close(() => resolve());
        server.closeAllConnections();
        for (const socket of sockets) socket.destroy();
        sockets.clear();
      });
      return closing;
    },
  };
}

/** Binds a port, notes it and frees it: nothing listens there afterwards. */
async function refusedUrl(): Promise<string> {
  const probe = createNetServer();
  const port = await new Promise<number>((resolve, reject) => {
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      if (address === null || typeof address === 'string') {
        reject(new Error(`[fault-server] Expected a TCP address, got ${String(address)}`));
      } else {
        resolve(address.port);
      }
    });
  });
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

function respond(res: ServerResponse, status: number, headers: Record<string, string>, body: string): void {
  res.writeHead(status, headers);
  res.end(body);
}

/** Destroys the socket with an RST where the platform allows, a plain close otherwise. */
function reset(socket: Socket): void {
  if (socket.destroyed) return;
  try {
    socket.resetAndDestroy();
  } catch {
    socket.destroy();
  }
}

function withContentType(headers: Record<string, string> = {}): Record<string, string> {
  const hasType = Object.keys(headers).some((name) => name.toLowerCase() === 'content-type');
  return hasType ? headers : { 'content-type': DEFAULT_CONTENT_TYPE, ...headers };
}

function joinHeaders(raw: readonly string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = (raw[i] ?? '').toLowerCase();
    const value = raw[i + 1] ?? '';
    const seen = headers[name];
    headers[name] = seen === undefined ? value : `${seen}, ${value}`;
  }
  return headers;
}

function pathOf(url: string): string {
  const end = url.search(/[?#]/);
  return end === -1 ? url : url.slice(0, end);
}

function ignore(): void {}

function checkPath(path: string): void {
  if (!path.startsWith('/') || /[?#]/.test(path)) {
    throw new TypeError(
      `[fault-server] Expected path to start with "/" and have no query, got ${JSON.stringify(path)}`,
    );
  }
}

function checkStep(step: Step, index: number): void {
  const at = `steps[${index}]`;
  if ('fault' in step) {
    switch (step.fault) {
      case 'reset-mid-request-body':
        checkCount(`${at}.afterBytes`, step.afterBytes, Number.MAX_SAFE_INTEGER, false);
        return;
      case 'reset-mid-response-body':
        checkStatus(`${at}.status`, step.status);
        checkCount(`${at}.resetDelayMs`, step.resetDelayMs, MAX_TIMER_MS, false);
        return;
      case 'stall-headers':
        checkCount(`${at}.ms`, step.ms, MAX_TIMER_MS, true);
        return;
      case 'stall-body':
        checkCount(`${at}.ms`, step.ms, MAX_TIMER_MS, true);
        checkStatus(`${at}.status`, step.status);
        return;
      case 'reset-before-headers':
      case 'close-before-headers':
        return;
      default:
        throw new TypeError(
          `[fault-server] Expected ${at}.fault to be a known fault, got ${JSON.stringify((step as { fault: unknown }).fault)}`,
        );
    }
  }
  checkStatus(`${at}.status`, step.status);
  checkCount(`${at}.delayMs`, step.delayMs, MAX_TIMER_MS, false);
}

function checkStatus(name: string, status: number | undefined): void {
  if (status === undefined) return;
  // Node writes any 3-digit status; 1xx would not end the exchange, so it is no final answer.
  if (!Number.isInteger(status) || status < 200 || status > 999) {
    throw new RangeError(`[fault-server] Expected ${name} to be an integer from 200 to 999, got ${status}`);
  }
}

function checkCount(name: string, value: number | undefined, max: number, infinityAllowed: boolean): void {
  if (value === undefined) return;
  if (infinityAllowed && value === Number.POSITIVE_INFINITY) return;
  if (!Number.isInteger(value) || value < 0 || value > max) {
    throw new RangeError(
      `[fault-server] Expected ${name} to be an integer from 0 to ${max}${infinityAllowed ? ' or Infinity' : ''}, got ${value}`,
    );
  }
}
