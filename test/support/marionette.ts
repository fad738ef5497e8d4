import { createConnection, type Socket } from 'node:net';

/**
 * A client of Marionette, Firefox's built-in remote protocol (what geckodriver drives): each
 * message is `length:JSON`, a command `[0, id, name, parameters]`, its response
 * `[1, id, error, result]`, and the server greets first with `{ marionetteProtocol: 3 }`.
 * https://firefox-source-docs.mozilla.org/testing/marionette/Protocol.html
 *
 * The tests use it rather than WebDriver BiDi because BiDi in Firefox does not reach extension
 * pages yet, and the panel is one.
 */
export class Marionette {
  readonly #socket: Socket;
  readonly #pending = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
  #buffer = Buffer.alloc(0);
  #nextId = 1;
  #closed: Error | undefined;

  private constructor(socket: Socket) {
    this.#socket = socket;
  }

  /** Connects to Marionette on 127.0.0.1:`port` and waits for its greeting. */
  static connect(port: number): Promise<Marionette> {
    return new Promise((resolve, reject) => {
      const socket = createConnection(port, '127.0.0.1');
      const client = new Marionette(socket);
      let greeted = false;
      socket.on('data', (chunk) => {
        client.#buffer = Buffer.concat([client.#buffer, chunk]);
        for (let packet = client.#read(); packet !== undefined; packet = client.#read()) {
          if (!greeted) {
            greeted = true;
            resolve(client);
          } else {
            client.#receive(packet);
          }
        }
      });
      const fail = (error: Error) => {
        client.#closed = error;
        for (const { reject: rejectCommand } of client.#pending.values()) rejectCommand(error);
        client.#pending.clear();
        if (!greeted) reject(error);
      };
      socket.on('error', fail);
      socket.on('close', () => fail(new Error('[Marionette] the connection to Firefox closed')));
    });
  }

  /** The next whole packet in the buffer, parsed, if one has arrived. */
  #read(): unknown {
    const colon = this.#buffer.indexOf(':');
    if (colon < 0) return undefined;
    const length = Number(this.#buffer.subarray(0, colon).toString('latin1'));
    if (this.#buffer.length < colon + 1 + length) return undefined;
    const body = this.#buffer.subarray(colon + 1, colon + 1 + length).toString('utf8');
    this.#buffer = this.#buffer.subarray(colon + 1 + length);
    return JSON.parse(body);
  }

  #receive(packet: unknown): void {
    if (!Array.isArray(packet) || packet[0] !== 1) return;
    const [, id, error, result] = packet as [1, number, { error: string; message: string } | null, unknown];
    const pending = this.#pending.get(id);
    this.#pending.delete(id);
    if (!pending) return;
    if (error) pending.reject(new Error(`[Marionette] ${error.error}: ${error.message}`));
    else pending.resolve(result);
  }

  /** Sends a command and resolves with its result, or rejects with the error Firefox named. */
  command<T = unknown>(name: string, parameters: Record<string, unknown> = {}): Promise<T> {
    if (this.#closed) return Promise.reject(this.#closed);
    const id = this.#nextId++;
    const body = JSON.stringify([0, id, name, parameters]);
    return new Promise<T>((resolve, reject) => {
      this.#pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      this.#socket.write(`${Buffer.byteLength(body)}:${body}`);
    });
  }

  close(): void {
    this.#socket.destroy();
  }
}
