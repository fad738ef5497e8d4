import { describe, expect, it } from 'vitest';
import { exceedsUtf8, utf8Length } from './byte-length';

const encoded = (text: string) => new TextEncoder().encode(text).length;

describe('utf8Length', () => {
  it.each([
    ['', 0],
    ['ascii', 5],
    ['é', 2],
    ['€', 3],
    ['😀', 4],
    ['a€😀é', 10],
    ['\ud800', 3],
    ['\udc00x', 4],
    ['\ud800\ud800', 6],
  ])('counts %j as %i bytes, as TextEncoder does', (text, bytes) => {
    expect(utf8Length(text)).toBe(bytes);
    expect(encoded(text)).toBe(bytes);
  });

  it('stops counting once past a limit', () => {
    expect(utf8Length('€'.repeat(1000), 10)).toBeGreaterThan(10);
    expect(utf8Length('€'.repeat(1000), 10)).toBeLessThan(20);
  });
});

describe('exceedsUtf8', () => {
  it('decides by the bytes, however many code units they take', () => {
    expect(exceedsUtf8('a'.repeat(300), 300)).toBe(false);
    expect(exceedsUtf8('a'.repeat(301), 300)).toBe(true);
    expect(exceedsUtf8('€'.repeat(100), 300)).toBe(false);
    expect(exceedsUtf8('€'.repeat(101), 300)).toBe(true);
    expect(exceedsUtf8(`${'a'.repeat(150)}${'😀'.repeat(37)}`, 300)).toBe(false);
    expect(exceedsUtf8(`${'a'.repeat(150)}${'😀'.repeat(38)}`, 300)).toBe(true);
  });
});
