import { afterAll, beforeAll, beforeEach } from 'vitest';
import { type FaultServer, startFaultServer } from './fault-server';

/**
 * One fault server for a test file: started before its tests, closed after them, its log and
 * scripts cleared before each test. Returns a stand-in that forwards to the running server.
 */
export function useFaultServer(): FaultServer {
  let current: FaultServer | undefined;
  const running = (): FaultServer => {
    if (!current) throw new Error('[fault-server] used outside a test: the server starts in beforeAll');
    return current;
  };
  beforeAll(async () => {
    current = await startFaultServer();
  });
  afterAll(async () => {
    await current?.close();
  });
  beforeEach(() => running().clear());
  return {
    get url() {
      return running().url;
    },
    get port() {
      return running().port;
    },
    get log() {
      return running().log;
    },
    script: (...args) => running().script(...args),
    static: (...args) => running().static(...args),
    requests: (...args) => running().requests(...args),
    refusedUrl: () => running().refusedUrl(),
    clear: () => running().clear(),
    close: () => running().close(),
  };
}
