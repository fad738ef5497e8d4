import { createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** Where a browser under test sends every request for a host beyond loopback, as its HTTP proxy. */
export interface OutboundSink {
  readonly port: number;
  /** What was asked for, in order: `GET http://host/path` or `CONNECT host:443`. */
  readonly requests: readonly string[];
  close(): Promise<void>;
}

/**
 * An HTTP proxy on 127.0.0.1 that forwards nothing: it notes each request and refuses it (403,
 * and a refused tunnel for HTTPS), so a test can tell that the browser asked for nothing beyond
 * loopback, and nothing asked for ever leaves the machine.
 */
export async function startOutboundSink(): Promise<OutboundSink> {
  const requests: string[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((request, response) => {
    requests.push(`${request.method} ${request.url}`);
    response.writeHead(403, { connection: 'close' }).end();
  });
  server.on('connect', (request, socket: Socket) => {
    requests.push(`CONNECT ${request.url}`);
    socket.end('HTTP/1.1 403 Forbidden\r\nconnection: close\r\n\r\n');
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
