import { afterEach, describe, expect, it, vi } from 'vitest';
import { startRedisServer } from '../redis/redis-server';
import { requireChromium } from '../support/chromium';
import { Firefox, requireFirefox } from '../support/firefox';
import { findProgram, type LookupContext, requireProgram, TEST_PROGRAMS } from '../support/test-programs';

// A test that needs Chromium, Firefox or redis-server fails (never skips) on a machine without
// it, with a message that names what is missing, where it looked, and how to get it.
const nothing = (platform: NodeJS.Platform, env: NodeJS.ProcessEnv = {}): LookupContext => ({
  env: { PATH: '/usr/local/bin:/usr/bin', ...env },
  platform,
  isExecutable: () => false,
});

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('the message for a missing program', () => {
  it('names Chromium, where it was looked for, and the fix', () => {
    expect(() => requireProgram(TEST_PROGRAMS.chromium, nothing('linux'))).toThrow(
      'chromium is not installed (looked for /usr/bin/chromium): run `pnpm bootstrap`, ' +
        "or install Debian's chromium (macOS: `brew install --cask chromium`), " +
        'or set RETRYLINE_CHROMIUM to its path. The browser and extension tests need it.',
    );
  });

  it('names Firefox ESR, and on macOS the app Homebrew installs', () => {
    expect(() => requireProgram(TEST_PROGRAMS['firefox-esr'], nothing('darwin'))).toThrow(
      'firefox-esr is not installed (looked for /Applications/Firefox.app/Contents/MacOS/firefox): ' +
        "run `pnpm bootstrap`, or install Debian's firefox-esr (macOS: `brew install --cask firefox@esr`), " +
        'or set RETRYLINE_FIREFOX to its path. The Firefox extension tests need it.',
    );
  });

  it('names redis-server, looked for on PATH', () => {
    expect(() => requireProgram(TEST_PROGRAMS['redis-server'], nothing('linux'))).toThrow(
      'redis-server is not installed (looked for redis-server on PATH): run `pnpm bootstrap`, ' +
        "or install Debian's redis-server (macOS: `brew install redis`), " +
        "or set REDIS_SERVER to its path. The Redis store's tests need it.",
    );
  });

  it('names the variable when it points at nothing, and looks nowhere else', () => {
    const context = nothing('linux', { RETRYLINE_CHROMIUM: '/opt/chrome-dev/chrome' });
    expect(() => requireProgram(TEST_PROGRAMS.chromium, context)).toThrow(
      'chromium is not installed (looked for /opt/chrome-dev/chrome (RETRYLINE_CHROMIUM)): run `pnpm bootstrap`',
    );
    const seen: string[] = [];
    const isExecutable = (path: string) => {
      seen.push(path);
      return false;
    };
    findProgram(TEST_PROGRAMS.chromium, { ...context, isExecutable });
    expect(seen).toEqual(['/opt/chrome-dev/chrome']);
  });
});

describe('finding a program', () => {
  it('takes the first executable on PATH for a bare name', () => {
    const context: LookupContext = {
      env: { PATH: '/home/me/bin:/usr/local/bin:/usr/bin' },
      platform: 'linux',
      isExecutable: (path) => path === '/usr/local/bin/redis-server' || path === '/usr/bin/redis-server',
    };
    expect(requireProgram(TEST_PROGRAMS['redis-server'], context)).toBe('/usr/local/bin/redis-server');
  });

  it("takes Debian's path on Linux, the app's on macOS", () => {
    const everywhere = (platform: NodeJS.Platform): LookupContext => ({
      env: {},
      platform,
      isExecutable: () => true,
    });
    expect(requireProgram(TEST_PROGRAMS.chromium, everywhere('linux'))).toBe('/usr/bin/chromium');
    expect(requireProgram(TEST_PROGRAMS.chromium, everywhere('darwin'))).toBe(
      '/Applications/Chromium.app/Contents/MacOS/Chromium',
    );
  });
});

describe('the suites that need a missing program fail at once, with that message', () => {
  it('Chromium: requireChromium, which every browser suite calls in beforeAll', () => {
    vi.stubEnv('RETRYLINE_CHROMIUM', '/nonexistent/chromium');
    expect(() => requireChromium()).toThrow(
      'chromium is not installed (looked for /nonexistent/chromium (RETRYLINE_CHROMIUM)): run `pnpm bootstrap`',
    );
  });

  it('Firefox: requireFirefox, and Firefox.launch before it starts anything', async () => {
    vi.stubEnv('RETRYLINE_FIREFOX', '/nonexistent/firefox-esr');
    expect(() => requireFirefox()).toThrow('firefox-esr is not installed');
    await expect(Firefox.launch()).rejects.toThrow(
      'firefox-esr is not installed (looked for /nonexistent/firefox-esr (RETRYLINE_FIREFOX)): run `pnpm bootstrap`',
    );
  });

  it('redis-server: startRedisServer, which useRedisServer calls in beforeAll', async () => {
    vi.stubEnv('REDIS_SERVER', '/nonexistent/redis-server');
    await expect(startRedisServer()).rejects.toThrow(
      'redis-server is not installed (looked for /nonexistent/redis-server (REDIS_SERVER)): run `pnpm bootstrap`',
    );
  });
});
