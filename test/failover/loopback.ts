import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { afterEach } from 'vitest';

/** One request a {@link Service} received, and how its exchange ended. */
export interface Received {
  readonly method: string;
  /** The request target as sent: path and query. */
  readonly url: string;
  /** Lower-cased names. */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The whole body, once it has arrived (`''` until then). */
  body: string;
  /** Whether the connection closed before the response was written out. */
  closedEarly: boolean | undefined;
  /** Resolves once the exchange has ended, either way. */
  readonly closed: Promise<void>;
}

/** Answers a request whose body has been read; `received` is its record, already logged. */
export type Handler = (req: IncomingMessage, res: ServerResponse, received: Received) => void;

/** A loopback HTTP server with its own handler, logging what it receives. */
export interface Service {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  readonly received: readonly Received[];
  close(): Promise<void>;
}

/**
 * Starts a real loopback server answering with `handler`, for the scenarios the fault server's
 * scripts cannot play (state shared between servers, a socket watched until it closes).
 */
export async function startService(handler: Handler): Promise<Service> {
  const received: Received[] = [];
  const sockets = new Set<Socket>();
  const server = createServer({ noDelay: true }, (req, res) => {
    req.on('error', () => {});
    res.on('error', () => {});
    let ended: () => void = () => {};
    const record: Received = {
      method: req.method ?? 'GET',
      url: req.url ?? '/',
      headers: req.headers,
      body: '',
      closedEarly: undefined,
      closed: new Promise<void>((resolve) => {
        ended = resolve;
      }),
    };
    received.push(record);
    res.on('close', () => {
      record.closedEarly = !res.writableFinished;
      ended();
    });
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      record.body = Buffer.concat(chunks).toString('utf8');
      if (!res.destroyed) handler(req, res, record);
    });
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('[loopback] Expected a TCP address');
  let closing: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${address.port}`,
    received,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
        for (const socket of sockets) socket.destroy();
      });
      return closing;
    },
  };
}

/** Starts services for the current test and closes each after it, passed or failed. */
export function useServices(): (handler: Handler) => Promise<Service> {
  const running: Service[] = [];
  afterEach(async () => {
    await Promise.all(running.splice(0).map((service) => service.close()));
  });
  return async (handler) => {
    const service = await startService(handler);
    running.push(service);
    return service;
  };
}

/** Answers `status` with a text body. */
export function answer(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, {
    'content-type': 'text/plain; charset=utf-8',
    'content-length': Buffer.byteLength(body),
  });
  res.end(body);
}
